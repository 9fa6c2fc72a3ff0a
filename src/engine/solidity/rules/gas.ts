/** Gas: storage reads and variables that cost more than they need to (informational). */
import { descendants, field } from '../ast.ts';
import { baseIdentifier, bodyNodes } from '../model.ts';
import { defineRule } from './rule.ts';

export const lengthInLoop = defineRule(
  {
    id: 'sol.gas.storage-length-in-loop',
    title: 'Storage array length read on every iteration',
    description:
      'The loop condition reads the length of a storage array on every pass (a storage read each time).',
    remediation: 'Cache the length in a local variable before the loop.',
    severity: 'gas_optimization',
    confidence: 'high',
    category: 'other',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of fa.ownFunctions()) {
      if (!fn.body) continue;
      const a = fa.analyze(fn);
      for (const loop of bodyNodes(fn, 'for_statement')) {
        const cond = field(loop, 'condition');
        if (!cond) continue;
        const len = descendants(cond, 'member_expression').find((m) => {
          const b = baseIdentifier(m);
          return (
            fa.text(field(m, 'property')!) === 'length' && b !== undefined && a.scope.isStateVar(fa.text(b))
          );
        });
        if (len) ctx.report(meta, cond, { fn });
      }
    }
  },
);

export const couldBeConstant = defineRule(
  {
    id: 'sol.gas.could-be-constant',
    title: 'State variable could be constant',
    description:
      'The state variable is initialized with a literal and never written, yet occupies a storage slot and costs a storage read on each use.',
    remediation: 'Declare it `constant` (or `immutable` when set in the constructor).',
    severity: 'gas_optimization',
    confidence: 'high',
    category: 'other',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    const derived = new Set(ctx.file.contracts.flatMap((c) => c.bases));
    for (const c of ctx.file.contracts) {
      if (c.kind !== 'contract') continue;
      for (const v of c.stateVars.values()) {
        if (v.isConstant || !v.initializer || v.isMapping || v.isArray) continue;
        if (!/^[\d_.]+(\s*\w+)?$|^(true|false)$|^"[^"]*"$/.test(fa.text(v.initializer).trim())) continue;
        const written = ctx.file.contracts.some((x) =>
          x.functions.some((f) => fa.analyze(f).stateWrites.some((w) => w.name === v.name)),
        );
        if (
          written ||
          (derived.has(c.name) && ctx.file.contracts.some((x) => x !== c && x.stateVars.has(v.name)))
        )
          continue;
        ctx.report(meta, v.node, { contract: c });
      }
    }
  },
);
