/** Unchecked calls (SWC-104): results of low-level calls and ERC-20 transfers that are ignored or checked to no effect. */
import type { CallSite, FileAnalysis, FunctionAnalysis } from '../analysis.ts';
import { callArgs, descendants, field, unwrap } from '../ast.ts';
import { bodyNodes } from '../model.ts';
import type { AstNode } from '../parser.ts';
import { ancestorIs, mutatingFunctions, resultUse, testedResult } from './predicates.ts';
import { defineRule } from './rule.ts';

export const uncheckedCall = defineRule(
  {
    id: 'sol.unchecked-call.low-level',
    title: 'Unchecked low-level call',
    description:
      'The boolean result of a low-level call (`call`, `send`, `delegatecall`, `callcode`) is ignored. A failed call does not revert, so the code carries on as if the transfer or call had happened.',
    remediation:
      'Check the result (`(bool ok, ) = to.call{value: v}(""); require(ok);`), or use `transfer`/`Address.sendValue` which revert on failure.',
    severity: 'medium',
    confidence: 'high',
    category: 'unchecked_low_level_calls',
    swc: 'SWC-104',
    cwe: 'CWE-252',
    scanType: 'lite',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    const kinds = new Set(['call', 'send', 'delegatecall', 'callcode', 'staticcall']);
    for (const fn of fa.ownFunctions()) {
      const a = fa.analyze(fn);
      for (const c of a.calls) {
        if (!kinds.has(c.info.kind)) continue;
        const use = resultUse(c.info.node, (n) => fa.text(n));
        let unchecked = use.kind === 'discarded';
        if (use.kind === 'assigned') {
          // Def-use: the result is stored in a local that nothing reads afterwards.
          const defs = a.cfg.defs.filter((d) => d.node === c.node.id && use.names.includes(d.name));
          unchecked = defs.length > 0 && defs.every((d) => a.cfg.usesOf(d).length === 0);
        }
        if (!unchecked) continue;
        const what = c.info.kind === 'send' ? '`send`' : `low-level \`${c.info.kind}\``;
        ctx.report(meta, fa.statementOf(c.info.node), {
          fn,
          message: `The result of ${what} on \`${fa.text(c.info.target ?? c.info.node)}\` is ${
            use.kind === 'discarded' ? 'discarded' : 'stored but never checked'
          }; a failure goes unnoticed.`,
        });
      }
    }
  },
);

export const callNotInvoked = defineRule(
  {
    id: 'sol.unchecked-call.not-invoked',
    title: 'Low-level call that is never made',
    description:
      'The statement configures a low-level call (`addr.call.value(x)`) but never invokes it: the trailing `()` is missing, so no ether is sent and nothing reports it.',
    remediation:
      'Invoke the call and check its result: `(bool ok, ) = addr.call{value: x}(""); require(ok);`.',
    severity: 'high',
    confidence: 'high',
    category: 'unchecked_low_level_calls',
    swc: 'SWC-104',
    cwe: 'CWE-252',
    scanType: 'lite',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    for (const fn of fa.ownFunctions()) {
      if (!fn.body) continue;
      for (const stmt of bodyNodes(fn, 'expression_statement')) {
        const e = stmt.children[0] ? unwrap(stmt.children[0]) : undefined;
        if (e?.type !== 'call_expression') continue;
        const callee = field(e, 'function');
        const f = callee ? unwrap(callee) : undefined;
        if (f?.type !== 'member_expression') continue;
        const prop = fa.text(field(f, 'property') ?? f);
        const obj = field(f, 'object');
        if (
          (prop === 'value' || prop === 'gas') &&
          obj &&
          /\.(call|delegatecall|callcode)$/.test(fa.compact(unwrap(obj)))
        ) {
          ctx.report(meta, stmt, { fn });
        }
      }
    }
  },
);

export const uncheckedErc20 = defineRule(
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
        // A privileged function that keeps no accounting of the transfer (a recovery of stray
        // tokens): a `false` result leaves the tokens where they were and nothing believes otherwise.
        // Its own writes and those of the functions it calls; a lock modifier's flag is no record.
        const bookkeeping =
          a.stateWrites.length > 0 || a.internalCalls.some((ic) => fa.writesState(ic.callee));
        const recovery = !bookkeeping && fa.restrictedToRole(fn);
        // A token the contract fixes in code (a literal address, a constant holding one): its
        // authors know whether it reverts or returns `false`.
        const known = !recovery && fixedToken(fa, a, c);
        ctx.report(meta, fa.statementOf(c.info.node), {
          fn,
          ...(recovery
            ? {
                severity: 'low' as const,
                message: `The result of \`${c.info.name}\` is ignored in \`${fn.name}\`, which only privileged accounts call and which records nothing about the transfer: a token that returns \`false\` leaves the call without effect.`,
              }
            : known
              ? {
                  severity: 'low' as const,
                  confidence: 'low' as const,
                  message: `The result of \`${c.info.name}\` is ignored; the token is one the contract fixes in code, so whether it can return \`false\` instead of reverting is known to its authors.`,
                }
              : {}),
        });
      }
    }
  },
);

/**
 * Whether the receiver is a token the contract fixes in code: a literal address, a constant
 * holding one, or a getter of the contract that returns one.
 */
function fixedToken(fa: FileAnalysis, a: FunctionAnalysis, c: CallSite): boolean {
  return c.info.target !== undefined && fixedAddress(fa, a, c.info.target, 0);
}

function fixedAddress(fa: FileAnalysis, a: FunctionAnalysis, n: AstNode, depth: number): boolean {
  if (depth > 4) return false;
  const t = unwrap(n);
  if (/^0x[0-9a-fA-F]{40}$/.test(fa.text(t))) return true;
  if (t.type === 'call_expression') {
    const f = unwrap(field(t, 'function') ?? t);
    const args = callArgs(t);
    // A getter of the contract with no argument that returns a literal address (`getCompAddress()`).
    if (f.type === 'identifier' && args.length === 0) {
      const callee = fa.resolveInternal(a.contract, fa.text(f), 0);
      const returns = callee ? bodyNodes(callee, 'return_statement') : [];
      return (
        returns.length > 0 &&
        returns.every(
          (r) => r.children[0] !== undefined && /^0x[0-9a-fA-F]{40}$/.test(fa.compact(r.children[0])),
        )
      );
    }
    // `IERC20(x)`: the conversion names the address `x`.
    return args.length === 1 && fixedAddress(fa, a, args[0]!, depth + 1);
  }
  if (t.type !== 'identifier') return false;
  const name = fa.text(t);
  const local = a.scope.locals.get(name);
  if (local)
    return (
      local.kind === 'local' &&
      local.initializer !== undefined &&
      fixedAddress(fa, a, local.initializer, depth + 1)
    );
  const v = a.scope.isStateVar(name) ? a.scope.stateVars.get(name) : undefined;
  // A constant written as a literal address; an immutable or a variable set at construction
  // holds whatever token the deployer passed.
  return (
    v?.isConstant === true && v.initializer !== undefined && fixedAddress(fa, a, v.initializer, depth + 1)
  );
}

/**
 * Whether the called function is declared in the file (on the receiver's contract type) without a
 * return value, as ERC-721 `transferFrom` is: there is no result to check.
 */
function declaredWithoutResult(fa: FileAnalysis, a: FunctionAnalysis, c: CallSite): boolean {
  const decls = fa.calleeDeclarations(a, c);
  if (decls.length > 0) return decls.every((f) => f.returns.length === 0);
  const contract = fa.receiverContract(a, c);
  if (!contract) return false;
  // Declared in a base the scan does not hold: an ERC-721 interface (its `transferFrom` and
  // `approve` return nothing) is recognised by the standard's name or by `ownerOf`.
  return fa.index
    .lineage(contract)
    .some((x) => x.bases.some((b) => /^I?ERC721/.test(b)) || x.functions.some((f) => f.name === 'ownerOf'));
}

/** Whether a statement (a branch) does anything observable: state, calls, events, reverts, returns. */
function hasEffect(fa: FileAnalysis, a: FunctionAnalysis, branch: AstNode): boolean {
  if (descendants(branch, 'revert_statement', 'return_statement', 'emit_statement').length > 0) return true;
  if (/\bthrow\b/.test(fa.text(branch))) return true;
  if (a.stateWrites.some((w) => ancestorIs(w.ast, branch))) return true;
  return a.calls.some(
    (c) => ancestorIs(c.info.node, branch) && !(c.info.kind === 'builtin' && c.info.name === 'keccak256'),
  );
}

export const ineffectiveCheck = defineRule(
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
