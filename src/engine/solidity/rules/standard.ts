/** `standard` rules: control- and data-flow checks on the per-function CFG with def-use chains. */
import { type CallSite, type FileAnalysis, type FunctionAnalysis, usedAsNumber } from '../analysis.ts';
import { callArgs, descendants, field, unwrap, walk } from '../ast.ts';
import { baseIdentifier, type ContractInfo, type FunctionInfo, type VarInfo } from '../model.ts';
import type { AstNode } from '../parser.ts';
import { isRandomnessSinkUse, resultUse } from './lite.ts';
import { defineRule, headerLines, type SolidityRule } from './rule.ts';

const VALUE_KINDS = new Set(['transfer', 'send', 'call']);
const GUARD_MODIFIER = /nonReentrant|noReentran|reentrancyGuard|mutex|lock/i;
const OWNER_NAME =
  /owner|admin|creator|authority|controller|governance|manager|operator|ceo|cfo|coo|dev|master|root|boss|chairman|president/i;

function norm(fa: FileAnalysis, n: AstNode): string {
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
function* mutatingFunctions(fa: FileAnalysis): Generator<FunctionInfo> {
  for (const fn of fa.ownFunctions()) {
    if (fn.kind === 'modifier' || !fn.body) continue;
    if (fn.mutability === 'view' || fn.mutability === 'pure') continue;
    yield fn;
  }
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

// ---------------------------------------------------------------------------------------------
// Reentrancy

const reentrancy = defineRule(
  {
    id: 'sol.reentrancy.state-after-call',
    title: 'Reentrancy: state written after an external call',
    description:
      'The function hands control to another contract and only afterwards updates its own state. The callee can call back in while the state is stale (checks-effects-interactions is violated).',
    remediation:
      'Update state before the external call (checks-effects-interactions), or guard the function with a reentrancy lock (`nonReentrant`).',
    severity: 'high',
    confidence: 'medium',
    category: 'reentrancy',
    swc: 'SWC-107',
    cwe: 'CWE-841',
    reasoning:
      'Per function, the calls that can hand control to other code (low-level calls forwarding gas, calls on an address the caller chooses — for an internal function, an address one of its call sites receives from its own caller), directly or through internal calls, and the state writes reachable after them on the CFG. A lock counts when it is a `nonReentrant`-style modifier or a flag the body tests and sets before the call (its release is not stale state); a locked function is reported only when unlocked entry points read the state written after the call. High when ether is sent or the call is reached through an internal function, Medium otherwise, Low when the callee is a stored address only privileged functions set; confidence high when the written state was read before the call.',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of mutatingFunctions(fa)) {
      if (fn.kind === 'constructor') continue;
      // A lock protects only the functions that take it: a locked function that updates state
      // after its call is still re-entered through unlocked functions that use that state.
      const locked = fn.modifiers.some((m) => GUARD_MODIFIER.test(m.name));
      if (fa.entryPointsReaching(fn).length === 0) continue;
      const a = fa.analyze(fn);
      const sites: Array<{ site: CallSite; via?: FunctionInfo }> = [];
      for (const c of a.calls) if (fa.isReentrantCall(a, c)) sites.push({ site: c });
      for (const ic of a.internalCalls)
        if (fa.reentrantCall(ic.callee)) sites.push({ site: ic.site, via: ic.callee });
      for (const { site, via } of sites) {
        const after = a.cfg.reachableFrom(site.node.id);
        const written = new Set<string>();
        for (const w of a.stateWrites) if (after.has(w.node.id)) written.add(w.name);
        for (const ic of a.internalCalls) {
          if (after.has(ic.site.node.id) && ic.callee !== via && fa.writesState(ic.callee)) {
            for (const w of fa.analyze(ic.callee).stateWrites) written.add(w.name);
          }
        }
        // A lock taken in the body (`if (busy) throw; busy = true; call; busy = false;`): its own
        // release is no stale state, and functions that test the flag are locked too.
        const lock = inlineLock(fa, a, site);
        if (lock) written.delete(lock);
        if (written.size === 0) continue;
        const names = [...written].map((n) => `\`${n}\``).join(', ');
        if (locked || lock) {
          const readers = unlockedReaders(fa, fn, written, lock);
          if (readers.length === 0) continue;
          const acting = readers.filter((g) => g.mutability !== 'view' && g.mutability !== 'pure');
          const shown = (acting.length ? acting : readers).map((g) => `\`${g.name}()\``).join(', ');
          ctx.report(meta, fa.statementOf(site.info.node), {
            fn,
            severity: acting.length ? 'high' : 'medium',
            message: acting.length
              ? `\`${fn.name}\` is locked but writes ${names} after its external call; ${shown} ${acting.length > 1 ? 'are' : 'is'} not locked and act${acting.length > 1 ? '' : 's'} on the stale value (cross-function reentrancy).`
              : `\`${fn.name}\` is locked but writes ${names} after its external call; the view ${shown} reports the stale value to anyone who calls it meanwhile (read-only reentrancy).`,
          });
          continue;
        }
        const readBefore = a.stateReads.some((r) => written.has(r.name) && !after.has(r.node.id));
        const sendsValue = site.info.value !== undefined;
        const trusted = !via && trustedCallee(fa, fn, site);
        ctx.report(meta, fa.statementOf(site.info.node), {
          fn,
          severity: trusted ? 'low' : sendsValue || via ? 'high' : 'medium',
          ...(trusted
            ? {
                confidence: 'low' as const,
                message: `External call to \`${fa.text(site.info.target ?? site.info.node)}\` happens before ${names} ${
                  written.size > 1 ? 'are' : 'is'
                } updated. The callee is a stored address that only privileged functions set, so re-entry needs that account to be hostile.`,
              }
            : {}),
          confidence: readBefore ? 'high' : 'medium',
          message: via
            ? `\`${fn.name}\` calls \`${via.name}()\`, which makes an external call, and writes ${names} afterwards; the callee can re-enter before the update.`
            : `External call to \`${fa.text(site.info.target ?? site.info.node)}\` happens before ${names} ${
                written.size > 1 ? 'are' : 'is'
              } updated; the callee can re-enter \`${fn.name}\` and act on the stale state.`,
        });
      }
      // An external call made by a modifier before the function body runs.
      if (locked || a.stateWrites.length === 0) continue;
      for (const mod of a.modifiers) {
        const ma = fa.analyze(mod);
        const placeholder = ma.cfg.nodes.find((n) => n.kind === 'placeholder');
        if (!placeholder) continue;
        const call = ma.calls.find(
          (c) => fa.isReentrantCall(ma, c) && ma.cfg.reachableFrom(c.node.id).has(placeholder.id),
        );
        if (!call) continue;
        ctx.report(meta, fn.node, {
          fn,
          lines: headerLines(fn),
          message: `Modifier \`${mod.name}\` calls \`${fa.text(call.info.target ?? call.info.node)}\` before the body of \`${fn.name}\` writes ${[
            ...new Set(a.stateWrites.map((w) => `\`${w.name}\``)),
          ].join(', ')}; the callee can re-enter first.`,
        });
      }
    }
  },
);

function readsName(fa: FileAnalysis, expr: AstNode, name: string): boolean {
  return descendants(expr, 'identifier').some((i) => i.field !== 'property' && fa.text(i) === name);
}

/**
 * A reentrancy lock the function takes itself before `site`: a state flag it tests in a condition
 * and then sets to `true`/a non-zero literal, both on the way to the call. Re-entering the
 * function fails the test. Returns the flag's name.
 */
function inlineLock(fa: FileAnalysis, a: FunctionAnalysis, site: CallSite): string | undefined {
  const before = (id: number): boolean => id !== site.node.id && a.cfg.reachableFrom(id).has(site.node.id);
  for (const w of a.stateWrites) {
    const asg = w.ast.parent;
    const left = asg?.type === 'assignment_expression' ? field(asg, 'left') : undefined;
    if (!asg || !left || unwrap(left) !== w.ast || w.ast.type !== 'identifier') continue;
    const rhs = field(asg, 'right');
    if (!rhs || !/^(true|[1-9]\d*)$/.test(norm(fa, rhs)) || !before(w.node.id)) continue;
    if (a.cfg.reachableFrom(site.node.id).has(w.node.id)) continue;
    const tested = a.conditions.some(
      (c) =>
        before(c.node.id) && !a.cfg.reachableFrom(w.node.id).has(c.node.id) && readsName(fa, c.expr, w.name),
    );
    if (tested) return w.name;
  }
  return undefined;
}

/**
 * Whether the called address is stored state that no unprivileged entry point can set (a fixed
 * partner contract, an owner-configured recipient): the caller cannot choose who is called.
 */
function trustedCallee(fa: FileAnalysis, fn: FunctionInfo, site: CallSite): boolean {
  if (!site.info.target) return false;
  const a = fa.analyze(fn);
  const base = baseIdentifier(stripAddressCasts(site.info.target));
  if (!base) return false;
  const name = fa.text(base);
  if (!a.scope.isStateVar(name)) return false;
  return fa
    .writersOf(fn.contract, name)
    .every((w) => w.kind === 'constructor' || !fa.isEntryPoint(w) || fa.checksCaller(w));
}

/**
 * Entry points of the contract, other than `fn`, that take no reentrancy lock and read one of
 * `names` — including views, whose stale answers other contracts act on.
 */
function unlockedReaders(
  fa: FileAnalysis,
  fn: FunctionInfo,
  names: Set<string>,
  lock?: string,
): FunctionInfo[] {
  return fa.index.functionsOf(fn.contract).filter((g) => {
    if (g === fn || !fa.isEntryPoint(g) || g.modifiers.some((m) => GUARD_MODIFIER.test(m.name))) return false;
    const ga = fa.analyze(g);
    if (lock && ga.conditions.some((c) => readsName(fa, c.expr, lock))) return false;
    return ga.stateReads.some((r) => names.has(r.name));
  });
}

// ---------------------------------------------------------------------------------------------
// Access control

/**
 * State variables that gate callers: addresses compared with `msg.sender`, role maps looked up
 * with it (mappings to bool or address), and owner-like address variables. Numeric mappings
 * (balances, allowances) are per-user data, not roles. Each is the declaration the check resolves
 * to in the contract declaring the check: a derived contract redeclaring `owner` (pre-0.6
 * shadowing) has a second, separate variable, and writing that one grants nothing.
 */
function privilegedVars(fa: FileAnalysis, c: ContractInfo): Set<VarInfo> {
  const out = new Set<VarInfo>();
  const isRoleType = (v: VarInfo | undefined): v is VarInfo => {
    if (!v || v.isConstant) return false;
    return (
      /^address\b/.test(v.typeText) ||
      /=>\s*(bool|address(\s+payable)?)\s*\)$/.test(v.typeText) ||
      /^address\s*\[/.test(v.typeText)
    );
  };
  const stateVarAt = (a: FunctionAnalysis, base: AstNode | undefined): VarInfo | undefined => {
    if (!base) return undefined;
    const name = fa.text(base);
    return a.scope.isStateVar(name) ? a.scope.stateVars.get(name) : undefined;
  };
  for (const x of fa.index.lineage(c)) {
    for (const f of [...x.functions, ...x.modifiers.values()]) {
      const a = fa.analyze(f);
      for (const cond of a.conditions) {
        walk(cond.expr, (n) => {
          if (n.type === 'binary_expression' && (n.op === '==' || n.op === '!=')) {
            const l = field(n, 'left');
            const r = field(n, 'right');
            if (!l || !r) return undefined;
            const other = /^(msg\.sender|tx\.origin)$/.test(norm(fa, l))
              ? r
              : /^(msg\.sender|tx\.origin)$/.test(norm(fa, r))
                ? l
                : undefined;
            const v = other ? stateVarAt(a, baseIdentifier(other)) : undefined;
            if (isRoleType(v)) out.add(v);
          }
          if (n.type === 'array_access') {
            const idx = field(n, 'index');
            const v = stateVarAt(a, baseIdentifier(n));
            if (idx && /^(msg\.sender|tx\.origin)$/.test(norm(fa, idx)) && isRoleType(v)) out.add(v);
          }
          return undefined;
        });
      }
    }
  }
  // Owner-like addresses gate callers through checks this file may not hold (a base imported
  // from elsewhere) — unless the name is declared twice in the lineage: then the checks found
  // above decide which of the two is the gate.
  const declared = new Map<string, number>();
  for (const x of fa.index.lineage(c))
    for (const name of x.stateVars.keys()) declared.set(name, (declared.get(name) ?? 0) + 1);
  for (const [name, v] of fa.index.stateVarsOf(c)) {
    if (/^address\b/.test(v.typeText) && OWNER_NAME.test(name) && !v.isConstant && declared.get(name) === 1)
      out.add(v);
  }
  return out;
}

/** Modifiers from libraries outside the file that let a function run only once (OpenZeppelin `Initializable`). */
const ONCE_MODIFIER = /^(initializer|reinitializer)$/;

/**
 * Whether the function can run only once: it (or one of its modifiers) tests a state flag and
 * also sets it to a literal (`require(!initialized); initialized = true;`), or it carries an initializer
 * modifier defined outside the file.
 */
export function runsOnce(fa: FileAnalysis, fn: FunctionInfo): boolean {
  const a = fa.analyze(fn);
  if (fn.modifiers.some((m) => ONCE_MODIFIER.test(m.name) && !fa.index.modifierOf(fn.contract, m.name)))
    return true;
  for (const part of [a, ...a.modifiers.map((m) => fa.analyze(m))]) {
    // Flags set to a literal (`= true`, `= 1`): a counter or an address is no latch.
    const written = new Set(
      part.stateWrites
        .filter((w) => {
          const p = w.ast.parent;
          const rhs = p?.type === 'assignment_expression' ? field(p, 'right') : undefined;
          return rhs !== undefined && /^(true|\d+)$/.test(norm(fa, rhs));
        })
        .map((w) => w.name),
    );
    if (written.size === 0) continue;
    const latch = part.conditions.some((c) =>
      descendants(c.expr, 'identifier').some(
        (i) => i.field !== 'property' && part.scope.isStateVar(fa.text(i)) && written.has(fa.text(i)),
      ),
    );
    if (latch) return true;
  }
  return false;
}

const unprotectedOwnerWrite = defineRule(
  {
    id: 'sol.access.unprotected-privileged-write',
    title: 'Anyone can take over a privileged role',
    description:
      'A public function writes a variable that gates privileged actions (an owner, admin or role map) and checks nothing about the caller. Any account can make itself the owner.',
    remediation:
      'Restrict the function (`onlyOwner` or a role check), or make it a real constructor / an initializer that can run only once.',
    severity: 'high',
    confidence: 'medium',
    category: 'access_control',
    swc: 'SWC-105',
    cwe: 'CWE-284',
    reasoning:
      'Finds the state variables that gate callers — addresses compared with `msg.sender`/`tx.origin` and role maps looked up with it, in any function or modifier of the lineage — resolved to the declaration the check reads (a pre-0.6 redeclaration in a derived contract is a separate variable, and writing it grants nothing); owner-like addresses count by name only when declared once. Reports public functions that write one of them with no caller check, no test of the variable itself, no run-once latch and no required payment.',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const c of ctx.file.contracts) {
      if (c.kind !== 'contract') continue;
      const privileged = privilegedVars(fa, c);
      if (privileged.size === 0) continue;
      for (const fn of c.functions) {
        if (fn.kind !== 'function' || !fa.isEntryPoint(fn) || fa.checksCaller(fn)) continue;
        const a = fa.analyze(fn);
        const writes = a.stateWrites.filter((w) => {
          const v = a.scope.isStateVar(w.name) ? a.scope.stateVars.get(w.name) : undefined;
          return v !== undefined && privileged.has(v) && !w.node.loops.length;
        });
        if (writes.length === 0) continue;
        // A one-time initializer that first checks the variable is unset is guarded.
        const guarded = writes.some((w) =>
          [...a.conditions, ...a.modifiers.flatMap((m) => fa.analyze(m).conditions)].some((cond) =>
            [...descendants(cond.expr, 'identifier')].some((i) => fa.text(i) === w.name),
          ),
        );
        if (guarded || runsOnce(fa, fn)) continue;
        // A role bought with a minimum payment (`require(msg.value >= fee)`) is a sale, not a takeover.
        if (fn.mutability === 'payable' && a.conditions.some((cond) => /msg\.value/.test(fa.text(cond.expr))))
          continue;
        const looksLikeConstructor =
          fn.name.toLowerCase() === c.name.toLowerCase() ||
          /^(constructor|init|initiali[sz]e|setup)/i.test(fn.name);
        const names = [...new Set(writes.map((w) => `\`${w.name}\``))].join(', ');
        ctx.report(meta, fn.node, {
          fn,
          lines: headerLines(fn),
          message: looksLikeConstructor
            ? `\`${fn.name}()\` looks like a constructor or initializer but is a public function: anyone can call it again and overwrite ${names}.`
            : `\`${fn.name}()\` writes ${names} without checking the caller: anyone can take over the role.`,
        });
      }
    }
  },
);

const arbitrarySend = defineRule(
  {
    id: 'sol.access.unprotected-ether-withdrawal',
    title: 'Anyone can withdraw ether',
    description:
      'A public function sends ether to an address or in an amount the caller chooses, with no caller check and no bookkeeping of what the caller is owed.',
    remediation:
      'Restrict the function to an owner/role, or pay only what the caller is owed from a balance that is debited first.',
    severity: 'high',
    confidence: 'medium',
    category: 'access_control',
    swc: 'SWC-105',
    cwe: 'CWE-284',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of mutatingFunctions(fa)) {
      if (fn.kind === 'constructor' || !openToAnyone(fa, fn)) continue;
      const a = fa.analyze(fn);
      // Gated payouts (game rules, deadlines, balances) are judged by other rules.
      if (a.conditions.length > 0) continue;
      for (const c of a.calls) {
        if (!isValueCall(c) || !c.info.target || !c.info.value) continue;
        const amount = norm(fa, c.info.value);
        if (/msg\.value/.test(amount) || /^0(\s*wei)?$/.test(amount)) continue; // the caller's own ether
        const dest = norm(fa, stripAddressCasts(c.info.target));
        // Bookkeeping: state indexed by the caller or by the destination (what they are owed).
        const keyed = a.stateReads.some((r) => {
          const acc = r.ast.parent;
          if (acc?.type !== 'array_access') return false;
          const idx = field(acc, 'index');
          return idx !== undefined && (norm(fa, idx) === 'msg.sender' || norm(fa, idx) === dest);
        });
        if (keyed) continue;
        const destFromInput = isParamRead(fa, a, c.info.target);
        const wholeBalance = /(this|address\(this\))\.balance/.test(amount);
        const amountFromInput = isParamRead(fa, a, c.info.value);
        const toCaller = dest === 'msg.sender' || dest === 'tx.origin';
        const hit = (destFromInput || toCaller) && (wholeBalance || amountFromInput);
        if (!hit) continue;
        ctx.report(meta, fa.statementOf(c.info.node), {
          fn,
          message: `\`${fn.name}()\` sends ${wholeBalance ? 'the whole balance' : 'ether'} to \`${fa.text(
            c.info.target,
          )}\` without any caller check: anyone can drain the contract.`,
        });
      }
    }
  },
);

const balanceNotDebited = defineRule(
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

const invertedBalanceCheck = defineRule(
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

const delegatecallControlled = defineRule(
  {
    id: 'sol.delegatecall.controlled',
    title: 'Delegatecall to a caller-controlled target or with caller-controlled data',
    description:
      'A `delegatecall` runs foreign code in this contract’s storage context. Here the caller chooses the target or the call data, so they can run any function of the callee — or any code at all — against this contract’s storage (ownership, balances).',
    remediation:
      'Delegatecall only to fixed, trusted implementations, and only with selectors you whitelist; restrict who can trigger it.',
    severity: 'high',
    confidence: 'medium',
    category: 'access_control',
    swc: 'SWC-112',
    cwe: 'CWE-829',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of mutatingFunctions(fa)) {
      const a = fa.analyze(fn);
      const taint = a.cfg.taint((e) => fa.isUserInput(e, a));
      for (const c of a.calls) {
        if (c.info.kind !== 'delegatecall' && c.info.kind !== 'callcode') continue;
        const targetTainted = c.info.target && taint.isTaintedExpr(c.info.target, c.node.id);
        const dataTainted = c.info.args.some((x) => taint.isTaintedExpr(x, c.node.id));
        if (!targetTainted && !dataTainted) {
          if (!openToAnyone(fa, fn)) continue;
          ctx.report(meta, fa.statementOf(c.info.node), {
            fn,
            severity: 'medium',
            message: `Anyone can make \`${fn.name}()\` delegatecall into \`${fa.text(
              c.info.target ?? c.info.node,
            )}\`: the callee runs with this contract’s storage, so its storage layout must match exactly.`,
          });
          continue;
        }
        if (fa.checksCaller(fn)) continue;
        ctx.report(meta, fa.statementOf(c.info.node), {
          fn,
          message: targetTainted
            ? `The delegatecall target \`${fa.text(c.info.target!)}\` comes from the caller: they can run arbitrary code in this contract’s storage.`
            : `The delegatecall forwards caller-supplied data to \`${fa.text(
                c.info.target ?? c.info.node,
              )}\`: any public function of the callee can be run on this contract’s storage.`,
        });
      }
    }
  },
);

const tautology = defineRule(
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

const arrayLengthWrite = defineRule(
  {
    id: 'sol.storage.array-length-manipulation',
    title: 'Write to a storage array whose length the caller controls',
    description:
      'The length of a dynamic storage array can be set or decremented by callers, and elements are written at a caller-chosen index. With a manipulated (underflowed) length, the index reaches any storage slot, including the owner.',
    remediation:
      'Never assign or decrement `.length` directly; use `push`/`pop` (Solidity ≥ 0.6) and bound indexes.',
    severity: 'high',
    confidence: 'medium',
    category: 'access_control',
    swc: 'SWC-124',
    cwe: 'CWE-123',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const c of ctx.file.contracts) {
      const manipulated = new Set<string>();
      for (const f of c.functions) {
        if (!fa.isEntryPoint(f) || fa.checksCaller(f)) continue;
        for (const w of fa.analyze(f).stateWrites) {
          const t = unwrap(w.ast);
          if (t.type === 'member_expression' && fa.text(field(t, 'property')!) === 'length')
            manipulated.add(w.name);
        }
      }
      if (manipulated.size === 0) continue;
      for (const f of c.functions) {
        if (!fa.isEntryPoint(f)) continue;
        const a = fa.analyze(f);
        for (const w of a.stateWrites) {
          const t = unwrap(w.ast);
          if (t.type !== 'array_access' || !manipulated.has(w.name)) continue;
          const idx = field(t, 'index');
          if (!idx || !fa.isUserInput(idx, a)) continue;
          ctx.report(meta, fa.statementOf(w.ast), { fn: f });
        }
      }
    }
  },
);

// ---------------------------------------------------------------------------------------------
// Arithmetic

const ARITH_OPS = new Set(['+', '-', '*', '**']);
const AUG_OPS = new Set(['+=', '-=', '*=']);

const arithmetic = defineRule(
  {
    id: 'sol.arithmetic.unchecked-overflow',
    title: 'Integer overflow or underflow',
    description:
      'Before Solidity 0.8, and inside `unchecked { … }` blocks since, arithmetic wraps around silently. This operation combines a caller-supplied value with stored state (or another input) and no check bounds the result, so it can overflow or underflow.',
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
      // Caller-chosen numbers: parameters. Ether amounts (`msg.value`, balances) are bounded by
      // the ether supply (< 2^87) and cannot overflow 256-bit arithmetic.
      const taint = a.cfg.taint((e) => isParamRead(fa, a, e), { valuesOnly: true });
      // Relational comparisons in the function's conditions: `a >= b` guards `a - b`, `a + b >= a` guards `a + b`.
      const guards: Array<{ l: string; r: string }> = [];
      for (const c of [...a.conditions, ...a.modifiers.flatMap((m) => fa.analyze(m).conditions)]) {
        for (const b of descendants(c.expr, 'binary_expression')) {
          if (!b.op || !['<', '>', '<=', '>='].includes(b.op)) continue;
          const l = field(b, 'left');
          const r = field(b, 'right');
          if (l && r) guards.push({ l: norm(fa, l), r: norm(fa, r) });
        }
      }
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
        const isLit = (s: string): boolean =>
          /^\d[\d_.]*(e\d+)?(\w+)?$|^0x[\da-f]+$/i.test(s) || /^[A-Z][A-Z0-9_]*$/.test(s);
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
        // Guarded: some condition of the function mentions both operands (`require(a >= b)`).
        const guarded = guards.some(
          (g) => (g.l.includes(lt) && g.r.includes(rt)) || (g.l.includes(rt) && g.r.includes(lt)),
        );
        if (guarded) return undefined;
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

/** Whether the expression sits in an `unchecked { … }` block (wrapping arithmetic in 0.8+). */
export function insideUncheckedBlock(n: AstNode): boolean {
  for (let p = n.parent; p; p = p.parent) {
    if (p.type === 'block_statement' && p.children.some((c) => c.type === 'unchecked')) return true;
    if (p.type === 'function_body' || p.type === 'function_definition') return false;
  }
  return false;
}

function ancestorIs(n: AstNode, maybe: AstNode): boolean {
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
function isParamRead(fa: FileAnalysis, a: FunctionAnalysis, n: AstNode): boolean {
  let hit = false;
  walk(n, (x) => {
    if (hit || x.field === 'index') return false;
    if (x.type === 'member_expression' && fa.text(field(x, 'property') ?? x) === 'length') return false;
    if (x.type === 'identifier' && x.field !== 'property' && a.scope.isParam(fa.text(x))) hit = true;
    return undefined;
  });
  return hit;
}

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

// ---------------------------------------------------------------------------------------------
// Randomness and time

const TIMESTAMP = /^(block\.timestamp|now)$/;

/** State variables assigned from a value matching `pattern` (in any function or initializer). */
function stateVarsFrom(
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

/** Whether `i` lies in the argument of a `blockhash(…)` call within `root`. */
function insideBlockhashArg(fa: FileAnalysis, i: AstNode, root: AstNode): boolean {
  for (let p = i.parent; p; p = p.parent) {
    if (
      p.type === 'call_expression' &&
      /^(blockhash|block\.blockhash)$/.test(norm(fa, field(p, 'function') ?? p))
    )
      return true;
    if (p === root) break;
  }
  return false;
}

const randomnessFlow = defineRule(
  {
    id: 'sol.randomness.block-value-flow',
    title: 'Block value flows into a random number',
    description:
      'A block value (or the caller’s address) is stored — in a local or a state variable — and later fed into a hash, `blockhash` or a modulo that picks an outcome. Miners and other contracts can predict or steer it.',
    remediation:
      'Use a verifiable randomness source (VRF) or commit-reveal; do not derive outcomes from block data.',
    severity: 'high',
    confidence: 'medium',
    category: 'bad_randomness',
    swc: 'SWC-120',
    cwe: 'CWE-330',
    reasoning:
      'Taints block values (and addresses cast to integers) through locals and state variables over def-use chains, and walks back from hashes used as numbers, `blockhash(…)` arguments and modulo operands to the statements that read the block value. A state variable that only stores `block.number` (±k) to be passed to `blockhash` in a later transaction is a commitment to a block not yet hashed, not an entropy source: the `blockhash` read is reported by `sol.randomness.block-values` instead.',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    // `block.number` feeds hashes and `blockhash`; on its own, `block.number % n` is usually
    // round arithmetic, so it is not a source for modulo sinks.
    const ENTROPY = /^(block\.(timestamp|difficulty|coinbase|gaslimit|prevrandao|blockhash)|now)$/;
    // Cheap text filter: a file that never reads a block value or casts an address has nothing to find.
    if (!/\bblock\s*\.|\bnow\b|\bblockhash\b|int\d*\s*\(\s*msg\.sender/.test(ctx.file.source)) return;
    for (const c of ctx.file.contracts) {
      const blockState = stateVarsFrom(fa, c, (n) => fa.readsBlockValue(n));
      const entropyState = stateVarsFrom(fa, c, (n) => fa.readsBlockValue(n, ENTROPY) || hasBlockhash(fa, n));
      const reportedOrigins = new Set<AstNode>();
      const stateNames = [...blockState.keys()];
      for (const fn of c.functions) {
        if (!fn.body) continue;
        const body = ctx.file.source.slice(fn.body.start, fn.body.end);
        if (
          !/\bblock\s*\.|\bnow\b|\bblockhash\b|int\d*\s*\(\s*msg\.sender/.test(body) &&
          !stateNames.some((n) => body.includes(n))
        )
          continue;
        const a = fa.analyze(fn);
        const readsState = (e: AstNode, vars: Map<string, AstNode[]>): boolean =>
          descendants(e, 'identifier').some(
            (i) => i.field !== 'property' && a.scope.isStateVar(fa.text(i)) && vars.has(fa.text(i)),
          );
        const castAddress = (e: AstNode): boolean =>
          descendants(e, 'call_expression').some((x) =>
            /^u?int\d*\((msg\.sender|block\.coinbase)\)$/.test(norm(fa, x)),
          );
        const forHash = a.cfg.taint(
          (e) => fa.readsBlockValue(e) || castAddress(e) || readsState(e, blockState),
        );
        const forModulo = a.cfg.taint(
          (e) =>
            fa.readsBlockValue(e, ENTROPY) ||
            hasBlockhash(fa, e) ||
            castAddress(e) ||
            readsState(e, entropyState) ||
            hasHashOf(fa, e),
        );
        // Sinks fed through variables: operands tainted at the sink's node.
        const slices: Array<{
          node: number;
          operands: AstNode[];
          taint: typeof forHash;
          blockhash?: boolean;
        }> = [];
        walk(fn.body, (x) => {
          const node =
            x.type === 'call_expression' || x.type === 'binary_expression' ? a.cfg.nodeOf(x) : undefined;
          if (!node) return undefined;
          const callee = x.type === 'call_expression' ? norm(fa, field(x, 'function') ?? x) : '';
          const isHash = /^(keccak256|sha3|sha256)$/.test(callee);
          if ((isHash && usedAsNumber(fa, a, x)) || /^(blockhash|block\.blockhash)$/.test(callee)) {
            const ops = callArgs(x).filter((o) => forHash.isTaintedExpr(o, node.id));
            if (ops.length) slices.push({ node: node.id, operands: ops, taint: forHash, blockhash: !isHash });
          } else if (x.type === 'binary_expression' && x.op === '%') {
            const l = field(x, 'left');
            if (l && forModulo.isTaintedExpr(l, node.id))
              slices.push({ node: node.id, operands: [l], taint: forModulo });
          }
          return undefined;
        });
        // Walk def-use chains backwards from each sink; report statements that read block values.
        const visited = new Set<number>();
        const report = new Set<number>();
        // State read on the way to a sink; `true` when every such read only names the block whose
        // hash is taken (`blockhash(stored)`), not the entropy itself.
        const stateSeen = new Map<string, boolean>();
        const visit = (expr: AstNode, at: number, taint: typeof forHash, asBlockNumber: boolean): void => {
          for (const i of descendants(expr, 'identifier')) {
            if (i.field === 'property') continue;
            const name = fa.text(i);
            const blockNumberOnly = asBlockNumber || insideBlockhashArg(fa, i, expr);
            if (a.scope.isStateVar(name) && blockState.has(name))
              stateSeen.set(name, (stateSeen.get(name) ?? true) && blockNumberOnly);
            if (!a.scope.locals.has(name)) continue;
            for (const d of a.cfg.reachingDefs(at, name)) {
              const idx = a.cfg.defs.indexOf(d);
              if (visited.has(idx) || !taint.tainted.has(idx) || !d.rhs) continue;
              visited.add(idx);
              if (fa.readsBlockValue(d.rhs) || castAddress(d.rhs)) report.add(d.node);
              visit(d.rhs, d.node, taint, blockNumberOnly);
            }
          }
        };
        for (const sl of slices)
          for (const o of sl.operands) visit(o, sl.node, sl.taint, sl.blockhash === true);
        for (const id of report) {
          const node = a.cfg.nodes[id]!;
          if (!node.ast || containsLiteHit(fa, node.ast)) continue;
          ctx.report(meta, node.kind === 'cond' ? node.ast : node.ast, {
            fn,
            message: `A block value read here reaches a hash, \`blockhash\` or modulo that produces a “random” outcome in \`${fn.name}()\`.`,
          });
        }
        for (const [name, blockNumberOnly] of stateSeen) {
          for (const origin of blockState.get(name)!) {
            if (reportedOrigins.has(origin) || containsLiteHit(fa, origin)) continue;
            // `stored = block.number` in one transaction and `blockhash(stored)` in a later one
            // commits to a block whose hash is unknown when stored: the weakness, if any, is at
            // the `blockhash` read (reported there), not at the commitment.
            if (
              blockNumberOnly &&
              !fa.readsBlockValue(origin, ENTROPY) &&
              !hasBlockhash(fa, origin) &&
              !castAddress(origin)
            )
              continue;
            reportedOrigins.add(origin);
            const originFn = c.functions.find(
              (f) => f.node.start <= origin.start && origin.end <= f.node.end,
            );
            ctx.report(meta, origin, {
              fn: originFn,
              contract: c,
              message: `\`${name}\` stores a block value that \`${fn.name}()\` later uses as a source of randomness.`,
            });
          }
        }
      }
    }
  },
);

function hasBlockhash(fa: FileAnalysis, n: AstNode): boolean {
  return descendants(n, 'call_expression').some((x) =>
    /^(blockhash|block\.blockhash)$/.test(norm(fa, field(x, 'function') ?? x)),
  );
}

/** A hash whose arguments read block values: a "random number" in the making. */
function hasHashOf(fa: FileAnalysis, n: AstNode): boolean {
  return descendants(n, 'call_expression').some(
    (x) =>
      /^(keccak256|sha3|sha256)$/.test(norm(fa, field(x, 'function') ?? x)) &&
      callArgs(x).some((arg) => fa.readsBlockValue(arg)),
  );
}

/** Whether the lite rule already reports something inside the statement. */
function containsLiteHit(fa: FileAnalysis, n: AstNode): boolean {
  let hit = false;
  walk(n, (x) => {
    if (hit) return false;
    if (isRandomnessSinkUse(fa, x)) hit = true;
    return undefined;
  });
  return hit;
}

/** Durations shorter than this are within reach of a proposer's timestamp drift (the 15-second rule, with margin). */
const SHORT_WINDOW_SECONDS = 15 * 60;
const UNIT_SECONDS: Record<string, number> = {
  seconds: 1,
  minutes: 60,
  hours: 3600,
  days: 86400,
  weeks: 604800,
  years: 31536000,
};

const timestampDependence = defineRule(
  {
    id: 'sol.time.timestamp-dependence',
    title: 'Decision depends on block.timestamp',
    description:
      'A decision depends on `block.timestamp`/`now` at a granularity the block proposer controls: an equality test, a window of a few minutes, or a function that hands the timestamp to callers as a value to decide on. The proposer can shift the timestamp by several seconds.',
    remediation:
      'Do not use timestamps for equality tests, short windows or randomness; allow for a drift of at least 15 seconds.',
    severity: 'low',
    confidence: 'medium',
    category: 'time_manipulation',
    swc: 'SWC-116',
    cwe: 'CWE-829',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    const readsTime = (n: AstNode): boolean => fa.readsBlockValue(n, TIMESTAMP);
    if (!/\bnow\b|block\s*\.\s*timestamp/.test(ctx.file.source)) return;
    for (const c of ctx.file.contracts) {
      const timeState = stateVarsFrom(fa, c, readsTime);
      const stateVars = fa.index.stateVarsOf(c);
      /** Seconds denoted by a duration expression (`5 minutes`, `ONE_MINUTE`), if known. */
      const seconds = (e: AstNode): number | undefined => {
        const t = fa.text(unwrap(e)).trim();
        const m = /^(\d+)\s*(seconds|minutes|hours|days|weeks|years)?$/.exec(t);
        if (m) return Number(m[1]) * (UNIT_SECONDS[m[2] ?? 'seconds'] ?? 1);
        const v = stateVars.get(t);
        return v?.initializer && v.initializer !== e ? seconds(v.initializer) : undefined;
      };
      const shortWindow = (e: AstNode): boolean =>
        [e, ...descendants(e, 'number_literal', 'identifier')].some((x) => {
          const s = seconds(x);
          return s !== undefined && s > 0 && s < SHORT_WINDOW_SECONDS;
        });
      const fineGrained = new Set<string>();
      for (const fn of c.functions) {
        if (!fn.body) continue;
        const a = fa.analyze(fn);
        const taint = a.cfg.taint(readsTime);
        for (const cond of a.conditions) {
          for (const b of descendants(cond.expr, 'binary_expression')) {
            if (!b.op || !['<', '>', '<=', '>=', '==', '!='].includes(b.op)) continue;
            if (descendants(b, 'binary_expression').some((x) => x.op === '%')) continue;
            const l = field(b, 'left');
            const r = field(b, 'right');
            if (!l || !r) continue;
            const lt = readsTime(l) || taint.isTaintedExpr(l, cond.node.id);
            const rt = readsTime(r) || taint.isTaintedExpr(r, cond.node.id);
            if (!lt && !rt) continue;
            const equality = b.op === '==' || b.op === '!=';
            if (!equality && !shortWindow(b)) continue;
            for (const i of descendants(b, 'identifier'))
              if (timeState.has(fa.text(i))) fineGrained.add(fa.text(i));
            ctx.report(meta, cond.kind === 'require' ? fa.statementOf(cond.expr) : cond.expr, {
              fn,
              message: equality
                ? 'The block timestamp is tested for (in)equality; the proposer chooses it within a drift of several seconds.'
                : 'The block timestamp decides a window of a few minutes, within reach of the proposer’s drift.',
            });
            break;
          }
        }
        // A function whose result is the timestamp, or a decision on it, for callers to act on.
        for (const r of descendants(fn.body, 'return_statement')) {
          if (
            !readsTime(r) ||
            fn.returns.length !== 1 ||
            descendants(r, 'binary_expression').some((x) => x.op === '-' || x.op === '+')
          )
            continue;
          ctx.report(meta, r, {
            fn,
            message: `\`${fn.name}()\` returns ${/^bool/.test(fn.returns[0]!.typeText) ? 'a decision on' : ''} the block timestamp for callers to act on.`,
          });
        }
      }
      for (const [name, origins] of timeState) {
        if (!fineGrained.has(name)) continue;
        for (const o of origins) {
          if (o.type === 'state_variable_declaration') continue;
          const originFn = c.functions.find((f) => f.node.start <= o.start && o.end <= f.node.end);
          ctx.report(meta, o, {
            fn: originFn,
            contract: c,
            message: `\`${name}\` records the block timestamp for a fine-grained comparison; the proposer can shift it.`,
          });
        }
      }
    }
  },
);

// ---------------------------------------------------------------------------------------------
// Denial of service

const callInLoop = defineRule(
  {
    id: 'sol.dos.external-call-in-loop',
    title: 'External call inside a loop',
    description:
      'A loop pays or calls several addresses. If one recipient reverts (or runs out of gas) the whole transaction fails, and nobody after it is ever served; a long list can also exceed the block gas limit.',
    remediation:
      'Let each recipient withdraw their own payment (pull payments) instead of pushing payments in a loop.',
    severity: 'medium',
    confidence: 'medium',
    category: 'denial_of_service',
    swc: 'SWC-113',
    cwe: 'CWE-400',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of mutatingFunctions(fa)) {
      const a = fa.analyze(fn);
      for (const c of a.calls) {
        if (c.node.loops.length === 0) continue;
        const reverting =
          c.info.kind === 'transfer' ||
          ((c.info.kind === 'send' || c.info.kind === 'call') &&
            resultUse(c.info.node, (n) => fa.text(n)).kind === 'used' &&
            insideRequire(fa, c.info.node));
        if (!reverting) continue;
        ctx.report(meta, fa.statementOf(c.info.node), { fn });
      }
    }
  },
);

function insideRequire(fa: FileAnalysis, n: AstNode): boolean {
  let p = n.parent;
  while (p && p.type !== 'expression_statement' && p.type !== 'if_statement') {
    if (p.type === 'call_expression') {
      const f = field(p, 'function');
      const name = f ? fa.text(unwrap(f)) : '';
      if (name === 'require' || name === 'assert') return true;
    }
    p = p.parent;
  }
  if (p?.type === 'if_statement') {
    const [thenS] = p.children.filter((c) => c.field === 'body');
    return thenS !== undefined && /\b(throw|revert)\b/.test(fa.text(thenS));
  }
  return false;
}

const pushPaymentRevert = defineRule(
  {
    id: 'sol.dos.failing-push-payment',
    title: 'A reverting recipient blocks the contract',
    description:
      'The function requires a payment to a stored address (a previous leader, bidder or creditor) to succeed. A contract at that address can reject ether and block this function for everyone.',
    remediation:
      'Record what is owed and let recipients withdraw it (pull payments); do not revert on a failed refund.',
    severity: 'medium',
    confidence: 'medium',
    category: 'denial_of_service',
    swc: 'SWC-113',
    cwe: 'CWE-703',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of mutatingFunctions(fa)) {
      if (!fa.isEntryPoint(fn) || fa.checksCaller(fn)) continue;
      const a = fa.analyze(fn);
      for (const c of a.calls) {
        if (c.node.loops.length > 0 || !c.info.target) continue;
        if (
          c.info.kind !== 'transfer' &&
          !((c.info.kind === 'send' || c.info.kind === 'call') && insideRequire(fa, c.info.node))
        )
          continue;
        // `payable(leader)` pays the stored `leader`.
        const recipient = stripAddressCasts(c.info.target);
        const base = baseIdentifier(recipient);
        if (!base || !a.scope.isStateVar(fa.text(base))) continue;
        const v = a.scope.lookup(fa.text(base));
        if (!v || OWNER_NAME.test(v.name)) continue;
        // The stored recipient is replaced in this function: a displaced leader is refunded.
        const target = norm(fa, recipient);
        if (!a.stateWrites.some((w) => norm(fa, w.ast) === target)) continue;
        ctx.report(meta, fa.statementOf(c.info.node), { fn });
      }
    }
  },
);

const unboundedLoop = defineRule(
  {
    id: 'sol.dos.unbounded-loop',
    title: 'Loop bounded by caller input or a growing array',
    description:
      'The loop runs as many times as a caller-supplied number or the length of a storage array that anyone can grow, and writes storage on each pass. Its gas cost grows without bound until the function can no longer run within a block.',
    remediation:
      'Bound the number of iterations, process the work in batches, or let users act on their own entries.',
    severity: 'medium',
    confidence: 'medium',
    category: 'denial_of_service',
    swc: 'SWC-128',
    cwe: 'CWE-400',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const c of ctx.file.contracts) {
      const grownByAnyone = new Set<string>();
      for (const f of fa.index.functionsOf(c)) {
        if (!fa.isEntryPoint(f) || fa.checksCaller(f)) continue;
        for (const call of fa.analyze(f).calls) {
          if (call.info.name === 'push' && call.info.target) {
            const b = baseIdentifier(call.info.target);
            if (b) grownByAnyone.add(fa.text(b));
          }
        }
        for (const w of fa.analyze(f).stateWrites) {
          const asg = w.ast.parent;
          if (
            unwrap(w.ast).type === 'member_expression' &&
            /\.length$/.test(norm(fa, w.ast)) &&
            asg?.type === 'augmented_assignment_expression'
          )
            grownByAnyone.add(w.name);
        }
      }
      for (const fn of c.functions) {
        if (!fn.body || fn.mutability === 'view' || fn.mutability === 'pure') continue;
        const a = fa.analyze(fn);
        for (const loop of descendants(fn.body, 'for_statement', 'while_statement')) {
          const cond = field(loop, 'condition');
          if (!cond) continue;
          const condNode = a.cfg.nodeOf(cond);
          if (!condNode) continue;
          const body = field(loop, 'body');
          if (!body) continue;
          const bodyWrites =
            a.stateWrites.some((w) => ancestorIs(w.ast, body)) ||
            a.calls.some((x) => ancestorIs(x.info.node, body) && VALUE_KINDS.has(x.info.kind));
          if (!bodyWrites) continue;
          const lengthOf = descendants(cond, 'member_expression').find(
            (m) =>
              fa.text(field(m, 'property')!) === 'length' &&
              grownByAnyone.has(fa.text(baseIdentifier(m) ?? m)),
          );
          // A caller-chosen (or large) iteration count only hurts others when each pass grows
          // storage that later code must walk; otherwise the caller only spends their own gas.
          const grows =
            a.calls.some((x) => ancestorIs(x.info.node, body) && x.info.name === 'push') ||
            a.stateWrites.some((w) => ancestorIs(w.ast, body) && /\.length$/.test(norm(fa, w.ast)));
          const userBound = grows && fa.isUserInput(cond, a) && fa.isEntryPoint(fn);
          const largeConst =
            grows &&
            descendants(cond, 'number_literal').some((nl) => Number(fa.text(nl)) >= 100) &&
            fa.isEntryPoint(fn);
          if (!lengthOf && !userBound && !largeConst) continue;
          ctx.report(meta, cond, {
            fn,
            message: lengthOf
              ? `The loop runs over \`${fa.text(lengthOf)}\`, which anyone can grow; each pass writes storage or pays out.`
              : userBound
                ? 'The caller chooses how many times the loop runs, and each pass writes storage.'
                : 'The loop writes storage hundreds of times in one call; its gas cost approaches the block limit.',
          });
        }
      }
    }
  },
);

const arrayReset = defineRule(
  {
    id: 'sol.dos.storage-array-reset',
    title: 'Clearing a growing storage array',
    description:
      'Assigning a new empty array to (or deleting) a storage array clears every element, at a gas cost proportional to its length. Once the array is long enough, the function can no longer execute.',
    remediation:
      'Keep a separate length/round counter instead of clearing the array, or bound the array’s size.',
    severity: 'medium',
    confidence: 'medium',
    category: 'denial_of_service',
    swc: 'SWC-128',
    cwe: 'CWE-400',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const c of ctx.file.contracts) {
      const pushed = new Set<string>();
      for (const f of fa.index.functionsOf(c)) {
        const fx = fa.analyze(f);
        for (const call of fx.calls) {
          if (call.info.name === 'push' && call.info.target) {
            const b = baseIdentifier(call.info.target);
            // `require(list.length < MAX)` before the push caps what clearing costs.
            const capped =
              b !== undefined &&
              fx.conditions.some((cond) =>
                descendants(cond.expr, 'binary_expression').some(
                  (x) =>
                    (x.op === '<' || x.op === '<=') &&
                    norm(fa, field(x, 'left') ?? x) === `${fa.text(b)}.length`,
                ),
              );
            if (b && !capped) pushed.add(fa.text(b));
          }
        }
      }
      for (const fn of c.functions) {
        if (fn.kind === 'constructor') continue;
        const a = fa.analyze(fn);
        for (const w of a.stateWrites) {
          if (!pushed.has(w.name) || unwrap(w.ast).type !== 'identifier') continue;
          const p = w.ast.parent;
          const rhs = p?.type === 'assignment_expression' ? field(p, 'right') : undefined;
          const isReset =
            (rhs && /^new\b/.test(fa.text(unwrap(rhs)))) ||
            (p?.type === 'unary_expression' && p.op === 'delete');
          if (!isReset) continue;
          ctx.report(meta, fa.statementOf(w.ast), { fn });
        }
      }
    }
  },
);

// ---------------------------------------------------------------------------------------------
// Front-running

const approveRace = defineRule(
  {
    id: 'sol.frontrun.erc20-approve',
    title: 'ERC-20 approve race',
    description:
      '`approve` overwrites an existing allowance. A spender who sees the change in the mempool can spend the old allowance first and then the new one.',
    remediation:
      'Require the allowance to be zero before setting a new non-zero value, or offer `increaseAllowance`/`decreaseAllowance`.',
    severity: 'informational',
    confidence: 'medium',
    category: 'front_running',
    swc: 'SWC-114',
    cwe: 'CWE-362',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of mutatingFunctions(fa)) {
      if (fn.name !== 'approve' || fn.params.length !== 2 || !fa.isEntryPoint(fn)) continue;
      const a = fa.analyze(fn);
      const write = a.stateWrites.find(
        (w) => /\[msg\.sender\]\[/.test(norm(fa, w.ast)) && w.ast.parent?.type === 'assignment_expression',
      );
      if (!write) continue;
      // `require(value == 0 || allowance[msg.sender][spender] == 0)` prevents the race.
      const zeroCheck = a.conditions.some((c) => /==0/.test(norm(fa, c.expr)));
      if (zeroCheck) continue;
      ctx.report(meta, fa.statementOf(write.ast), { fn });
    }
  },
);

const hashGuess = defineRule(
  {
    id: 'sol.frontrun.revealed-solution',
    title: 'Solution submitted in the clear',
    description:
      'The function pays whoever submits an input whose hash matches a stored value. The answer is visible in the mempool, so anyone can copy it with a higher gas price and take the reward.',
    remediation:
      'Use commit-reveal: first commit `hash(answer, sender, salt)`, reveal in a later transaction.',
    severity: 'medium',
    confidence: 'medium',
    category: 'front_running',
    swc: 'SWC-114',
    cwe: 'CWE-362',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of mutatingFunctions(fa)) {
      if (!fa.isEntryPoint(fn)) continue;
      const a = fa.analyze(fn);
      if (!a.calls.some(isValueCall)) continue;
      for (const cond of a.conditions) {
        const hashes = descendants(cond.expr, 'call_expression').filter((call) =>
          /^(keccak256|sha3|sha256)$/.test(norm(fa, field(call, 'function') ?? call)),
        );
        if (!hashes.some((h) => fa.isUserInput(h, a) && !/msg\.sender/.test(fa.text(h)))) continue;
        if (!/==/.test(fa.text(cond.expr))) continue;
        ctx.report(meta, fa.statementOf(cond.expr), { fn });
      }
    }
  },
);

const rewardTod = defineRule(
  {
    id: 'sol.frontrun.mutable-payout',
    title: 'Payout amount can change while a claim is pending',
    description:
      'The amount paid is read from a state variable that another public function can change. Whoever sees a pending claim can reorder transactions so that it is paid a different amount (transaction-order dependence).',
    remediation:
      'Let claimants state the amount they expect (and revert on mismatch), or lock the value once claims are open.',
    severity: 'medium',
    confidence: 'low',
    category: 'front_running',
    swc: 'SWC-114',
    cwe: 'CWE-362',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const c of ctx.file.contracts) {
      for (const fn of c.functions) {
        if (!fa.isEntryPoint(fn) || fn.kind !== 'function') continue;
        const a = fa.analyze(fn);
        for (const call of a.calls) {
          if (!isValueCall(call) || !call.info.value) continue;
          const v = unwrap(call.info.value);
          if (v.type !== 'identifier' || !a.scope.isStateVar(fa.text(v))) continue;
          const name = fa.text(v);
          const sv = a.scope.lookup(name);
          if (!sv || sv.isMapping || sv.isArray) continue;
          if (!openToAnyone(fa, fn)) continue;
          // The classic order dependence: the privileged side changes the payout while a claim is pending.
          const writers = fa
            .writersOf(c, name)
            .filter((w) => w !== fn && fa.isEntryPoint(w) && w.kind === 'function' && fa.checksCaller(w));
          if (writers.length === 0) continue;
          ctx.report(meta, fa.statementOf(call.info.node), {
            fn,
            message: `\`${fn.name}()\` pays \`${name}\`, which \`${writers[0]!.name}()\` can change in a transaction ordered before it.`,
          });
        }
      }
    }
  },
);

// ---------------------------------------------------------------------------------------------
// Storage, shadowing, ERC-20 returns

const uninitializedPointer = defineRule(
  {
    id: 'sol.storage.uninitialized-pointer',
    title: 'Uninitialized storage pointer',
    description:
      'Before Solidity 0.5, a local struct or array declared without a data location and without a value is a storage pointer to slot 0. Writing through it overwrites the first state variables (often the owner).',
    remediation: 'Declare the local `memory`, or initialize it to an existing storage element.',
    severity: 'high',
    confidence: 'high',
    category: 'other',
    swc: 'SWC-109',
    cwe: 'CWE-824',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa, file } = ctx;
    if (!file.versionBelow(0, 5) && file.pragma?.minVersion) return;
    const structs = new Set(file.contracts.flatMap((c) => [...c.structs]));
    for (const fn of fa.ownFunctions()) {
      if (!fn.body) continue;
      for (const stmt of descendants(fn.body, 'variable_declaration_statement')) {
        if (field(stmt, 'value')) continue;
        for (const d of descendants(stmt, 'variable_declaration')) {
          const v = file.readVar(d, 'local');
          if (!v || v.location === 'memory' || v.location === 'calldata') continue;
          const baseType = v.typeText.replace(/\s*\[.*$/, '');
          if (!(structs.has(baseType) || v.isArray || v.isMapping)) continue;
          ctx.report(meta, stmt, {
            fn,
            message: `\`${v.typeText} ${v.name}\` points to storage slot 0; writes through it overwrite state.`,
          });
        }
      }
    }
  },
);

const shadowing = defineRule(
  {
    id: 'sol.shadowing.state-variable',
    title: 'State variable shadowing',
    description:
      'A contract declares a state variable with the same name as one of its base contracts. The two are separate storage slots, so functions of the base and of the child read different values.',
    remediation: 'Remove the duplicate declaration and set the inherited variable in the constructor.',
    severity: 'medium',
    confidence: 'high',
    category: 'other',
    swc: 'SWC-119',
    cwe: 'CWE-710',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const c of ctx.file.contracts) {
      const bases = fa.index.lineage(c).slice(1);
      for (const v of c.stateVars.values()) {
        const shadowed = bases.find((b) => b.stateVars.has(v.name));
        if (!shadowed) continue;
        ctx.report(meta, v.node, {
          contract: c,
          message: `\`${c.name}.${v.name}\` shadows \`${shadowed.name}.${v.name}\`: functions of \`${shadowed.name}\` keep using their own variable.`,
        });
      }
    }
  },
);

// ---------------------------------------------------------------------------------------------
// Signatures and minting

/** Calls that recover a signer: `ecrecover(…)` and `ECDSA.recover`/`tryRecover` (also via `using`). */
function recoverCalls(a: FunctionAnalysis): CallSite[] {
  return a.calls.filter(
    (c) =>
      (c.info.kind === 'builtin' && c.info.name === 'ecrecover') ||
      (c.info.kind !== 'builtin' && c.info.kind !== 'internal' && /^(recover|tryRecover)$/.test(c.info.name)),
  );
}

/**
 * Whether the function consumes something per signature: it increments a state counter (a
 * nonce), or it writes state that its own conditions test (a used-signature or used-nonce map).
 * Internal callees and modifiers count.
 */
function consumesNonce(fa: FileAnalysis, a: FunctionAnalysis): boolean {
  const parts = [
    a,
    ...a.modifiers.map((m) => fa.analyze(m)),
    ...a.internalCalls.map((c) => fa.analyze(c.callee)),
  ];
  const conditionVars = new Set<string>();
  for (const p of parts)
    for (const c of p.conditions)
      for (const i of descendants(c.expr, 'identifier'))
        if (i.field !== 'property' && p.scope.isStateVar(fa.text(i))) conditionVars.add(fa.text(i));
  return parts.some((p) =>
    p.stateWrites.some((w) => {
      const parent = w.ast.parent;
      if (parent?.type === 'update_expression') return true;
      if (parent?.type === 'augmented_assignment_expression' && parent.op === '+=') return true;
      return conditionVars.has(w.name);
    }),
  );
}

const signatureReplay = defineRule(
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

const ecrecoverZero = defineRule(
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

const SUPPLY_NAME = /supply/i;

const unprotectedMint = defineRule(
  {
    id: 'sol.access.unprotected-mint',
    title: 'Anyone can mint',
    description:
      'A public function increases the token supply by a caller-chosen amount with no caller check and without taking anything in return (no ether, no tokens): any account can mint itself an unlimited balance.',
    remediation: 'Restrict minting to a minter role or owner (`onlyOwner`, `onlyRole(MINTER_ROLE)`).',
    severity: 'high',
    confidence: 'medium',
    category: 'access_control',
    swc: 'SWC-105',
    cwe: 'CWE-284',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    if (!/supply/i.test(ctx.file.source)) return;
    for (const fn of mutatingFunctions(fa)) {
      if (fn.kind !== 'function' || fn.mutability === 'payable' || !fa.isEntryPoint(fn)) continue;
      if (fa.checksCaller(fn) || runsOnce(fa, fn)) continue;
      const a = fa.analyze(fn);
      const parts = [a, ...a.internalCalls.map((c) => fa.analyze(c.callee))];
      const minted = parts.flatMap((p) =>
        p.stateWrites.filter((w) => {
          const v = p.scope.stateVars.get(w.name);
          if (!v || v.isMapping || v.isArray || !SUPPLY_NAME.test(w.name)) return false;
          const asg = w.ast.parent;
          if (asg?.type !== 'augmented_assignment_expression' || asg.op !== '+=') return false;
          return fa.isParamDerived(field(asg, 'right')!, a) || isParamRead(fa, p, field(asg, 'right')!);
        }),
      );
      if (minted.length === 0) continue;
      // Something taken in return: ether, or a call that pulls tokens in.
      const paid = parts.some(
        (p) =>
          /msg\.value/.test(fa.text(p.fn.body ?? p.fn.node)) ||
          p.calls.some((c) => c.info.kind === 'external' || c.info.kind === 'call'),
      );
      if (paid) continue;
      ctx.report(meta, fn.node, {
        fn,
        lines: headerLines(fn),
        message: `\`${fn.name}()\` raises \`${minted[0]!.name}\` by a caller-chosen amount and checks nothing about the caller: anyone can mint.`,
      });
    }
  },
);

const uncheckedErc20 = defineRule(
  {
    id: 'sol.erc20.unchecked-transfer',
    title: 'Unchecked ERC-20 transfer result',
    description:
      'The boolean result of an ERC-20 `transfer`/`transferFrom`/`approve` is ignored. Tokens that return `false` instead of reverting leave the contract believing the transfer happened.',
    remediation:
      'Use OpenZeppelin `SafeERC20` (`safeTransfer`, `safeTransferFrom`) or check the returned value.',
    severity: 'medium',
    confidence: 'medium',
    category: 'unchecked_low_level_calls',
    swc: 'SWC-104',
    cwe: 'CWE-252',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of mutatingFunctions(fa)) {
      const a = fa.analyze(fn);
      for (const c of a.calls) {
        if (c.info.kind !== 'external' || !/^(transfer|transferFrom|approve)$/.test(c.info.name)) continue;
        if (c.info.args.length < 2) continue;
        if (resultUse(c.info.node, (n) => fa.text(n)).kind !== 'discarded') continue;
        if (declaredWithoutResult(fa, a, c)) continue;
        ctx.report(meta, fa.statementOf(c.info.node), { fn });
      }
    }
  },
);

/**
 * Whether the called function is declared in the file (on the receiver's contract type) without a
 * return value, as ERC-721 `transferFrom` is: there is no result to check.
 */
function declaredWithoutResult(fa: FileAnalysis, a: FunctionAnalysis, c: CallSite): boolean {
  if (!c.info.target) return false;
  const t = unwrap(c.info.target);
  const typeName =
    t.type === 'call_expression' ? norm(fa, field(t, 'function') ?? t) : fa.file.exprType(t, a.scope);
  const contract = typeName ? fa.index.contractsByName.get(typeName.trim()) : undefined;
  if (!contract) return false;
  const decls = fa.index
    .functionsOf(contract)
    .filter((f) => f.name === c.info.name && f.params.length === c.info.args.length);
  return decls.length > 0 && decls.every((f) => f.returns.length === 0);
}

// ---------------------------------------------------------------------------------------------
// Gas

const lengthInLoop = defineRule(
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
      for (const loop of descendants(fn.body, 'for_statement')) {
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

const couldBeConstant = defineRule(
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

export const standardRules: SolidityRule[] = [
  reentrancy,
  unprotectedOwnerWrite,
  arbitrarySend,
  balanceNotDebited,
  invertedBalanceCheck,
  delegatecallControlled,
  tautology,
  arrayLengthWrite,
  arithmetic,
  randomnessFlow,
  timestampDependence,
  callInLoop,
  pushPaymentRevert,
  unboundedLoop,
  arrayReset,
  approveRace,
  hashGuess,
  rewardTod,
  uninitializedPointer,
  shadowing,
  uncheckedErc20,
  signatureReplay,
  ecrecoverZero,
  unprotectedMint,
  lengthInLoop,
  couldBeConstant,
];
