/** Signatures (SWC-121, 122): replayable signed messages and `ecrecover` results compared with nothing. */
import type { CallSite, FileAnalysis, FunctionAnalysis } from '../analysis.ts';
import { descendants, field } from '../ast.ts';
import { baseIdentifier } from '../model.ts';
import type { AstNode } from '../parser.ts';
import { flagTest, isValueCall, mutatingFunctions, norm, resultUse } from './predicates.ts';
import { defineRule } from './rule.ts';

/** Calls that recover a signer: `ecrecover(…)` and `ECDSA.recover`/`tryRecover` (also via `using`). */
function recoverCalls(a: FunctionAnalysis): CallSite[] {
  return a.calls.filter(
    (c) =>
      (c.info.kind === 'builtin' && c.info.name === 'ecrecover') ||
      (c.info.kind !== 'builtin' && c.info.kind !== 'internal' && /^(recover|tryRecover)$/.test(c.info.name)),
  );
}

/** Internal functions followed from one signature check (a bound on deep call graphs). */
const MAX_NONCE_HELPERS = 64;

/**
 * Whether the function consumes something per signature: it steps a state counter by one (a
 * nonce), or it writes state that its own conditions test (a used-signature or used-nonce map).
 * Modifiers and the internal functions it reaches, however deep, count.
 */
function consumesNonce(fa: FileAnalysis, a: FunctionAnalysis): boolean {
  // The function, its modifiers and every internal function it reaches (`_useCheckedNonce` calls
  // `_useNonce`; `_transferWithAuthorization` calls `_consumeNonce`).
  const parts: FunctionAnalysis[] = [];
  const seen = new Set<FunctionAnalysis>();
  // An internal function left unimplemented that may write state (`function
  // _getAndIncrementNonce(uint256) internal virtual returns (uint256);`): the contract that
  // implements it decides what it records.
  let unimplemented = false;
  const visit = (x: FunctionAnalysis): void => {
    if (seen.has(x) || seen.size >= MAX_NONCE_HELPERS) return;
    seen.add(x);
    parts.push(x);
    for (const m of x.modifiers) visit(fa.analyze(m));
    for (const c of x.internalCalls) {
      const { callee } = c;
      if (!callee.body && callee.kind === 'function')
        unimplemented ||=
          callee.mutability !== 'view' && callee.mutability !== 'pure' && insideDigest(fa, c.site.info.node);
      else visit(fa.analyze(callee));
    }
    // `this.route(id, …)`: a call on the contract itself runs its own function.
    for (const { info } of x.calls) {
      if (info.kind !== 'external' || !info.target || fa.compact(info.target) !== 'this') continue;
      const own = fa.resolveInternal(x.contract, info.name, info.args.length);
      if (own?.body) visit(fa.analyze(own));
    }
  };
  visit(a);
  if (unimplemented) return true;
  const conditionVars = new Set<string>();
  for (const p of parts)
    for (const c of p.conditions)
      for (const i of descendants(c.expr, 'identifier')) {
        if (i.field === 'property') continue;
        const name = fa.text(i);
        if (p.scope.isStateVar(name)) conditionVars.add(name);
        // A local copy of a state entry (`Transmission memory t = s_transmissions[id]`) whose
        // flag the condition tests (`if (t.success) revert …`, `t.transmitter != address(0)`)
        // tests the entry; a limit on an amount read from it (`c + amount <= CAP`) does not.
        const local = p.scope.locals.get(name);
        const origin =
          local?.kind === 'local' && local.initializer ? baseIdentifier(local.initializer) : undefined;
        if (origin && p.scope.isStateVar(fa.text(origin)) && flagTest(fa, i) !== undefined)
          conditionVars.add(fa.text(origin));
      }
  // Every variable path the conditions read (`receipt.hasVoted`, `used[h]`), compared whole.
  const conditionPaths = new Set(
    parts.flatMap((p) =>
      p.conditions.flatMap((c) =>
        descendants(c.expr, 'member_expression', 'array_access', 'identifier').map((x) => fa.compact(x)),
      ),
    ),
  );
  return parts.some((p) =>
    p.stateWrites.some((w) => {
      const parent = w.ast.parent;
      // A counter stepped by one (`nonces[o]++`, `nonce += 1`); adding an amount
      // (`credited[o] += amount`) is accounting, not a nonce.
      if (parent?.type === 'update_expression' && parent.op === '++') return true;
      if (
        parent?.type === 'augmented_assignment_expression' &&
        parent.op === '+=' &&
        /^1$/.test(fa.compact(field(parent, 'right') ?? parent))
      )
        return true;
      if (conditionVars.has(w.name)) return true;
      const slot = fa.compact(w.ast);
      // A flag a condition tests, written through a storage pointer (`receipt.hasVoted = true`).
      if (conditionPaths.has(slot)) return true;
      return advancesCounter(fa, p, w.ast, slot);
    }),
  );
}

/** Whether the call is part of the message a signature is checked against (hashed or encoded). */
function insideDigest(fa: FileAnalysis, call: AstNode): boolean {
  for (let p = call.parent; p && !p.type.endsWith('_statement'); p = p.parent) {
    if (p.type !== 'call_expression') continue;
    const f = field(p, 'function');
    if (f && /^(keccak256|sha256|abi\.encode\w*|_hashTypedData(V4)?)$/.test(fa.compact(f))) return true;
  }
  return false;
}

/**
 * `nonces[o] = current + 1` where `current` was read from `nonces[o]` (or `nonces[o] = nonces[o] + 1`,
 * `.add(1)`): the counter the signed message included moves on.
 */
function advancesCounter(fa: FileAnalysis, p: FunctionAnalysis, target: AstNode, slot: string): boolean {
  const asg = target.parent;
  if (asg?.type !== 'assignment_expression') return false;
  const rhs = field(asg, 'right');
  if (!rhs) return false;
  // `x + 1` or `x.add(1)`: a step of one, from the counter itself or a local read from it.
  const m = /^(.+?)(?:\+1|\.add\(1\))$/.exec(fa.compact(rhs));
  if (!m) return false;
  if (m[1] === slot) return true;
  const v = p.scope.locals.get(m[1]!);
  return v?.kind === 'local' && v.initializer !== undefined && fa.compact(v.initializer) === slot;
}

export const signatureReplay = defineRule(
  {
    id: 'sol.access.signature-replay',
    title: 'Signature can be replayed',
    description:
      'The function acts on a signed message but keeps no record of the signatures (or nonces) it has already accepted. Anyone who has seen one valid signature can submit it again and repeat the action.',
    remediation:
      'Include a per-signer nonce (and the chain id and contract address) in the signed message, and mark it used before acting.',
    severity: 'high',
    confidence: 'medium',
    category: 'access_control',
    swc: 'SWC-121',
    cwe: 'CWE-294',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    if (!/\b(ecrecover|recover|tryRecover)\b/.test(ctx.file.source)) return;
    for (const fn of mutatingFunctions(fa)) {
      if (fn.kind !== 'function' || !fa.isEntryPoint(fn)) continue;
      const a = fa.analyze(fn);
      const recovered = recoverCalls(a);
      if (recovered.length === 0 || consumesNonce(fa, a)) continue;
      // Something to repeat: a state change or a payment.
      const acts =
        a.stateWrites.length > 0 || a.calls.some((c) => isValueCall(c) || c.info.kind === 'external');
      if (!acts && !a.internalCalls.some((c) => fa.writesState(c.callee))) continue;
      ctx.report(meta, fa.statementOf(recovered[0]!.info.node), {
        fn,
        message: `\`${fn.name}()\` accepts a signature but records no nonce or used signature: the same signature can be submitted again.`,
      });
    }
  },
);

const ZERO_ADDRESS = /^(address\(0(x0+)?\)|0(x0+)?)$/;

export const ecrecoverZero = defineRule(
  {
    id: 'sol.access.ecrecover-zero-address',
    title: 'Signer compared without rejecting the zero address',
    description:
      '`ecrecover` returns the zero address for an invalid signature. The recovered signer is compared with a caller-supplied address and nothing rejects zero, so anyone passes the check for the zero address with a malformed signature.',
    remediation:
      'Require the recovered address to be non-zero (or use OpenZeppelin `ECDSA.recover`, which reverts on invalid signatures).',
    severity: 'high',
    confidence: 'medium',
    category: 'access_control',
    swc: 'SWC-122',
    cwe: 'CWE-347',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    if (!/\becrecover\b/.test(ctx.file.source)) return;
    for (const fn of fa.ownFunctions()) {
      if (!fn.body || fn.kind === 'modifier') continue;
      const a = fa.analyze(fn);
      for (const c of a.calls) {
        if (c.info.kind !== 'builtin' || c.info.name !== 'ecrecover') continue;
        const use = resultUse(c.info.node, (n) => fa.text(n));
        const names = new Set([norm(fa, c.info.node), ...(use.kind === 'assigned' ? use.names : [])]);
        const comparisons: Array<{ cmp: AstNode; other: AstNode }> = [];
        const zeroChecked = new Set<string>();
        for (const cond of a.conditions) {
          for (const b of descendants(cond.expr, 'binary_expression')) {
            if (b.op !== '==' && b.op !== '!=') continue;
            const l = field(b, 'left');
            const r = field(b, 'right');
            if (!l || !r) continue;
            const [ln, rn] = [norm(fa, l), norm(fa, r)];
            if (ZERO_ADDRESS.test(rn)) zeroChecked.add(ln);
            else if (ZERO_ADDRESS.test(ln)) zeroChecked.add(rn);
            else if (names.has(ln)) comparisons.push({ cmp: b, other: r });
            else if (names.has(rn)) comparisons.push({ cmp: b, other: l });
          }
        }
        if ([...names].some((n) => zeroChecked.has(n))) continue;
        for (const { cmp, other } of comparisons) {
          if (!fa.isParamDerived(other, a) || zeroChecked.has(norm(fa, other))) continue;
          ctx.report(meta, fa.statementOf(cmp), {
            fn,
            message: `The recovered signer is compared with \`${fa.text(other)}\`, which the caller chooses, and is never checked against zero: an invalid signature passes for the zero address.`,
          });
        }
      }
    }
  },
);
