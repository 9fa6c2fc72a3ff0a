/** Guards and balance bookkeeping that check the wrong thing (SWC-105, 123, 132). */
import type { FileAnalysis, FunctionAnalysis } from '../analysis.ts';
import { descendants, field, unwrap, walk } from '../ast.ts';
import { baseIdentifier } from '../model.ts';
import type { AstNode } from '../parser.ts';
import { ancestorIs, isValueCall, mutatingFunctions, norm } from './predicates.ts';
import { defineRule } from './rule.ts';

export const strictBalanceEquality = defineRule(
  {
    id: 'sol.logic.strict-balance-equality',
    title: 'Strict equality on the contract balance',
    description:
      "A condition requires the contract's ether balance to equal an exact value. Anyone can force ether into a contract (selfdestruct, coinbase), so the equality can be broken permanently.",
    remediation:
      'Use `>=`/`<=` comparisons, or track deposits in a state variable instead of reading the balance.',
    severity: 'medium',
    confidence: 'high',
    category: 'other',
    swc: 'SWC-132',
    cwe: 'CWE-667',
    scanType: 'lite',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of fa.ownFunctions()) {
      const a = fa.analyze(fn);
      for (const c of a.conditions) {
        walk(c.expr, (x) => {
          if (x.type !== 'binary_expression' || (x.op !== '==' && x.op !== '!=')) return undefined;
          const t = fa.compact(x);
          if (/\b(this|address\(this\))\.balance\b/.test(t)) {
            if (!comparesWithSnapshot(fa, a, x, c.node.id)) ctx.report(meta, fa.statementOf(x), { fn });
            return false;
          }
          return undefined;
        });
      }
    }
  },
);

/**
 * `address(this).balance == before`, where `before` is a local holding the balance read earlier
 * in the same call: a measurement of what changed meanwhile, not an expected amount forced ether
 * could break.
 */
function comparesWithSnapshot(fa: FileAnalysis, a: FunctionAnalysis, cmp: AstNode, at: number): boolean {
  return [field(cmp, 'left'), field(cmp, 'right')].some((side) => {
    const e = side ? unwrap(side) : undefined;
    if (e?.type !== 'identifier') return false;
    const defs = a.cfg.reachingDefs(at, fa.text(e));
    return defs.length > 0 && defs.every((d) => d.rhs !== undefined && /\.balance\b/.test(fa.compact(d.rhs)));
  });
}

export const balanceNotDebited = defineRule(
  {
    id: 'sol.logic.balance-not-debited',
    title: 'Payout of a recorded balance that is never reset',
    description:
      'The function pays the caller the balance recorded for them but never reduces that balance, so the caller can repeat the call and withdraw it again and again.',
    remediation: 'Set the recorded balance to zero (or subtract the amount) before sending.',
    severity: 'high',
    confidence: 'medium',
    category: 'access_control',
    swc: 'SWC-105',
    cwe: 'CWE-841',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of mutatingFunctions(fa)) {
      if (fn.kind === 'constructor' || !fa.isEntryPoint(fn)) continue;
      const a = fa.analyze(fn);
      for (const c of a.calls) {
        if (!isValueCall(c) || !c.info.value) continue;
        const v = unwrap(c.info.value);
        if (v.type !== 'array_access') continue;
        const idx = field(v, 'index');
        const base = baseIdentifier(v);
        if (!idx || !base || norm(fa, idx) !== 'msg.sender' || !a.scope.isStateVar(fa.text(base))) continue;
        const m = fa.text(base);
        const debited =
          a.stateWrites.some((w) => w.name === m) ||
          a.internalCalls.some((ic) => fa.analyze(ic.callee).stateWrites.some((w) => w.name === m));
        if (debited) continue;
        ctx.report(meta, fa.statementOf(c.info.node), {
          fn,
          message: `\`${fn.name}()\` pays out \`${fa.text(v)}\` but never updates \`${m}\`: the caller can withdraw the same balance repeatedly.`,
        });
      }
    }
  },
);

export const invertedBalanceCheck = defineRule(
  {
    id: 'sol.logic.inverted-balance-check',
    title: 'Balance check in the wrong direction',
    description:
      'A condition requires the amount to be at least the recorded balance and the function then subtracts the amount from that balance: the check admits any amount larger than what the caller owns.',
    remediation: 'Require `balance >= amount` before subtracting.',
    severity: 'high',
    confidence: 'high',
    category: 'access_control',
    swc: 'SWC-105',
    cwe: 'CWE-697',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of mutatingFunctions(fa)) {
      const a = fa.analyze(fn);
      const subtractions = a.stateWrites.filter(
        (w) => w.ast.parent?.type === 'augmented_assignment_expression' && w.ast.parent.op === '-=',
      );
      for (const cond of a.conditions) {
        const e = unwrap(cond.expr);
        if (e.type !== 'binary_expression' || !e.op || !['>=', '>', '<=', '<'].includes(e.op)) continue;
        const l = field(e, 'left');
        const r = field(e, 'right');
        if (!l || !r) continue;
        // What the condition guarantees afterwards: `require(c)` → c; `if (c) throw;` → !c;
        // `if (c) { … }` → c inside the branch only.
        const ifStmt = cond.kind === 'if' ? cond.expr.parent : undefined;
        const thenBranch =
          ifStmt?.type === 'if_statement' ? ifStmt.children.find((x) => x.field === 'body') : undefined;
        const exits =
          thenBranch !== undefined && /^\s*\{?\s*(throw|revert|return)\b/.test(fa.text(thenBranch));
        const greater = e.op.startsWith('>') !== exits;
        const [big, small] = greater ? [norm(fa, l), norm(fa, r)] : [norm(fa, r), norm(fa, l)];
        const hit = subtractions.find((w) => {
          const right = field(w.ast.parent!, 'right');
          if (!right || norm(fa, w.ast) !== small || norm(fa, right) !== big) return false;
          if (cond.kind === 'if' && !exits) return thenBranch !== undefined && ancestorIs(w.ast, thenBranch);
          return a.cfg.reachableFrom(cond.node.id).has(w.node.id);
        });
        if (hit) ctx.report(meta, fa.statementOf(cond.expr), { fn });
      }
    }
  },
);

export const tautology = defineRule(
  {
    id: 'sol.logic.tautological-guard',
    title: 'Guard that can never fail',
    description:
      'A condition compares an unsigned value with zero in a way that is always true (or always false), so the check protects nothing.',
    remediation: 'Write the check you meant (e.g. `length > 0`), or remove it.',
    severity: 'low',
    confidence: 'high',
    category: 'access_control',
    swc: 'SWC-123',
    cwe: 'CWE-571',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of fa.ownFunctions()) {
      const a = fa.analyze(fn);
      for (const cond of a.conditions) {
        walk(cond.expr, (x) => {
          if (x.type !== 'binary_expression' || !x.op) return undefined;
          const l = field(x, 'left');
          const r = field(x, 'right');
          if (!l || !r) return undefined;
          const zeroRight = norm(fa, r) === '0';
          const zeroLeft = norm(fa, l) === '0';
          const other = zeroRight ? l : zeroLeft ? r : undefined;
          if (!other) return undefined;
          const always =
            (zeroRight && (x.op === '>=' || x.op === '<')) || (zeroLeft && (x.op === '<=' || x.op === '>'));
          if (!always) return undefined;
          // Subtractions are reported as underflows by the arithmetic rule.
          if (descendants(other, 'binary_expression').some((b) => b.op === '-')) return undefined;
          if (!isUnsignedExpr(fa, a, other)) return undefined;
          ctx.report(meta, fa.statementOf(x), { fn });
          return false;
        });
      }
    }
  },
);

function isUnsignedExpr(fa: FileAnalysis, a: FunctionAnalysis, n: AstNode): boolean {
  const e = unwrap(n);
  if (e.type === 'member_expression' && fa.text(field(e, 'property')!) === 'length') return true;
  const t = fa.file.exprType(e, a.scope);
  return t !== undefined && /^uint\d*$/.test(t);
}
