/**
 * Integer overflow and underflow (SWC-101): unchecked arithmetic on caller input and state, and
 * wrapping arithmetic on locals and narrow types (interval reasoning over reaching definitions).
 */
import type { FileAnalysis, FunctionAnalysis } from '../analysis.ts';
import { descendants, field, unwrap, walk } from '../ast.ts';
import { baseIdentifier, type FunctionInfo } from '../model.ts';
import type { AstNode } from '../parser.ts';
import { ancestorIs, isParamRead, norm } from './predicates.ts';
import { defineRule } from './rule.ts';

const ARITH_OPS = new Set(['+', '-', '*', '**']);

const AUG_OPS = new Set(['+=', '-=', '*=']);

export const uncheckedOverflow = defineRule(
  {
    id: 'sol.arithmetic.unchecked-overflow',
    title: 'Integer overflow or underflow',
    description:
      'Before Solidity 0.8, and inside `unchecked { ... }` blocks since, arithmetic wraps around silently. This operation combines a caller-supplied value with stored state (or another input) and no check bounds the result, so it can overflow or underflow.',
    remediation:
      'Use a 0.8+ compiler (checked arithmetic) or SafeMath, check bounds before subtracting, and keep `unchecked` blocks for operations already bounded.',
    severity: 'high',
    confidence: 'medium',
    category: 'arithmetic',
    swc: 'SWC-101',
    cwe: 'CWE-190',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa, file } = ctx;
    // From 0.8 on, arithmetic wraps only inside `unchecked { … }` blocks.
    const onlyUnchecked = !file.uncheckedArithmetic;
    if (onlyUnchecked && !/\bunchecked\b/.test(file.source)) return;
    for (const fn of fa.ownFunctions()) {
      // Privileged callers (owner-only functions) supply trusted numbers.
      if (!fn.body || fn.contract.kind === 'library' || !fa.isEntryPoint(fn) || fa.checksCaller(fn)) continue;
      const a = fa.analyze(fn);
      // Raw arithmetic is a choice inside an `unchecked` block (0.8+), and before 0.8 in a
      // contract that attaches a checked-math library (`using SafeMath for uint256`) for the
      // operations its authors thought could overflow. There only a caller's number itself
      // disproves the bound the authors relied on, not a value a call computed from it (a price,
      // a gas cost, a pool's output), and the finding is Medium with low confidence.
      const deliberate = onlyUnchecked || usesCheckedMath(fa, fn);
      // Caller-chosen numbers: parameters. Ether amounts (`msg.value`, balances) are bounded by
      // the ether supply (< 2^87) and cannot overflow 256-bit arithmetic.
      const taint = a.cfg.taint((e) => isParamRead(fa, a, e, { notThroughCalls: deliberate }), {
        valuesOnly: true,
        notThroughCalls: deliberate,
      });
      const guards = relationalGuards(fa, a);
      const reported = new Set<AstNode>();
      walk(fn.body, (x) => {
        let left: AstNode | undefined;
        let right: AstNode | undefined;
        let op: string | undefined;
        if (x.type === 'binary_expression' && x.op && ARITH_OPS.has(x.op)) {
          left = field(x, 'left');
          right = field(x, 'right');
          op = x.op;
        } else if (x.type === 'augmented_assignment_expression' && x.op && AUG_OPS.has(x.op)) {
          left = field(x, 'left');
          right = field(x, 'right');
          op = x.op[0];
        }
        if (!left || !right || !op) return undefined;
        if (onlyUnchecked && !insideUncheckedBlock(x)) return undefined;
        const node = a.cfg.nodeOf(x);
        if (!node) return undefined;
        // Loop counters and literal-only arithmetic are not interesting.
        if (
          node.kind === 'cond' ||
          node.loops.some((l) => field(l, 'update') && ancestorIs(x, field(l, 'update')!))
        )
          return undefined;
        const lt = norm(fa, left);
        const rt = norm(fa, right);
        // A constant's name in capitals counts as one where its declaration is out of sight (a
        // file-level constant, a base the scan does not hold), not when it names a parameter, a
        // local or a state variable that is not constant.
        const isLit = (s: string): boolean =>
          /^\d[\d_.]*(e\d+)?(\w+)?$|^0x[\da-f]+$/i.test(s) ||
          (/^[A-Z][A-Z0-9_]*$/.test(s) && (a.scope.lookup(s) === undefined || isConstantVar(a, s)));
        const lUser = taint.isTaintedExpr(left, node.id);
        const rUser = taint.isTaintedExpr(right, node.id);
        if (!lUser && !rUser) return undefined;
        const lState = readsState(fa, a, left);
        const rState = readsState(fa, a, right);
        const constantOperand = isLit(lt) || isLit(rt) || isConstantVar(a, lt) || isConstantVar(a, rt);
        if (constantOperand && op !== '*') return undefined;
        // A product of a caller-chosen number with anything can overflow (`count * value`).
        if (!constantOperand && op !== '*' && !(lState || rState || (lUser && rUser))) return undefined;
        if (x.type === 'binary_expression' && insideOverflowCheck(fa, x)) return undefined;
        if (guardedBy(guards, lt, rt)) return undefined;
        // Burn: `totalSupply -= v` next to a checked `balance -= v` (a balance never exceeds the supply).
        if (op === '-' && x.type === 'augmented_assignment_expression') {
          const burnt = a.stateWrites.some((w) => {
            const p = w.ast.parent;
            if (p?.type !== 'augmented_assignment_expression' || p === x || p.op !== '-=') return false;
            if (norm(fa, field(p, 'right')!) !== rt) return false;
            const wl = norm(fa, w.ast);
            return guards.some(
              (g) => (g.l.includes(wl) && g.r.includes(rt)) || (g.l.includes(rt) && g.r.includes(wl)),
            );
          });
          if (burnt) return undefined;
        }
        // Conservation: `M[to] += v` next to a checked `M[from] -= v` (or `M[from] = b - v`)
        // moves a bounded amount.
        if (op === '+' && x.type === 'augmented_assignment_expression') {
          const m = baseIdentifier(left);
          const moved = a.stateWrites.some((w) => {
            const p = w.ast.parent;
            if (!m || w.name !== fa.text(m) || !p) return false;
            if (p.type === 'augmented_assignment_expression')
              return p.op === '-=' && norm(fa, field(p, 'right')!) === rt;
            const rhs = p.type === 'assignment_expression' ? field(p, 'right') : undefined;
            const sub = rhs ? unwrap(rhs) : undefined;
            return (
              sub?.type === 'binary_expression' && sub.op === '-' && norm(fa, field(sub, 'right')!) === rt
            );
          });
          if (moved) return undefined;
        }
        const stmt = fa.statementOf(x);
        if (reported.has(stmt)) return undefined;
        reported.add(stmt);
        const kind = op === '-' ? 'underflow' : 'overflow';
        const readOnly = fn.mutability === 'view' || fn.mutability === 'pure';
        ctx.report(meta, stmt, {
          fn,
          // A product with a caller's number, or two of them combined, overflows whatever the
          // authors meant (`cnt * _value`): only the rest is lowered where raw arithmetic is a choice.
          ...(deliberate && op !== '*' && !(lUser && rUser)
            ? { severity: 'medium' as const, confidence: 'low' as const }
            : {}),
          // In a view the wrapped value misleads callers but changes no state.
          ...(readOnly ? { severity: 'low' as const } : {}),
          message: onlyUnchecked
            ? `\`${fa.text(x)}\` can ${kind}: it sits in an \`unchecked\` block and no condition bounds \`${lt}\` and \`${rt}\`.`
            : `\`${fa.text(x)}\` can ${kind}: Solidity ${file.pragma?.minVersion?.join('.') ?? '< 0.8'} does not check arithmetic and no condition bounds \`${lt}\` and \`${rt}\`.`,
        });
        return undefined;
      });
    }
  },
);

/**
 * Relational comparisons in the conditions of a function and its modifiers (`require`, `if`
 * followed by a revert or return): `a >= b` guards `a - b`, `a + b >= a` guards `a + b`.
 */
function relationalGuards(fa: FileAnalysis, a: FunctionAnalysis): Array<{ l: string; r: string }> {
  const guards: Array<{ l: string; r: string }> = [];
  // The conditions of `?:` too: `x = a > b ? b : a` bounds `b - x`.
  const ternaries = a.fn.body ? descendants(a.fn.body, 'ternary_expression').map((t) => t.children[0]) : [];
  const exprs = [
    ...a.conditions.map((c) => c.expr),
    ...a.modifiers.flatMap((m) => fa.analyze(m).conditions.map((c) => c.expr)),
    ...ternaries.filter((t): t is AstNode => t !== undefined),
  ];
  for (const expr of exprs) {
    for (const b of descendants(expr, 'binary_expression')) {
      if (!b.op || !['<', '>', '<=', '>='].includes(b.op)) continue;
      const l = field(b, 'left');
      const r = field(b, 'right');
      if (l && r) guards.push({ l: norm(fa, l), r: norm(fa, r) });
    }
  }
  return guards;
}

/** Whether some comparison mentions both operands, one on each side. */
function guardedBy(guards: Array<{ l: string; r: string }>, lt: string, rt: string): boolean {
  return guards.some((g) => (g.l.includes(lt) && g.r.includes(rt)) || (g.l.includes(rt) && g.r.includes(lt)));
}

/**
 * Whether the function's contract (or a base) attaches a checked-math library: one named as such
 * (`SafeMath`, `LowGasSafeMath`) or one the project declares with checked `add`/`sub`.
 */
function usesCheckedMath(fa: FileAnalysis, fn: FunctionInfo): boolean {
  return fa.index.lineage(fn.contract).some((c) =>
    [...c.usingLibraries].some((name) => {
      if (/safe.?math/i.test(name)) return true;
      const lib = fa.index.contractsByName.get(name);
      return (
        lib?.functions.some((f) => f.name === 'sub') === true && lib.functions.some((f) => f.name === 'add')
      );
    }),
  );
}

/** Whether the expression sits in an `unchecked { … }` block (wrapping arithmetic in 0.8+). */
function insideUncheckedBlock(n: AstNode): boolean {
  for (let p = n.parent; p; p = p.parent) {
    if (p.type === 'block_statement' && p.children.some((c) => c.type === 'unchecked')) return true;
    if (p.type === 'function_body' || p.type === 'function_definition') return false;
  }
  return false;
}

/** Whether the expression reads a state variable or the contract's balance. */
function readsState(fa: FileAnalysis, a: FunctionAnalysis, n: AstNode): boolean {
  let hit = false;
  walk(n, (x) => {
    if (x.type === 'identifier' && x.field !== 'property' && a.scope.isStateVar(fa.text(x))) hit = true;
    if (x.type === 'member_expression' && /^(this|address\(this\))\.balance$/.test(fa.compact(x))) hit = true;
    return undefined;
  });
  return hit;
}

function isConstantVar(a: FunctionAnalysis, name: string): boolean {
  const v = a.scope.lookup(name);
  return v !== undefined && v.kind === 'state' && v.isConstant;
}

/** `a + b >= a`: the expression is itself the overflow check. */
function insideOverflowCheck(fa: FileAnalysis, x: AstNode): boolean {
  const p = x.parent;
  if (p?.type !== 'binary_expression' || !p.op || !['>=', '>', '<=', '<'].includes(p.op)) return false;
  const other = field(p, 'left') === x ? field(p, 'right') : field(p, 'left');
  if (!other) return false;
  const o = norm(fa, other);
  const l = field(x, 'left');
  const r = field(x, 'right');
  return (l !== undefined && norm(fa, l) === o) || (r !== undefined && norm(fa, r) === o);
}

interface Range {
  lo: bigint;
  hi: bigint;
}

const UNITS: Record<string, bigint> = {
  wei: 1n,
  gwei: 10n ** 9n,
  szabo: 10n ** 12n,
  finney: 10n ** 15n,
  ether: 10n ** 18n,
  seconds: 1n,
  minutes: 60n,
  hours: 3600n,
  days: 86400n,
  weeks: 604800n,
};

/** Range of an integer type (`uint8`, `int`, …); undefined for anything else. */
export function typeRange(t: string | undefined): (Range & { bits: number; signed: boolean }) | undefined {
  const m = t ? /^(u?)int(\d*)$/.exec(t.trim()) : null;
  if (!m) return undefined;
  const bits = m[2] ? Number(m[2]) : 256;
  const signed = m[1] !== 'u';
  if (signed) return { lo: -(2n ** BigInt(bits - 1)), hi: 2n ** BigInt(bits - 1) - 1n, bits, signed };
  return { lo: 0n, hi: 2n ** BigInt(bits) - 1n, bits, signed };
}

/**
 * The mathematical range of an integer expression: literals, parameters (their type's range),
 * locals (the union over their reaching definitions), state and other reads (their type's range).
 */
function rangeOf(
  fa: FileAnalysis,
  a: FunctionAnalysis,
  n: AstNode,
  at: number,
  depth = 0,
): Range | undefined {
  if (depth > 6) return undefined;
  const e = unwrap(n);
  const t = norm(fa, e);
  const lit = /^(\d+)(wei|gwei|szabo|finney|ether|seconds|minutes|hours|days|weeks)?$/.exec(t);
  if (lit) {
    const v = BigInt(lit[1]!) * (UNITS[lit[2] ?? 'wei'] ?? 1n);
    return { lo: v, hi: v };
  }
  if (/^0x[\da-f]+$/i.test(t)) return { lo: BigInt(t), hi: BigInt(t) };
  if (e.type === 'binary_expression' && e.op && ['+', '-', '*'].includes(e.op)) {
    const l = field(e, 'left');
    const r = field(e, 'right');
    const lr = l ? rangeOf(fa, a, l, at, depth + 1) : undefined;
    const rr = r ? rangeOf(fa, a, r, at, depth + 1) : undefined;
    return lr && rr ? combine(e.op, lr, rr) : undefined;
  }
  if (e.type === 'identifier') {
    const v = a.scope.lookup(t);
    if (!v) return undefined;
    const tr = typeRange(v.typeText);
    if (v.kind !== 'local') return tr;
    const defs = a.cfg.reachingDefs(at, t);
    if (defs.length === 0) return tr;
    let out: Range | undefined;
    for (const d of defs) {
      // A declaration without a value holds zero.
      const r =
        d.rhs === undefined
          ? { lo: 0n, hi: 0n }
          : d.node === at
            ? undefined
            : unwrap(d.rhs).type === 'augmented_assignment_expression' ||
                unwrap(d.rhs).type === 'update_expression'
              ? tr
              : rangeOf(fa, a, d.rhs, d.node, depth + 1);
      if (!r) return tr;
      const clamped = tr ? { lo: maxB(r.lo, tr.lo), hi: minB(r.hi, tr.hi) } : r;
      out = out ? { lo: minB(out.lo, clamped.lo), hi: maxB(out.hi, clamped.hi) } : clamped;
    }
    return out;
  }
  return typeRange(fa.file.exprType(e, a.scope));
}

const minB = (x: bigint, y: bigint): bigint => (x < y ? x : y);

const maxB = (x: bigint, y: bigint): bigint => (x > y ? x : y);

function combine(op: string, l: Range, r: Range): Range {
  if (op === '+') return { lo: l.lo + r.lo, hi: l.hi + r.hi };
  if (op === '-') return { lo: l.lo - r.hi, hi: l.hi - r.lo };
  const p = [l.lo * r.lo, l.lo * r.hi, l.hi * r.lo, l.hi * r.hi];
  return { lo: p.reduce(minB), hi: p.reduce(maxB) };
}

export const localWrap = defineRule(
  {
    id: 'sol.arithmetic.local-wrap',
    title: 'Integer wrap on a local or narrow-typed value',
    description:
      'Arithmetic on a local variable (often of a narrow type such as `uint8`) leaves the range of its type. Before Solidity 0.8, and inside `unchecked` blocks since, the value wraps around silently.',
    remediation:
      'Use a 0.8+ compiler (checked arithmetic), a 256-bit type, or check bounds before the operation.',
    severity: 'medium',
    confidence: 'medium',
    category: 'arithmetic',
    swc: 'SWC-101',
    cwe: 'CWE-190',
    scanType: 'standard',
    reasoning:
      "Applies to code without checked arithmetic (pragma below 0.8, or an `unchecked` block). For `+`, `-`, `*` (and their assignments) that write or read a local, computes the range of each operand by interval reasoning over reaching definitions (literals, the type range of parameters and state, the union over a local's definitions) and compares the result with the width of the target type. Always out of range: confidence high; partly out of range on a type narrower than 256 bits: confidence medium. Medium when the wrapped value is used afterwards (and the wrap is certain or driven by a parameter), Low when it is never read (dead code) or only possibly wraps without caller input, informational for a narrow accumulator of caller input that cannot wrap as written.",
  },
  (ctx, meta) => {
    const { fa, file } = ctx;
    const onlyUnchecked = !file.uncheckedArithmetic;
    if (onlyUnchecked && !/\bunchecked\b/.test(file.source)) return;
    for (const fn of fa.ownFunctions()) {
      if (!fn.body || fn.kind === 'modifier' || fn.contract.kind === 'library') continue;
      const a = fa.analyze(fn);
      const reported = new Set<AstNode>();
      walk(fn.body, (x) => {
        let left: AstNode | undefined;
        let right: AstNode | undefined;
        let op: string | undefined;
        if (x.type === 'binary_expression' && x.op && ['+', '-', '*'].includes(x.op)) {
          left = field(x, 'left');
          right = field(x, 'right');
          op = x.op;
        } else if (
          x.type === 'augmented_assignment_expression' &&
          x.op &&
          ['+=', '-=', '*='].includes(x.op)
        ) {
          left = field(x, 'left');
          right = field(x, 'right');
          op = x.op[0];
        }
        if (!left || !right || !op) return undefined;
        if (onlyUnchecked && !insideUncheckedBlock(x)) return undefined;
        const node = a.cfg.nodeOf(x);
        if (!node || node.kind === 'cond' || node.loops.length > 0) return undefined;
        // The value written: a local assigned (`v = v - 10`, `v += p`, `uint8 v = a + b`).
        const target = assignedLocal(fa, a, x);
        if (!target) return undefined;
        const operandIsLocal = [left, right].some((o) => {
          const u = unwrap(o);
          return u.type === 'identifier' && a.scope.locals.get(fa.text(u))?.kind === 'local';
        });
        if (!operandIsLocal && !target.narrow) return undefined;
        const tr = typeRange(target.type);
        if (!tr) return undefined;
        // A subtraction the function compared first (`if (b <= a) revert(); … a - b`).
        if (op === '-' && guardedBy(relationalGuards(fa, a), norm(fa, left), norm(fa, right)))
          return undefined;
        const lr = rangeOf(fa, a, left, node.id);
        const rr = rangeOf(fa, a, right, node.id);
        if (!lr || !rr) return undefined;
        const r = combine(op, lr, rr);
        const always = r.hi < tr.lo || r.lo > tr.hi;
        const maybe = !always && (r.lo < tr.lo || r.hi > tr.hi);
        const fromInput = [left, right].some((o) => fa.isParamDerived(o, a));
        const accumulates = !maybe && !always && target.narrow && fromInput && operandIsLocal;
        if (!always && !(maybe && tr.bits < 256) && !accumulates) return undefined;
        const stmt = fa.statementOf(x);
        if (reported.has(stmt)) return undefined;
        reported.add(stmt);
        const used = target.used;
        const kind = r.lo < tr.lo ? 'underflow' : 'overflow';
        const where = onlyUnchecked ? 'in an `unchecked` block' : 'without checked arithmetic';
        ctx.report(meta, stmt, {
          fn,
          // A possible (not certain) wrap with no caller input involved is a weak signal: Low.
          severity: accumulates ? 'informational' : used && (always || fromInput) ? 'medium' : 'low',
          confidence: accumulates ? 'low' : always ? 'high' : 'medium',
          message: accumulates
            ? `\`${fa.text(x)}\` adds a caller-chosen value to the \`${target.type}\` local \`${target.name}\`; it cannot wrap as written here, but the narrow accumulator wraps as soon as it holds more ${where}.`
            : `\`${fa.text(x)}\` ${always ? 'always' : 'can'} ${kind} the \`${target.type}\` range ${where}${
                used ? '' : '; the result is never read afterwards'
              }.`,
        });
        return undefined;
      });
    }
  },
);

/** The local an arithmetic expression is assigned to, with its type and whether the value is read later. */
function assignedLocal(
  fa: FileAnalysis,
  a: FunctionAnalysis,
  x: AstNode,
): { name: string; type: string; narrow: boolean; used: boolean } | undefined {
  let n = x;
  while (n.parent && (n.parent.type === 'parenthesized_expression' || n.parent.type === 'expression'))
    n = n.parent;
  const p = n.parent;
  let nameNode: AstNode | undefined;
  if (x.type === 'augmented_assignment_expression') nameNode = field(x, 'left');
  else if (p?.type === 'assignment_expression' && n.field === 'right') nameNode = field(p, 'left');
  else if (p?.type === 'variable_declaration_statement' && n.field === 'value') {
    const d = p.children.find((c) => c.type === 'variable_declaration');
    nameNode = d ? field(d, 'name') : undefined;
  }
  if (!nameNode) return undefined;
  const id = unwrap(nameNode);
  if (id.type !== 'identifier') return undefined;
  const name = fa.text(id);
  const v = a.scope.locals.get(name);
  if (v?.kind !== 'local') return undefined;
  const tr = typeRange(v.typeText);
  if (!tr) return undefined;
  const node = a.cfg.nodeOf(x);
  const def = node ? a.cfg.defs.find((d) => d.node === node.id && d.name === name) : undefined;
  const used = def ? a.cfg.usesOf(def).some((u) => u.id !== def.node) : true;
  return { name, type: v.typeText, narrow: tr.bits < 256, used };
}
