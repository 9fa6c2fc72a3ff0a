/** Reentrancy (SWC-107): state updated after an external call, through a payment, or across functions. */
import type { CallSite, FileAnalysis, FunctionAnalysis } from '../analysis.ts';
import { callArgs, descendants, field, unwrap } from '../ast.ts';
import { baseIdentifier, type FunctionInfo } from '../model.ts';
import type { AstNode } from '../parser.ts';
import { ancestorIs, mutatingFunctions, norm, stripAddressCasts, testedResult } from './predicates.ts';
import { defineRule, headerLines } from './rule.ts';

/**
 * Whether a modifier's name says it takes a reentrancy lock: `nonReentrant`, `noReentrancy`,
 * `reentrancyGuard`, or `lock`, `locked` or `mutex` as a word of the name (`lock`, `lockTheSwap`,
 * `mutex_locked`) - not a longer word that contains one (`timelocked`, `afterBlock`,
 * `whenUnlocked`), nor a name that only mentions reentrancy (`reentrantOK` documents the opposite).
 */
function namedAsLock(name: string): boolean {
  if (/non_?reentran|no_?reentran|reentrancy_?guard/i.test(name)) return true;
  return name.split(/_+|(?<=[a-z0-9])(?=[A-Z])/).some((word) => /^(lock|locked|mutex)$/i.test(word));
}

export const stateAfterCall = defineRule(
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
      'Per function, the calls that can hand control to other code (low-level calls forwarding gas, calls on an address the caller chooses - for an internal function, an address one of its call sites receives from its own caller; a stored address that a public function without a caller check sets), directly or through internal calls (a `view` or `pure` function makes only STATICCALLs), and the state writes reachable after them on the CFG. A lock counts when a modifier is named as one or tests and sets a state flag (or transient storage) before the body, when the body tests and sets a flag before the call, or when every entry point reaching an internal function holds one; a locked function is reported only when unlocked entry points read the state written after the call (High when one anyone may call acts on it, Low when only views report it or only role-restricted functions act on it). High when ether is sent or the call is reached through an internal function, Medium otherwise; Low with low confidence when the callee is one only privileged functions choose (a stored address, or a parameter looked up in a registry they keep) or when only role-restricted entry points reach the function. Confidence high when the written state was read before the call. Modifiers, bases and libraries declared in other files of the project count.',
    scanType: 'standard',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of mutatingFunctions(fa)) {
      if (fn.kind === 'constructor') continue;
      // A lock protects only the functions that take it: a locked function that updates state
      // after its call is still re-entered through unlocked functions that use that state.
      const entries = fa.entryPointsReaching(fn);
      if (entries.length === 0) continue;
      // An internal function is locked when every entry point that reaches it holds the lock.
      const locked = takesLock(fa, fn) || (!fa.isEntryPoint(fn) && entries.every((e) => takesLock(fa, e)));
      // Only privileged accounts reach it: re-entry needs the account that chose the callee to attack itself.
      const privileged = fa.restrictedToRole(fn) || entries.every((e) => fa.restrictedToRole(e));
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
        // The flags of the lock modifiers: their release after the body is no stale state.
        const flags = lockFlags(fa, fn);
        for (const f of flags) written.delete(f);
        if (lock) flags.add(lock);
        if (written.size === 0) continue;
        const names = [...written].map((n) => `\`${n}\``).join(', ');
        if (locked || lock) {
          const readers = unlockedReaders(fa, fn, written, flags);
          if (readers.length === 0) continue;
          const mutating = readers.filter((g) => g.mutability !== 'view' && g.mutability !== 'pure');
          // A function only a role reaches is re-entered only if the callee holds that role.
          const acting = mutating.filter((g) => !fa.restrictedToRole(g));
          const views = readers.filter((g) => !mutating.includes(g));
          const list = (gs: FunctionInfo[]): string => gs.map((g) => `\`${g.name}()\``).join(', ');
          ctx.report(meta, fa.statementOf(site.info.node), {
            fn,
            // Views read mid-call mislead only third parties that read them during the call
            // (read-only reentrancy): no state of this contract can be changed through them.
            severity: acting.length && !privileged ? 'high' : 'low',
            confidence: acting.length ? 'medium' : 'low',
            message: acting.length
              ? `\`${fn.name}\` is locked but writes ${names} after its external call; ${list(acting)} ${acting.length > 1 ? 'are' : 'is'} not locked and act${acting.length > 1 ? '' : 's'} on the stale value (cross-function reentrancy).`
              : views.length
                ? `\`${fn.name}\` is locked but writes ${names} after its external call; the view ${list(views)} reports the stale value to anyone who calls it meanwhile (read-only reentrancy).`
                : `\`${fn.name}\` is locked but writes ${names} after its external call; only role-restricted functions (${list(mutating)}) act on the stale value, so re-entry needs the callee to hold that role.`,
          });
          continue;
        }
        const readBefore = a.stateReads.some((r) => written.has(r.name) && !after.has(r.node.id));
        const sendsValue = site.info.value !== undefined;
        const trusted = !via && trustedCallee(fa, fn, site);
        const target = `\`${fa.text(site.info.target ?? site.info.node)}\``;
        const be = written.size > 1 ? 'are' : 'is';
        // What hands control away: the call itself, or the internal function that makes one.
        const call = via
          ? `\`${fn.name}\` calls \`${via.name}()\`, which makes an external call,`
          : `External call to ${target} happens`;
        if (trusted || privileged) {
          ctx.report(meta, fa.statementOf(site.info.node), {
            fn,
            severity: 'low',
            confidence: 'low',
            message: privileged
              ? `${call} before ${names} ${be} updated. Only privileged accounts reach \`${fn.name}\`, so re-entry needs the account that chose the callee to be hostile.`
              : `External call to ${target} happens before ${names} ${be} updated. The callee is one that only privileged functions set, so re-entry needs that account to be hostile.`,
          });
          continue;
        }
        ctx.report(meta, fa.statementOf(site.info.node), {
          fn,
          severity: sendsValue || via ? 'high' : 'medium',
          confidence: readBefore ? 'high' : 'medium',
          message: via
            ? `\`${fn.name}\` calls \`${via.name}()\`, which makes an external call, and writes ${names} afterwards; the callee can re-enter before the update.`
            : `External call to ${target} happens before ${names} ${be} updated; the callee can re-enter \`${fn.name}\` and act on the stale state.`,
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
    if (!asg || !left || unwrap(left) !== w.ast) continue;
    const rhs = field(asg, 'right');
    if (!rhs || !before(w.node.id)) continue;
    // `locked = true` / `status = 2`, or a field of a packed slot variable (`slot0.unlocked =
    // false`; not an element of a mapping, whose other fields stay stale state).
    const object = w.ast.type === 'member_expression' ? unwrap(field(w.ast, 'object') ?? w.ast) : undefined;
    const property = w.ast.type === 'member_expression' ? field(w.ast, 'property') : undefined;
    const flag =
      w.ast.type === 'identifier'
        ? /^(true|[1-9]\d*)$/.test(norm(fa, rhs))
        : object?.type === 'identifier' && property !== undefined && /^(true|false|\d+)$/.test(norm(fa, rhs));
    if (!flag) continue;
    if (a.cfg.reachableFrom(site.node.id).has(w.node.id)) continue;
    // The condition tests that very flag (`slot0.unlocked`, or the same field of a local copy).
    const field_ = property ? `.${fa.text(property)}` : undefined;
    const tested = a.conditions.some(
      (c) =>
        before(c.node.id) &&
        !a.cfg.reachableFrom(w.node.id).has(c.node.id) &&
        readsFlag(fa, a, c.expr, new Set([w.name])) &&
        (field_ === undefined || fa.compact(c.expr).includes(field_)),
    );
    if (tested) return w.name;
  }
  return undefined;
}

/** Whether `expr` reads one of the flags, directly or through a local copy (`Slot0 memory s = slot0`). */
function readsFlag(
  fa: FileAnalysis,
  a: FunctionAnalysis,
  expr: AstNode,
  flags: ReadonlySet<string>,
): boolean {
  return descendants(expr, 'identifier').some((i) => {
    if (i.field === 'property') return false;
    const name = fa.text(i);
    if (flags.has(name)) return !a.scope.locals.has(name);
    const v = a.scope.locals.get(name);
    const origin = v?.kind === 'local' && v.initializer ? baseIdentifier(v.initializer) : undefined;
    return origin !== undefined && flags.has(fa.text(origin));
  });
}

/** The state flags the function's lock modifiers test and set before its body runs. */
function lockFlags(fa: FileAnalysis, fn: FunctionInfo): Set<string> {
  const out = new Set<string>();
  for (const m of fn.modifiers) {
    const def = fa.index.modifierOf(fn.contract, m.name);
    if (def) for (const f of modifierFlags(fa, def)) out.add(f);
  }
  return out;
}

/**
 * Whether the called address is one no unprivileged caller can choose: stored state that only
 * constructors and privileged functions set (a fixed partner contract, an owner-configured
 * recipient), or a parameter the function first looks up in such a registry
 * (`require(sources[src] > 0); Source(src).pull()`).
 */
function trustedCallee(fa: FileAnalysis, fn: FunctionInfo, site: CallSite): boolean {
  if (!site.info.target) return false;
  const a = fa.analyze(fn);
  let target = stripAddressCasts(site.info.target);
  // `Source(src)`: a conversion to a contract type names the same address.
  const cast = target.type === 'call_expression' ? unwrap(field(target, 'function') ?? target) : undefined;
  const args = target.type === 'call_expression' ? callArgs(target) : [];
  if (cast?.type === 'identifier' && /^[A-Z]/.test(fa.text(cast)) && args.length === 1)
    target = stripAddressCasts(args[0]!);
  const base = baseIdentifier(target);
  if (!base) return false;
  const name = fa.text(base);
  if (a.scope.isStateVar(name)) return fa.writtenOnlyByPrivileged(fn.contract, name);
  if (!a.scope.isParam(name)) return false;
  // A registry lookup keyed by the parameter, in a condition checked before the call.
  return a.conditions.some(
    (c) =>
      c.node.id !== site.node.id &&
      a.cfg.reachableFrom(c.node.id).has(site.node.id) &&
      descendants(c.expr, 'array_access').some((acc) => {
        const idx = field(acc, 'index');
        const map = baseIdentifier(acc);
        return (
          idx !== undefined &&
          map !== undefined &&
          norm(fa, idx) === name &&
          a.scope.isStateVar(fa.text(map)) &&
          fa.writtenOnlyByPrivileged(fn.contract, fa.text(map))
        );
      }),
  );
}

/**
 * Whether the function takes a reentrancy lock: a modifier named as one, or one that tests a
 * state flag and sets it before the body runs (including transient storage, `tload`/`tstore`).
 */
function takesLock(fa: FileAnalysis, fn: FunctionInfo): boolean {
  return fn.modifiers.some((m) => {
    if (namedAsLock(m.name)) return true;
    const def = fa.index.modifierOf(fn.contract, m.name);
    return def !== undefined && isLockDefinition(fa, def);
  });
}

function isLockDefinition(fa: FileAnalysis, def: FunctionInfo): boolean {
  if (!def.body) return false;
  const text = fa.text(def.body);
  if (/\btload\b/.test(text) && /\btstore\b/.test(text)) return true;
  return modifierFlags(fa, def).size > 0;
}

/**
 * The state flags a modifier tests, sets to a literal before its placeholder and sets again after
 * it: a lock taken for the body (a counter or a rate limit, never set back, is none).
 */
function modifierFlags(fa: FileAnalysis, def: FunctionInfo): Set<string> {
  const out = new Set<string>();
  if (!def.body) return out;
  const a = fa.analyze(def);
  const placeholder = a.cfg.nodes.find((n) => n.kind === 'placeholder');
  if (!placeholder) return out;
  const before = (id: number): boolean => a.cfg.reachableFrom(id).has(placeholder.id);
  const after = a.cfg.reachableFrom(placeholder.id);
  const literal = (w: { ast: AstNode }): boolean => {
    const p = w.ast.parent;
    const rhs = p?.type === 'assignment_expression' ? field(p, 'right') : undefined;
    return rhs !== undefined && /^(true|false|\d+)$/.test(norm(fa, rhs));
  };
  const set = new Set(a.stateWrites.filter((w) => before(w.node.id) && literal(w)).map((w) => w.name));
  const reset = new Set(a.stateWrites.filter((w) => after.has(w.node.id) && literal(w)).map((w) => w.name));
  for (const c of a.conditions)
    if (before(c.node.id))
      for (const i of descendants(c.expr, 'identifier')) {
        const name = fa.text(i);
        if (i.field !== 'property' && set.has(name) && reset.has(name)) out.add(name);
      }
  return out;
}

/**
 * Entry points of the contract, other than `fn`, that take no reentrancy lock and read one of
 * `names` — including views, whose stale answers other contracts act on.
 */
function unlockedReaders(
  fa: FileAnalysis,
  fn: FunctionInfo,
  names: Set<string>,
  flags: ReadonlySet<string>,
): FunctionInfo[] {
  return fa.index.functionsOf(fn.contract).filter((g) => {
    if (g === fn || !fa.isEntryPoint(g) || takesLock(fa, g)) return false;
    const ga = fa.analyze(g);
    // A function that tests the same flag takes the same lock (an inline `require(slot0.unlocked)`).
    if (flags.size > 0 && ga.conditions.some((c) => readsFlag(fa, ga, c.expr, flags))) return false;
    return ga.stateReads.some((r) => names.has(r.name));
  });
}

export const reentrancyGasLimited = defineRule(
  {
    id: 'sol.reentrancy.state-after-send',
    title: 'State written after send/transfer (gas-limited re-entrancy)',
    description:
      'The function pays with `send` or `transfer` and only afterwards updates the state its checks read. These calls forward 2,300 gas, which today is too little to re-enter, so this is not exploitable as written; it breaks checks-effects-interactions and becomes re-entrancy if the payment is changed to `call` or gas costs change.',
    remediation:
      'Update the state before paying (checks-effects-interactions), or switch to pull payments so that the order does not matter.',
    severity: 'informational',
    confidence: 'medium',
    category: 'reentrancy',
    swc: 'SWC-107',
    cwe: 'CWE-841',
    scanType: 'standard',
    reasoning:
      'For each `send`/`transfer` in a non-view function reachable from an entry point and not holding a reentrancy lock, follows the control-flow graph forward from the payment and collects state variables written afterwards (directly or in called internal functions). Reports when one of them was read before the payment (the state the payout depended on). Informational: the 2,300-gas stipend prevents re-entry today, and most contracts that pay this way are safe.',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    if (!/\.\s*(send|transfer)\s*\(/.test(ctx.file.source)) return;
    for (const fn of fa.ownFunctions()) {
      if (!fn.body || fn.kind === 'modifier' || fn.kind === 'constructor') continue;
      if (fn.mutability === 'view' || fn.mutability === 'pure') continue;
      if (takesLock(fa, fn)) continue;
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

export const crossFunctionReentrancy = defineRule(
  {
    id: 'sol.reentrancy.cross-function',
    title: 'Cross-function reentrancy',
    description:
      'While an external call is in flight, the state it will update later is stale - and other public functions read that state to move value or update balances. A malicious callee can re-enter through them instead of through the calling function.',
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
        if (!fn.body || takesLock(fa, fn)) continue;
        const a = fa.analyze(fn);
        for (const call of a.calls) {
          if (!fa.isReentrantCall(a, call)) continue;
          const after = a.cfg.reachableFrom(call.node.id);
          const stale = new Set(a.stateWrites.filter((w) => after.has(w.node.id)).map((w) => w.name));
          if (stale.size === 0) continue;
          const others: FunctionInfo[] = entries.filter((g) => {
            if (g === fn || fa.checksCaller(g) || takesLock(fa, g)) return false;
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
