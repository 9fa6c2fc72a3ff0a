/** Predicates over the analysis that rules of several categories share. */
import type { CallSite, FileAnalysis, FunctionAnalysis } from '../analysis.ts';
import { descendants, field, isTypeConversion, unwrap, walk } from '../ast.ts';
import type { ContractInfo, FunctionInfo } from '../model.ts';
import type { AstNode } from '../parser.ts';

/** How a call's value is used: discarded, stored in locals, or consumed by an expression. */
export function resultUse(
  call: AstNode,
  text: (n: AstNode) => string,
): { kind: 'discarded' } | { kind: 'assigned'; names: string[] } | { kind: 'used' } {
  let n = call;
  while (n.parent && n.parent.type === 'parenthesized_expression') n = n.parent;
  const p = n.parent;
  if (!p) return { kind: 'used' };
  if (p.type === 'expression_statement') return { kind: 'discarded' };
  if (p.type === 'variable_declaration_statement' && n.field === 'value') {
    const names: string[] = [];
    for (const d of descendants(p, 'variable_declaration')) {
      const nm = field(d, 'name');
      if (nm) names.push(nm.type === 'identifier' ? text(nm) : '');
    }
    return { kind: 'assigned', names };
  }
  if (p.type === 'assignment_expression' && n.field === 'right') {
    const left = field(p, 'left');
    const names: string[] = [];
    if (left) {
      const l = unwrap(left);
      for (const t of l.type === 'tuple_expression' ? l.children.map(unwrap) : [l]) {
        if (t.type === 'identifier') names.push(text(t));
      }
    }
    if (p.parent?.type === 'expression_statement') return { kind: 'assigned', names };
  }
  return { kind: 'used' };
}

/** Names of variables that hold a privileged role (owner, admin, …). */
export const OWNER_NAME =
  /owner|admin|creator|authority|controller|governance|manager|operator|ceo|cfo|coo|dev|master|root|boss|chairman|president/i;

/** The expression's text without enclosing parentheses and whitespace, for comparing expressions. */
export function norm(fa: FileAnalysis, n: AstNode): string {
  return fa.compact(unwrap(n));
}

/**
 * The address an expression denotes, without the conversions 0.6+ code needs to send ether:
 * `payable(msg.sender)` and `address(uint160(x))` name the same recipient as `msg.sender` and `x`.
 */
export function stripAddressCasts(n: AstNode): AstNode {
  let e = unwrap(n);
  while (
    (e.type === 'payable_conversion_expression' ||
      (e.type === 'type_cast_expression' && e.children.some((c) => c.type === 'primitive_type'))) &&
    e.children.filter((c) => c.type === 'call_argument').length === 1
  ) {
    const inner = e.children.find((c) => c.type === 'call_argument')?.children[0];
    if (!inner) break;
    e = unwrap(inner);
  }
  return e;
}

/** Non-view functions that run code: functions, fallbacks, receives (not modifiers). */
export function* mutatingFunctions(fa: FileAnalysis): Generator<FunctionInfo> {
  for (const fn of fa.ownFunctions()) {
    if (fn.kind === 'modifier' || !fn.body) continue;
    if (fn.mutability === 'view' || fn.mutability === 'pure') continue;
    yield fn;
  }
}

/** Whether the function can be reached by an outside caller who passes no caller check. */
export function openToAnyone(fa: FileAnalysis, fn: FunctionInfo): boolean {
  if (fa.checksCaller(fn)) return false;
  return fa.entryPointsReaching(fn).some((e) => !fa.checksCaller(e));
}

/** A call that moves ether: `transfer`, `send`, or a low-level `call` with a value. */
export function isValueCall(c: CallSite): boolean {
  if (c.info.kind === 'transfer' || c.info.kind === 'send') return true;
  return c.info.kind === 'call' && c.info.value !== undefined;
}

/** Whether `maybe` is `n` or one of its ancestors. */
export function ancestorIs(n: AstNode, maybe: AstNode): boolean {
  let p: AstNode | null = n;
  while (p) {
    if (p === maybe) return true;
    p = p.parent;
  }
  return false;
}

/**
 * Whether the value of `n` reads a parameter — not the keys it indexes with, and not the length
 * of a parameter array (bounded by the calldata size).
 */
export function isParamRead(
  fa: FileAnalysis,
  a: FunctionAnalysis,
  n: AstNode,
  options: { notThroughCalls?: boolean } = {},
): boolean {
  let hit = false;
  walk(n, (x) => {
    if (hit || x.field === 'index') return false;
    if (options.notThroughCalls && x.type === 'call_expression' && !isTypeConversion(x, (y) => fa.text(y)))
      return false;
    if (x.type === 'member_expression' && fa.text(field(x, 'property') ?? x) === 'length') return false;
    if (x.type === 'identifier' && x.field !== 'property' && a.scope.isParam(fa.text(x))) hit = true;
    return undefined;
  });
  return hit;
}

/** State variables assigned from a value matching `pattern` (in any function or initializer). */
export function stateVarsFrom(
  fa: FileAnalysis,
  c: ContractInfo,
  test: (n: AstNode) => boolean,
): Map<string, AstNode[]> {
  const out = new Map<string, AstNode[]>();
  for (const x of fa.index.lineage(c)) {
    for (const v of x.stateVars.values()) if (v.initializer && test(v.initializer)) out.set(v.name, [v.node]);
    for (const f of x.functions) {
      const a = fa.analyze(f);
      for (const w of a.stateWrites) {
        const asg = w.ast.parent;
        if (asg?.type !== 'assignment_expression') continue;
        const rhs = field(asg, 'right');
        if (rhs && test(rhs)) out.set(w.name, [...(out.get(w.name) ?? []), fa.statementOf(asg)]);
      }
    }
  }
  return out;
}

/** A condition that is always true: `true`, `1 == 1`, `!false` (after `norm`). */
const IS_TRUE = /^(true|(\d+)==\2|!false)$/;

/**
 * How an `if` tests a call's result: the branch taken when the call fails, whether the result is
 * the whole condition (possibly negated), and whether it is OR-ed with a constant-true test.
 */
export function testedResult(
  fa: FileAnalysis,
  call: AstNode,
): { failure: AstNode | undefined; direct: boolean; orTrue: boolean } | undefined {
  let n: AstNode = call;
  let negated = false;
  let orTrue = false;
  let direct = true;
  while (n.parent && n.field !== 'condition') {
    const p = n.parent;
    if (p.type === 'unary_expression' && p.op === '!') negated = !negated;
    else if (p.type === 'binary_expression' && p.op === '||') {
      const other = field(p, 'left') === n ? field(p, 'right') : field(p, 'left');
      if (other && IS_TRUE.test(norm(fa, other))) orTrue = true;
      else direct = false;
    } else if (p.type !== 'parenthesized_expression' && p.type !== 'expression') direct = false;
    if (p.type.endsWith('_statement')) return undefined;
    n = p;
  }
  const ifStmt = n.parent;
  if (n.field !== 'condition' || ifStmt?.type !== 'if_statement') return undefined;
  const bodies = ifStmt.children.filter((x) => x.field === 'body');
  const alt = ifStmt.children.find((x) => x.field === 'alternative') ?? bodies[1];
  return { failure: negated ? bodies[0] : alt, direct, orTrue };
}

/**
 * How a condition tests the variable an identifier names (or an entry or field of it, `roles[a].set`)
 * as a flag: `negated` (`!x`), `zero` (compared with `address(0)`, `0`, `false` or `true`),
 * `combined` (an operand of `&&`/`||`), `if` or `require` (the whole condition of one); undefined
 * when it is used otherwise (a number compared, `c + amount <= cap`).
 */
export function flagTest(
  fa: FileAnalysis,
  id: AstNode,
): 'negated' | 'zero' | 'combined' | 'if' | 'require' | undefined {
  let x: AstNode = id;
  while (
    x.parent &&
    (x.parent.type === 'member_expression' || x.parent.type === 'array_access') &&
    x.field !== 'index'
  )
    x = x.parent;
  while (x.parent?.type === 'parenthesized_expression') x = x.parent;
  const p = x.parent;
  if (!p) return undefined;
  if (p.type === 'unary_expression') return p.op === '!' ? 'negated' : undefined;
  if (p.type === 'binary_expression') {
    if (p.op === '&&' || p.op === '||') return 'combined';
    if (p.op !== '==' && p.op !== '!=') return undefined;
    const other = x === field(p, 'left') ? field(p, 'right') : field(p, 'left');
    return other !== undefined && /^(address\(0(x0+)?\)|0|false|true)$/.test(fa.compact(unwrap(other)))
      ? 'zero'
      : undefined;
  }
  if (p.type === 'if_statement' && x.field === 'condition') return 'if';
  return p.type === 'call_argument' ? 'require' : undefined;
}
