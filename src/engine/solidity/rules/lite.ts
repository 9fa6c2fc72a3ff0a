/** `lite` rules: cheap, mostly syntactic checks. */
import { type FileAnalysis, usedAsNumber } from '../analysis.ts';
import { ancestor, callArgs, descendants, field, unwrap, walk } from '../ast.ts';
import type { FunctionInfo } from '../model.ts';
import type { AstNode } from '../parser.ts';
import { defineRule, type SolidityRule } from './rule.ts';

const txOrigin = defineRule(
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
        walk(c.expr, (x) => {
          if (x.type !== 'binary_expression' || (x.op !== '==' && x.op !== '!=')) return undefined;
          const l = field(x, 'left');
          const r = field(x, 'right');
          if (!l || !r) return undefined;
          const lt = fa.compact(unwrap(l));
          const rt = fa.compact(unwrap(r));
          const other = lt === 'tx.origin' ? rt : rt === 'tx.origin' ? lt : undefined;
          // `tx.origin == msg.sender` is an "only externally owned accounts" check, not authorization.
          if (other === undefined || other === 'msg.sender') return undefined;
          ctx.report(meta, fa.statementOf(x), { fn });
          return false;
        });
      }
    }
  },
);

const unprotectedSelfdestruct = defineRule(
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

const DEPRECATED: Array<{ test: (t: string, n: AstNode) => boolean; what: string; use: string }> = [
  { test: (t, n) => n.type === 'identifier' && t === 'throw', what: '`throw`', use: '`revert()`' },
  { test: (t, n) => n.type === 'identifier' && t === 'suicide', what: '`suicide`', use: '`selfdestruct`' },
  { test: (t, n) => n.type === 'identifier' && t === 'sha3', what: '`sha3`', use: '`keccak256`' },
  {
    test: (t, n) => n.type === 'member_expression' && t === 'block.blockhash',
    what: '`block.blockhash`',
    use: '`blockhash`',
  },
  {
    test: (t, n) => n.type === 'member_expression' && t === 'msg.gas',
    what: '`msg.gas`',
    use: '`gasleft()`',
  },
  {
    test: (t, n) => n.type === 'member_expression' && /\.callcode$/.test(t),
    what: '`callcode`',
    use: '`delegatecall`',
  },
];

const deprecated = defineRule(
  {
    id: 'sol.deprecated.construct',
    title: 'Deprecated Solidity construct',
    description:
      'The code uses a construct that newer compilers removed; it signals an old, unmaintained compiler version.',
    remediation: 'Replace it with its current equivalent and compile with a recent Solidity version.',
    severity: 'informational',
    confidence: 'high',
    category: 'other',
    swc: 'SWC-111',
    cwe: 'CWE-477',
    scanType: 'lite',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    const seenLines = new Set<number>();
    const src = ctx.file.source;
    if (!/\b(throw|suicide|sha3|blockhash|gas|callcode)\b/.test(src)) return;
    walk(ctx.file.root, (n) => {
      if (n.type !== 'identifier' && n.type !== 'member_expression') return undefined;
      if (n.field === 'property' || n.field === 'name') return undefined;
      const len = n.end - n.start;
      if (n.type === 'identifier' && len !== 3 && len !== 4 && len !== 5 && len !== 7) return undefined;
      const raw = src.slice(n.start, n.end);
      if (n.type === 'member_expression' && !/(blockhash|gas|callcode)$/.test(raw)) return undefined;
      const t = raw.replace(/\s+/g, '');
      const hit = DEPRECATED.find((d) => d.test(t, n));
      if (!hit || seenLines.has(n.line)) return undefined;
      seenLines.add(n.line);
      ctx.report(meta, fa.statementOf(n), { message: `${hit.what} is deprecated; use ${hit.use}.` });
      return false;
    });
  },
);

const uncheckedCall = defineRule(
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

const callNotInvoked = defineRule(
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
      for (const stmt of descendants(fn.body, 'expression_statement')) {
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

/** Block values other than the block number (which mostly serves round arithmetic). */
const ENTROPY_VALUES =
  /^(block\.(timestamp|difficulty|coinbase|gaslimit|prevrandao|blockhash)|now|blockhash|block\.blockhash)$/;

const HASHES = new Set(['keccak256', 'sha3', 'sha256', 'ripemd160']);

const weakRandomness = defineRule(
  {
    id: 'sol.randomness.block-values',
    title: 'Weak randomness from block values',
    description:
      'A block value (`blockhash`, `block.timestamp`/`now`, `block.number`, `block.difficulty`, `block.coinbase`) or the caller’s address is used as a source of randomness. Miners can influence these values and other contracts can compute them in the same block, so the outcome is predictable.',
    remediation:
      'Use a verifiable randomness source (e.g. a VRF oracle) or a commit-reveal scheme with future blocks.',
    severity: 'high',
    confidence: 'medium',
    category: 'bad_randomness',
    swc: 'SWC-120',
    cwe: 'CWE-330',
    scanType: 'lite',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    if (!/\bblock\s*\.|\bnow\b|\bblockhash\b|int\d*\s*\(\s*(msg\.sender|tx\.origin)/.test(ctx.file.source))
      return;
    const reported = new Set<AstNode>();
    walk(ctx.file.root, (n) => {
      if (!isRandomnessSinkUse(fa, n)) return undefined;
      const stmt = fa.statementOf(n);
      if (reported.has(stmt)) return undefined;
      reported.add(stmt);
      const fnNode = ancestor(
        n,
        'function_definition',
        'modifier_definition',
        'fallback_receive_definition',
        'constructor_definition',
      );
      const fn = fnNode ? [...fa.ownFunctions()].find((f) => f.node === fnNode) : undefined;
      const weak = weakSink(fa, n, fn);
      ctx.report(meta, stmt, {
        fn,
        ...(weak ? { severity: 'low' as const, confidence: 'low' as const, message: weak } : {}),
      });
      return undefined;
    });
  },
);

/**
 * Sinks that are probably not random numbers: a hash of block values never used as a number (an
 * identifier or digest), and `block.number % n` alone (round arithmetic). Reported Low.
 */
function weakSink(fa: FileAnalysis, n: AstNode, fn: FunctionInfo | undefined): string | undefined {
  if (n.type === 'binary_expression') {
    const l = field(n, 'left');
    if (l && fa.readsBlockValue(l, /^block\.number$/) && !fa.readsBlockValue(l, ENTROPY_VALUES))
      return '`block.number % n` is usually round arithmetic; it is predictable if it picks an outcome.';
    return undefined;
  }
  const f = field(n, 'function');
  const name = f ? fa.compact(unwrap(f)) : '';
  if (!HASHES.has(name) || !fn?.body) return undefined;
  if (usedAsNumber(fa, fa.analyze(fn), n)) return undefined;
  return 'A hash of block values that is never used as a number (an identifier or digest, not a random draw); predictable if it decides an outcome.';
}

/**
 * A block value read inside a hash, a modulo or `blockhash(…)`, or an address cast to an integer
 * and reduced modulo: the shapes of on-chain "random" number generation.
 */
export function isRandomnessSinkUse(
  fa: { text(n: AstNode): string; compact(n: AstNode): string; readsBlockValue(n: AstNode): boolean },
  n: AstNode,
): boolean {
  if (n.type === 'call_expression') {
    const f = field(n, 'function');
    const name = f ? fa.compact(unwrap(f)) : '';
    if (name === 'blockhash' || name === 'block.blockhash') return true;
    if (HASHES.has(name)) return callArgs(n).some((a) => fa.readsBlockValue(a));
    return false;
  }
  if (n.type === 'binary_expression' && n.op === '%') {
    const l = field(n, 'left');
    if (!l) return false;
    if (fa.readsBlockValue(l)) return true;
    // `uint(msg.sender) % n` or `uint(block.coinbase) % n`
    const lt = fa.compact(unwrap(l));
    return /^u?int\d*\((msg\.sender|tx\.origin|block\.coinbase)\)$/.test(lt);
  }
  return false;
}

const strictBalanceEquality = defineRule(
  {
    id: 'sol.logic.strict-balance-equality',
    title: 'Strict equality on the contract balance',
    description:
      'A condition requires the contract’s ether balance to equal an exact value. Anyone can force ether into a contract (selfdestruct, coinbase), so the equality can be broken permanently.',
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
            ctx.report(meta, fa.statementOf(x), { fn });
            return false;
          }
          return undefined;
        });
      }
    }
  },
);

const floatingPragma = defineRule(
  {
    id: 'sol.pragma.floating',
    title: 'Floating compiler pragma',
    description:
      'The pragma admits several compiler versions, so the deployed bytecode may come from a compiler other than the one tested.',
    remediation: 'Pin the exact compiler version (`pragma solidity 0.8.24;`).',
    severity: 'informational',
    confidence: 'high',
    category: 'other',
    swc: 'SWC-103',
    cwe: 'CWE-664',
    scanType: 'lite',
  },
  (ctx, meta) => {
    const p = ctx.file.pragma;
    if (!p?.floating) return;
    const node = ctx.file.root.children.find((c) => c.type === 'pragma_directive' && c.line === p.line);
    if (node) ctx.report(meta, node, { message: `\`${p.text}\` admits more than one compiler version.` });
  },
);

const outdatedPragma = defineRule(
  {
    id: 'sol.pragma.outdated',
    title: 'Outdated compiler version',
    description:
      'The code targets a Solidity version older than 0.8, without checked arithmetic and with known compiler bugs fixed since.',
    remediation: 'Port the code to a recent 0.8.x compiler.',
    severity: 'informational',
    confidence: 'high',
    category: 'other',
    swc: 'SWC-102',
    cwe: 'CWE-937',
    scanType: 'lite',
  },
  (ctx, meta) => {
    const p = ctx.file.pragma;
    if (!p?.minVersion || !ctx.file.versionBelow(0, 8)) return;
    const node = ctx.file.root.children.find((c) => c.type === 'pragma_directive' && c.line === p.line);
    if (node)
      ctx.report(meta, node, { message: `\`${p.text}\` targets Solidity ${p.minVersion.join('.')}.` });
  },
);

const defaultVisibility = defineRule(
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

export const liteRules: SolidityRule[] = [
  txOrigin,
  unprotectedSelfdestruct,
  deprecated,
  uncheckedCall,
  callNotInvoked,
  weakRandomness,
  strictBalanceEquality,
  floatingPragma,
  outdatedPragma,
  defaultVisibility,
];
