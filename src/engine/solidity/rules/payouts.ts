/**
 * `standard` rules on payouts and local arithmetic: gas-limited re-entrancy, fixed payouts anyone
 * can repeat, payout recipients set by a race, send results checked without effect, and wrapping
 * arithmetic on locals and narrow integer types (interval reasoning over reaching definitions).
 */
import type { CallSite, FileAnalysis, FunctionAnalysis } from '../analysis.ts';
import { descendants, field, unwrap, walk } from '../ast.ts';
import type { ContractInfo, FunctionInfo } from '../model.ts';
import type { AstNode } from '../parser.ts';
import { defineRule, type SolidityRule } from './rule.ts';
import { insideUncheckedBlock, stripAddressCasts } from './standard.ts';

const GUARD_MODIFIER = /nonReentrant|noReentran|reentrancyGuard|mutex|lock/i;
const OWNER_NAME =
  /owner|admin|creator|authority|controller|governance|manager|operator|ceo|cfo|coo|dev|master|root|boss|chairman|president/i;

function norm(fa: FileAnalysis, n: AstNode): string {
  return fa.compact(unwrap(n));
}

function ancestorIs(n: AstNode, maybe: AstNode): boolean {
  for (let p: AstNode | null = n; p; p = p.parent) if (p === maybe) return true;
  return false;
}

/** Whether the function can be reached by an outside caller who passes no caller check. */
function openToAnyone(fa: FileAnalysis, fn: FunctionInfo): boolean {
  if (fa.checksCaller(fn)) return false;
  return fa.entryPointsReaching(fn).some((e) => !fa.checksCaller(e));
}

function isValueCall(c: CallSite): boolean {
  if (c.info.kind === 'transfer' || c.info.kind === 'send') return true;
  return c.info.kind === 'call' && c.info.value !== undefined;
}

/** Whether the contract keeps ether on behalf of others: some function books `msg.value` into state. */
export function holdsEtherForOthers(fa: FileAnalysis, c: ContractInfo): boolean {
  for (const f of fa.index.functionsOf(c)) {
    const a = fa.analyze(f);
    for (const w of a.stateWrites) {
      const p = w.ast.parent;
      const rhs =
        p?.type === 'assignment_expression' || p?.type === 'augmented_assignment_expression'
          ? field(p, 'right')
          : undefined;
      if (rhs && /\bmsg\.value\b/.test(fa.text(rhs))) return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Re-entrancy through send/transfer

const reentrancyGasLimited = defineRule(
  {
    id: 'sol.reentrancy.state-after-send',
    title: 'State written after send/transfer (gas-limited re-entrancy)',
    description:
      'The function pays with `send` or `transfer` and only afterwards updates the state its checks read. These calls forward 2,300 gas, which today is too little to re-enter, so this is not exploitable as written; it breaks checks-effects-interactions and becomes re-entrancy if the payment is changed to `call` or gas costs change.',
    remediation:
      'Update the state before paying (checks-effects-interactions), or switch to pull payments so that the order does not matter.',
    severity: 'low',
    confidence: 'medium',
    category: 'reentrancy',
    swc: 'SWC-107',
    cwe: 'CWE-841',
    scanType: 'standard',
    reasoning:
      'For each `send`/`transfer` in a non-view function reachable from an entry point and not holding a reentrancy lock, follows the control-flow graph forward from the payment and collects state variables written afterwards (directly or in called internal functions). Reports when one of them was read before the payment (the state the payout depended on). Low: the 2,300-gas stipend prevents re-entry today.',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    if (!/\.\s*(send|transfer)\s*\(/.test(ctx.file.source)) return;
    for (const fn of fa.ownFunctions()) {
      if (!fn.body || fn.kind === 'modifier' || fn.kind === 'constructor') continue;
      if (fn.mutability === 'view' || fn.mutability === 'pure') continue;
      if (fn.modifiers.some((m) => GUARD_MODIFIER.test(m.name))) continue;
      if (fa.entryPointsReaching(fn).length === 0) continue;
      const a = fa.analyze(fn);
      for (const c of a.calls) {
        if (c.info.kind !== 'send' && c.info.kind !== 'transfer') continue;
        const after = a.cfg.reachableFrom(c.node.id);
        // Writes in the branch taken when `send` fails restore what was debited: not an effect after the call.
        const failure = c.info.kind === 'send' ? testedResult(fa, c.info.node)?.failure : undefined;
        const written = new Set<string>();
        for (const w of a.stateWrites)
          if (after.has(w.node.id) && w.node !== c.node && !(failure && ancestorIs(w.ast, failure)))
            written.add(w.name);
        for (const ic of a.internalCalls)
          if (after.has(ic.site.node.id))
            for (const w of fa.analyze(ic.callee).stateWrites) written.add(w.name);
        if (written.size === 0) continue;
        const readBefore = a.stateReads.filter(
          (r) => written.has(r.name) && (!after.has(r.node.id) || r.node === c.node),
        );
        if (readBefore.length === 0) continue;
        const names = [...new Set(readBefore.map((r) => `\`${r.name}\``))].join(', ');
        ctx.report(meta, fa.statementOf(c.info.node), {
          fn,
          message: `\`${c.info.kind}\` to \`${fa.text(c.info.target ?? c.info.node)}\` happens before ${names} ${
            readBefore.length > 1 ? 'are' : 'is'
          } updated. The 2,300-gas stipend prevents re-entry today; with \`call\` this would be re-entrancy.`,
        });
      }
    }
  },
);

// ---------------------------------------------------------------------------------------------
// Fixed-amount payouts anyone can trigger

/** A literal amount (`1 ether`, `100`), a constant, or a local every definition of which is a literal. */
function fixedAmount(fa: FileAnalysis, a: FunctionAnalysis, n: AstNode, at: number): boolean {
  const e = unwrap(n);
  const t = norm(fa, e);
  if (/^\d[\d_]*(\.\d+)?(e\d+)?(wei|gwei|szabo|finney|ether)?$/.test(t)) return true;
  if (e.type === 'binary_expression') {
    const l = field(e, 'left');
    const r = field(e, 'right');
    return l !== undefined && r !== undefined && fixedAmount(fa, a, l, at) && fixedAmount(fa, a, r, at);
  }
  if (e.type !== 'identifier') return false;
  const v = a.scope.lookup(t);
  if (!v) return false;
  if (v.kind === 'state') return v.isConstant;
  if (v.kind !== 'local') return false;
  const defs = a.cfg.reachingDefs(at, t);
  return (
    defs.length > 0 &&
    defs.every((d) => d.rhs !== undefined && d.node !== at && fixedAmount(fa, a, d.rhs, d.node))
  );
}

const fixedPayout = defineRule(
  {
    id: 'sol.payout.fixed-amount-anyone',
    title: 'Anyone can trigger a fixed payout, again and again',
    description:
      'A public function pays a fixed amount to its caller and checks nothing first: no caller check, no condition, no record of who was paid. Any account can call it repeatedly and drain the contract’s ether.',
    remediation:
      'Restrict the function, pay only what the caller is owed from a balance debited first, or record that the caller was paid.',
    severity: 'high',
    confidence: 'high',
    category: 'access_control',
    swc: 'SWC-105',
    cwe: 'CWE-284',
    scanType: 'standard',
    reasoning:
      'Follows every entry point (and the internal functions it calls) to `transfer`/`send`/`call{value}` whose recipient is `msg.sender`/`tx.origin` and whose amount is a literal, a constant or a local only ever assigned literals. Reports when no condition (in the function, its modifiers or a caller check in a called internal function) precedes the payment on the control-flow graph. High where the contract books `msg.value` for others (it holds their ether); Medium otherwise.',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    if (!/\.\s*(send|transfer|call)\b/.test(ctx.file.source)) return;
    for (const fn of fa.ownFunctions()) {
      if (!fn.body || fn.kind === 'modifier' || fn.kind === 'constructor') continue;
      if (fn.mutability === 'view' || fn.mutability === 'pure' || !fa.isEntryPoint(fn)) continue;
      if (!openToAnyone(fa, fn)) continue;
      const a = fa.analyze(fn);
      if (a.modifiers.some((m) => fa.analyze(m).conditions.length > 0)) continue;
      for (const c of a.calls) {
        if (!isValueCall(c) || !c.info.target || !c.info.value) continue;
        const dest = norm(fa, stripAddressCasts(c.info.target));
        if (dest !== 'msg.sender' && dest !== 'tx.origin') continue;
        if (!fixedAmount(fa, a, c.info.value, c.node.id)) continue;
        const before = a.conditions.some((cond) => {
          if (cond.node === c.node) return cond.expr !== c.info.node && !ancestorIs(c.info.node, cond.expr);
          return a.cfg.reachableFrom(cond.node.id).has(c.node.id);
        });
        if (before) continue;
        // A guard in an internal function called before the payment.
        const guardedCallee = a.internalCalls.some(
          (ic) =>
            a.cfg.reachableFrom(ic.site.node.id).has(c.node.id) &&
            fa.analyze(ic.callee).conditions.length > 0,
        );
        if (guardedCallee) continue;
        const others = holdsEtherForOthers(fa, fn.contract);
        ctx.report(meta, fa.statementOf(c.info.node), {
          fn,
          severity: others ? 'high' : 'medium',
          message: `\`${fn.name}()\` pays \`${fa.text(c.info.value)}\` to any caller with no condition: it can be called again and again${
            others ? ', draining the ether the contract holds for others' : ''
          }.`,
        });
      }
    }
  },
);

// ---------------------------------------------------------------------------------------------
// Transaction-order dependence on the recipient

const recipientRace = defineRule(
  {
    id: 'sol.frontrun.recipient-race',
    title: 'Payout recipient set by whoever is first',
    description:
      'A payout goes to an address stored by another public function that anyone can call. Which account is paid depends on the order in which pending transactions are mined (transaction-order dependence); when the recipient is chosen by revealing an answer, others can copy it from the mempool.',
    remediation:
      'Bind the payout to the transaction that earns it (pay in the same call, or use commit-reveal), and do not let a later transaction replace the recipient of a pending payout.',
    severity: 'low',
    confidence: 'low',
    category: 'front_running',
    swc: 'SWC-114',
    cwe: 'CWE-362',
    scanType: 'standard',
    reasoning:
      'Builds the intra-contract view of who writes each state variable: for every payout whose recipient is a stored address, looks for another entry point without caller check that assigns `msg.sender` to that address. Medium when that assignment is gated by comparing the hash of a caller input (an answer visible in the mempool), Low otherwise.',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const c of ctx.file.contracts) {
      if (c.kind !== 'contract') continue;
      for (const fn of c.functions) {
        if (!fn.body || !fa.isEntryPoint(fn) || fn.kind === 'constructor' || !openToAnyone(fa, fn)) continue;
        const a = fa.analyze(fn);
        for (const call of a.calls) {
          if (!isValueCall(call) || !call.info.target) continue;
          const t = stripAddressCasts(call.info.target);
          if (t.type !== 'identifier' || !a.scope.isStateVar(fa.text(t))) continue;
          const name = fa.text(t);
          if (OWNER_NAME.test(name)) continue;
          for (const w of fa.index.functionsOf(c)) {
            if (w === fn || !fa.isEntryPoint(w) || w.kind !== 'function' || fa.checksCaller(w)) continue;
            const wa = fa.analyze(w);
            const write = wa.stateWrites.find((s) => {
              const p = s.ast.parent;
              const rhs = p?.type === 'assignment_expression' ? field(p, 'right') : undefined;
              return s.name === name && rhs !== undefined && /^(msg\.sender|tx\.origin)$/.test(norm(fa, rhs));
            });
            if (!write) continue;
            const revealed = wa.conditions.some(
              (cond) =>
                cond.node.id !== write.node.id &&
                a.cfg !== wa.cfg &&
                wa.cfg.reachableFrom(cond.node.id).has(write.node.id) &&
                descendants(cond.expr, 'call_expression').some(
                  (h) =>
                    /^(keccak256|sha3|sha256)$/.test(norm(fa, field(h, 'function') ?? h)) &&
                    fa.isUserInput(h, wa),
                ),
            );
            ctx.report(meta, fa.statementOf(call.info.node), {
              fn,
              severity: revealed ? 'medium' : 'low',
              message: revealed
                ? `\`${fn.name}()\` pays \`${name}\`, which \`${w.name}()\` gives to whoever first submits the right answer; the answer is visible in the mempool and can be copied by a faster transaction.`
                : `\`${fn.name}()\` pays \`${name}\`, which anyone can overwrite with their own address through \`${w.name}()\` in a transaction ordered before it.`,
            });
            break;
          }
        }
      }
    }
  },
);

// ---------------------------------------------------------------------------------------------
// send/call results checked to no effect

const IS_TRUE = /^(true|(\d+)==\2|!false)$/;

/** Whether a statement (a branch) does anything observable: state, calls, events, reverts, returns. */
function hasEffect(fa: FileAnalysis, a: FunctionAnalysis, branch: AstNode): boolean {
  if (descendants(branch, 'revert_statement', 'return_statement', 'emit_statement').length > 0) return true;
  if (/\bthrow\b/.test(fa.text(branch))) return true;
  if (a.stateWrites.some((w) => ancestorIs(w.ast, branch))) return true;
  return a.calls.some(
    (c) => ancestorIs(c.info.node, branch) && !(c.info.kind === 'builtin' && c.info.name === 'keccak256'),
  );
}

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

const ineffectiveCheck = defineRule(
  {
    id: 'sol.unchecked-call.ineffective-check',
    title: 'Call result checked to no effect',
    description:
      'The result of `send`/`call` is tested, but the test changes nothing: the failure branch is empty or only touches local variables, or the result is combined with a condition that is always true. A failed payment goes unnoticed just as if the result were ignored.',
    remediation: 'Revert on failure (`require(ok)`), or record the failed payment so that it can be retried.',
    severity: 'medium',
    confidence: 'medium',
    category: 'unchecked_low_level_calls',
    swc: 'SWC-104',
    cwe: 'CWE-252',
    scanType: 'standard',
    reasoning:
      'For each `send`/`call` whose result is the condition of an `if` (possibly negated), finds the branch taken on failure and checks whether it has any effect (state write, call, event, revert, return). Also reports a result OR-ed with a constant-true condition (`|| 1==1`), which makes the outcome irrelevant (Low: that code always takes the same branch).',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    if (!/\.\s*(send|call)\b/.test(ctx.file.source)) return;
    for (const fn of fa.ownFunctions()) {
      if (!fn.body) continue;
      const a = fa.analyze(fn);
      for (const c of a.calls) {
        if (c.info.kind !== 'send' && c.info.kind !== 'call') continue;
        const t = testedResult(fa, c.info.node);
        if (!t) continue;
        if (t.orTrue) {
          ctx.report(meta, fa.statementOf(c.info.node), {
            fn,
            severity: 'low',
            confidence: 'high',
            message: `The result of \`${c.info.kind}\` is OR-ed with a condition that is always true: the branch is taken whatever the call returns.`,
          });
          continue;
        }
        const { direct, failure } = t;
        if (!direct || !failure || hasEffect(fa, a, failure)) continue;
        // Both outcomes continue alike only when the success branch does something else.
        ctx.report(meta, fa.statementOf(c.info.node), {
          fn,
          message: `The branch taken when \`${c.info.kind}\` fails does nothing that lasts; the failed payment goes unnoticed.`,
        });
      }
    }
  },
);

// ---------------------------------------------------------------------------------------------
// Arithmetic on locals and narrow types

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

const localWrap = defineRule(
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
      'Applies to code without checked arithmetic (pragma below 0.8, or an `unchecked` block). For `+`, `-`, `*` (and their assignments) that write or read a local, computes the range of each operand by interval reasoning over reaching definitions (literals, the type range of parameters and state, the union over a local’s definitions) and compares the result with the width of the target type. Always out of range: confidence high; partly out of range on a type narrower than 256 bits: confidence medium. Medium when the wrapped value is used afterwards (and the wrap is certain or driven by a parameter), Low when it is never read (dead code) or only possibly wraps without caller input, informational for a narrow accumulator of caller input that cannot wrap as written.',
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

export const payoutRules: SolidityRule[] = [
  reentrancyGasLimited,
  fixedPayout,
  recipientRace,
  ineffectiveCheck,
  localWrap,
];
