/**
 * Access control (SWC-100, 105, 106, 112, 115): who may call, write privileged state, move ether,
 * destroy the contract, mint, or pick the code it runs.
 */
import type { CallSite, FileAnalysis, FunctionAnalysis } from '../analysis.ts';
import { descendants, field, unwrap, walk } from '../ast.ts';
import { baseIdentifier, type ContractInfo, type FunctionInfo, type VarInfo } from '../model.ts';
import type { AstNode } from '../parser.ts';
import {
  ancestorIs,
  flagTest,
  isParamRead,
  isValueCall,
  mutatingFunctions,
  norm,
  OWNER_NAME,
  openToAnyone,
  stripAddressCasts,
} from './predicates.ts';
import { defineRule, headerLines } from './rule.ts';

export const txOrigin = defineRule(
  {
    id: 'sol.access.tx-origin',
    title: 'Authorization through tx.origin',
    description:
      'A condition compares `tx.origin` to decide who may act. `tx.origin` is the account that started the transaction, so any contract the owner interacts with can call in on their behalf and pass the check (phishing).',
    remediation: 'Compare `msg.sender` instead of `tx.origin` for authorization.',
    severity: 'high',
    confidence: 'high',
    category: 'access_control',
    swc: 'SWC-115',
    cwe: 'CWE-477',
    scanType: 'lite',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of fa.ownFunctions()) {
      const a = fa.analyze(fn);
      for (const c of a.conditions) {
        // The comparisons of `tx.origin` in the condition, each with what it is compared to.
        const compared: Array<{ x: AstNode; other: string }> = [];
        walk(c.expr, (x) => {
          if (x.type !== 'binary_expression' || (x.op !== '==' && x.op !== '!=')) return undefined;
          const l = field(x, 'left');
          const r = field(x, 'right');
          if (!l || !r) return undefined;
          const lt = fa.compact(unwrap(l));
          const rt = fa.compact(unwrap(r));
          const other = lt === 'tx.origin' ? rt : rt === 'tx.origin' ? lt : undefined;
          if (other !== undefined) compared.push({ x, other });
          return undefined;
        });
        // No account signs as the zero address: a condition that tests `tx.origin` against it and
        // otherwise only against fixed addresses tells an `eth_call` simulation from a transaction
        // (those addresses are more simulation senders). `tx.origin == owner || tx.origin ==
        // address(0)` still authorises the owner.
        if (
          compared.some((t) => ZERO_ADDRESS.test(t.other)) &&
          compared.every((t) => FIXED_ADDRESS.test(t.other))
        )
          continue;
        // `tx.origin == msg.sender` is an "only externally owned accounts" check, not authorization.
        for (const t of compared) if (t.other !== 'msg.sender') ctx.report(meta, fa.statementOf(t.x), { fn });
      }
    }
  },
);

/**
 * How a condition tests a variable when it checks that it is unset: negated, compared with its
 * zero value, or a flag an `if` reverts on (`if (initialized) revert …;`).
 */
const UNSET_TESTS = new Set<string | undefined>(['negated', 'zero', 'if']);

/** `address(0)` as `compact` writes it. */
const ZERO_ADDRESS = /^address\(0(x0+)?\)$/;
/** An address written in the code: `address(0)`, `address(0x1111…)`, a literal. */
const FIXED_ADDRESS = /^address\(0(x[0-9a-fA-F]+)?\)$|^0x[0-9a-fA-F]{40}$/;

export const unprotectedSelfdestruct = defineRule(
  {
    id: 'sol.access.unprotected-selfdestruct',
    title: 'Unprotected selfdestruct',
    description:
      'Anyone can reach `selfdestruct` (or `suicide`): no caller check guards the public path to it, so any account can destroy the contract and take its ether.',
    remediation:
      'Restrict the function to an owner or role (a modifier that checks `msg.sender`), or remove selfdestruct.',
    severity: 'high',
    confidence: 'high',
    category: 'access_control',
    swc: 'SWC-106',
    cwe: 'CWE-284',
    scanType: 'lite',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of fa.ownFunctions()) {
      if (fn.kind === 'modifier' || fn.kind === 'constructor') continue;
      const a = fa.analyze(fn);
      for (const c of a.calls) {
        if (c.info.kind !== 'builtin' || (c.info.name !== 'selfdestruct' && c.info.name !== 'suicide'))
          continue;
        if (fa.checksCaller(fn)) continue;
        const open = fa.entryPointsReaching(fn).filter((e) => !fa.checksCaller(e));
        if (open.length === 0) continue;
        ctx.report(meta, fa.statementOf(c.info.node), {
          fn,
          message: `\`${c.info.name}\` is reachable without any caller check through ${open
            .map((e) => `\`${e.name}()\``)
            .join(', ')}: any account can destroy the contract.`,
        });
      }
    }
  },
);

export const defaultVisibility = defineRule(
  {
    id: 'sol.visibility.default-public',
    title: 'Function without explicit visibility',
    description:
      'Before Solidity 0.5 a function without a visibility specifier is public. A function meant to be internal may be callable by anyone.',
    remediation: 'Declare the visibility of every function (`external`, `public`, `internal`, `private`).',
    severity: 'informational',
    confidence: 'high',
    category: 'access_control',
    swc: 'SWC-100',
    cwe: 'CWE-710',
    scanType: 'lite',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of fa.ownFunctions()) {
      if (fn.kind !== 'function' || fn.contract.kind !== 'contract' || !fn.body) continue;
      if (fn.node.children.some((c) => c.type === 'visibility')) continue;
      if (fn.mutability === 'view' || fn.mutability === 'pure') continue;
      ctx.report(meta, fn.node, { fn, lines: [fn.line, fn.line] });
    }
  },
);

/** `msg.sender`, `tx.origin` or `_msgSender()` as source text writes them (spaces allowed). */
const NAMES_CALLER = /\bmsg\s*\.\s*sender\b|\btx\s*\.\s*origin\b|\b_msgSender\s*\(\s*\)/;

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
      // A body that never names the caller holds no condition on it: not worth a CFG.
      if (!f.body || !NAMES_CALLER.test(fa.text(f.body))) continue;
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
function runsOnce(fa: FileAnalysis, fn: FunctionInfo): boolean {
  const a = fa.analyze(fn);
  if (fn.modifiers.some((m) => ONCE_MODIFIER.test(m.name) && !fa.index.modifierOf(fn.contract, m.name)))
    return true;
  for (const part of [a, ...a.modifiers.map((m) => fa.analyze(m))]) {
    // Flags set to a literal (`= true`, `= 1`): a counter or an address is no latch, and neither
    // is a flag set back to another value (a reentrancy lock: `locked = 2; _; locked = 1;`).
    const values = new Map<string, Set<string>>();
    for (const w of part.stateWrites) {
      const p = w.ast.parent;
      const rhs = p?.type === 'assignment_expression' ? field(p, 'right') : undefined;
      const v = rhs ? norm(fa, rhs) : '';
      if (!values.has(w.name)) values.set(w.name, new Set());
      values.get(w.name)!.add(/^(true|\d+)$/.test(v) ? v : '*');
    }
    const written = new Set(
      [...values].filter(([, vs]) => vs.size === 1 && !vs.has('*')).map(([name]) => name),
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

export const unprotectedOwnerWrite = defineRule(
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
      'Finds the state variables that gate callers - addresses compared with `msg.sender`/`tx.origin` and role maps looked up with it, in any function or modifier of the lineage - resolved to the declaration the check reads (a pre-0.6 redeclaration in a derived contract is a separate variable, and writing it grants nothing); owner-like addresses count by name only when declared once. Reports public functions that write one of them with no caller check, no test of the variable itself, no run-once latch and no required payment.',
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
        // A one-time initializer that first checks the variable is unset is guarded: a test of the
        // variable against its zero value (`owner == address(0)`, `!initialized`), not any test
        // that names it (`newOwner != owner` lets anyone in).
        const guarded = writes.some((w) =>
          [...a.conditions, ...a.modifiers.flatMap((m) => fa.analyze(m).conditions)].some((cond) =>
            [...descendants(cond.expr, 'identifier')].some(
              (i) => fa.text(i) === w.name && UNSET_TESTS.has(flagTest(fa, i)),
            ),
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

export const arbitrarySend = defineRule(
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
      for (const c of a.calls) {
        if (!isValueCall(c) || !c.info.target || !c.info.value) continue;
        // Gated payouts (game rules, deadlines, balances) are judged by other rules.
        if (a.conditions.some((cond) => gates(a, cond, c))) continue;
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

/**
 * Whether a condition gates a payment: it is tested before the payment, or beside it in the same
 * condition (`now > deadline && msg.sender.send(…)`) - not the payment's own success
 * (`require(ok)` after it, `require(msg.sender.send(…))`).
 */
function gates(
  a: FunctionAnalysis,
  cond: FunctionAnalysis['conditions'][number],
  payment: CallSite,
): boolean {
  const call = payment.info.node;
  if (!ancestorIs(call, cond.expr)) return a.cfg.reachableFrom(cond.node.id).has(payment.node.id);
  return descendants(cond.expr, 'binary_expression').some(
    (b) => b.op !== '&&' && b.op !== '||' && !ancestorIs(call, b) && !ancestorIs(b, call),
  );
}

export const delegatecallControlled = defineRule(
  {
    id: 'sol.delegatecall.controlled',
    title: 'Delegatecall to a caller-controlled target or with caller-controlled data',
    description:
      "A `delegatecall` runs foreign code in this contract's storage context. Here the caller chooses the target or the call data, so they can run any function of the callee - or any code at all - against this contract's storage (ownership, balances).",
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
      // The deployer's arguments, and an initializer that runs once, are no caller's choice.
      if (fn.kind === 'constructor' || runsOnce(fa, fn)) continue;
      const entry = fa.isEntryPoint(fn);
      // A contract's helper no entry point of its file reaches is judged where it is called. A
      // library's is judged here, through the calls of its file (see isCallerControlledAddress).
      if (!entry && fn.contract.kind !== 'library' && fa.entryPointsReaching(fn).length === 0) continue;
      const a = fa.analyze(fn);
      const taint = a.cfg.taint((e) => fa.isUserInput(e, a));
      for (const c of a.calls) {
        if (c.info.kind !== 'delegatecall' && c.info.kind !== 'callcode') continue;
        // To this contract's own code (a multicall): the caller could call those functions directly.
        if (c.info.target && /^(this|address\(this\))$/.test(norm(fa, stripAddressCasts(c.info.target))))
          continue;
        // Every path after the call reverts: nothing the callee did to storage persists.
        if (!a.cfg.returnsNormallyAfter(c.node.id)) continue;
        // An upgradeable proxy: the target is the implementation its governance replaces; the
        // forwarded call runs the contract's own code by design.
        if (c.info.target && governedImplementation(fa, fn, c.info.target)) continue;
        let targetTainted = c.info.target !== undefined && taint.isTaintedExpr(c.info.target, c.node.id);
        // An internal helper (`_delegate(impl)`): its callers decide, a stored implementation is no input.
        if (targetTainted && !entry && c.info.target)
          targetTainted = fa.isCallerControlledAddress(a, c.info.target);
        const dataTainted = entry && c.info.args.some((x) => taint.isTaintedExpr(x, c.node.id));
        if (!targetTainted && !dataTainted) {
          // An internal helper is judged where it is called: a proxy's `_delegate(implementation)`.
          if (!entry || !openToAnyone(fa, fn)) continue;
          ctx.report(meta, fa.statementOf(c.info.node), {
            fn,
            severity: 'medium',
            message: `Anyone can make \`${fn.name}()\` delegatecall into \`${fa.text(
              c.info.target ?? c.info.node,
            )}\`: the callee runs with this contract's storage, so its storage layout must match exactly.`,
          });
          continue;
        }
        if (fa.checksCaller(fn)) continue;
        ctx.report(meta, fa.statementOf(c.info.node), {
          fn,
          message: targetTainted
            ? `The delegatecall target \`${fa.text(c.info.target!)}\` comes from the caller: they can run arbitrary code in this contract's storage.`
            : `The delegatecall forwards caller-supplied data to \`${fa.text(
                c.info.target ?? c.info.node,
              )}\`: any public function of the callee can be run on this contract's storage.`,
        });
      }
    }
  },
);

/**
 * Whether the delegatecall target is a state variable that role-restricted functions replace
 * (besides constructors) and nothing else writes: an upgradeable implementation.
 */
function governedImplementation(fa: FileAnalysis, fn: FunctionInfo, target: AstNode): boolean {
  const base = baseIdentifier(stripAddressCasts(target));
  if (!base) return false;
  const name = fa.text(base);
  if (!fa.analyze(fn).scope.isStateVar(name)) return false;
  const writers = fa.writersOf(fn.contract, name).filter((w) => w.kind !== 'constructor');
  return (
    writers.length > 0 &&
    writers.every(
      (w) =>
        fa.restrictedToRole(w) ||
        (!fa.isEntryPoint(w) && fa.entryPointsReaching(w).every((e) => fa.restrictedToRole(e))),
    )
  );
}

const SUPPLY_NAME = /supply/i;

export const unprotectedMint = defineRule(
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

export const unprotectedCallTarget = defineRule(
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
  { readsThreatModel: true },
);
