/** `audit` rules: inter-procedural and cross-contract checks steered by the threat model. */
import { unwrap } from '../ast.ts';
import { baseIdentifier, type FunctionInfo } from '../model.ts';
import { defineRule, headerLines, type SolidityRule } from './rule.ts';

const crossFunctionReentrancy = defineRule(
  {
    id: 'sol.reentrancy.cross-function',
    title: 'Cross-function reentrancy',
    description:
      'While an external call is in flight, the state it will update later is stale — and other public functions read that state to move value or update balances. A malicious callee can re-enter through them instead of through the calling function.',
    remediation:
      'Finish every state update before the external call, and protect all functions that share the state with one reentrancy lock.',
    severity: 'high',
    confidence: 'medium',
    category: 'reentrancy',
    swc: 'SWC-107',
    cwe: 'CWE-841',
    scanType: 'audit',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const c of ctx.file.contracts) {
      const entries = fa.index
        .functionsOf(c)
        .filter((f) => fa.isEntryPoint(f) && f.mutability !== 'view' && f.mutability !== 'pure');
      for (const fn of c.functions) {
        if (!fn.body || fn.modifiers.some((m) => /nonReentrant|lock|mutex/i.test(m.name))) continue;
        const a = fa.analyze(fn);
        for (const call of a.calls) {
          if (!fa.isReentrantCall(a, call)) continue;
          const after = a.cfg.reachableFrom(call.node.id);
          const stale = new Set(a.stateWrites.filter((w) => after.has(w.node.id)).map((w) => w.name));
          if (stale.size === 0) continue;
          const others: FunctionInfo[] = entries.filter((g) => {
            if (
              g === fn ||
              fa.checksCaller(g) ||
              g.modifiers.some((m) => /nonReentrant|lock|mutex/i.test(m.name))
            )
              return false;
            const ga = fa.analyze(g);
            const reads = ga.stateReads.some((r) => stale.has(r.name));
            const acts = ga.stateWrites.length > 0 || ga.calls.some((x) => x.info.value !== undefined);
            return reads && acts;
          });
          if (others.length === 0) continue;
          ctx.report(meta, fa.statementOf(call.info.node), {
            fn,
            message: `During the call to \`${fa.text(call.info.target ?? call.info.node)}\` in \`${fn.name}()\`, ${[
              ...stale,
            ]
              .map((s) => `\`${s}\``)
              .join(', ')} ${stale.size > 1 ? 'are' : 'is'} stale, and ${others
              .map((g) => `\`${g.name}()\``)
              .join(', ')} act on ${stale.size > 1 ? 'them' : 'it'}: a callee can re-enter there.`,
          });
        }
      }
    }
  },
);

const unprotectedCallTarget = defineRule(
  {
    id: 'sol.access.unprotected-call-target',
    title: 'Anyone can replace a trusted call target',
    description:
      'A state variable holds the address of a contract this one calls (or delegatecalls), and a public function without a caller check overwrites it. An attacker points it at their own contract and takes over the trust boundary.',
    remediation:
      'Restrict the setter to a privileged role (ideally behind a timelock), or make the address immutable.',
    severity: 'critical',
    confidence: 'medium',
    category: 'access_control',
    swc: 'SWC-112',
    cwe: 'CWE-284',
    scanType: 'audit',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const c of ctx.file.contracts) {
      if (c.kind !== 'contract') continue;
      const targets = new Map<string, string>();
      for (const fn of fa.index.functionsOf(c)) {
        const a = fa.analyze(fn);
        for (const call of a.calls) {
          if (!['call', 'delegatecall', 'callcode', 'external'].includes(call.info.kind) || !call.info.target)
            continue;
          const b = baseIdentifier(unwrap(call.info.target));
          if (b && a.scope.isStateVar(fa.text(b))) targets.set(fa.text(b), call.info.kind);
        }
      }
      // Steering: only the trust boundaries the threat model recorded for this contract, when one is given.
      const boundaries = ctx.threatModel?.trustBoundaries.filter((t) => t.from === c.name);
      for (const [name, kind] of targets) {
        if (
          boundaries &&
          boundaries.length > 0 &&
          !boundaries.some((t) => t.to.includes(name) || t.description.includes(name))
        )
          continue;
        for (const setter of c.functions) {
          if (setter.kind !== 'function' || !fa.isEntryPoint(setter) || fa.checksCaller(setter)) continue;
          const w = fa.analyze(setter).stateWrites.find((x) => x.name === name);
          if (!w) continue;
          ctx.report(meta, setter.node, {
            fn: setter,
            lines: headerLines(setter),
            message: `\`${setter.name}()\` lets anyone overwrite \`${name}\`, the target of ${kind === 'delegatecall' ? 'a delegatecall' : 'external calls'} from \`${c.name}\`.`,
          });
        }
      }
    }
  },
);

export const auditRules: SolidityRule[] = [crossFunctionReentrancy, unprotectedCallTarget];
