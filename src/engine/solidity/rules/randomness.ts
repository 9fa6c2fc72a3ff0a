/** Bad randomness (SWC-120): block values used as entropy, directly or through state and hashes. */
import { type FileAnalysis, usedAsNumber } from '../analysis.ts';
import { ancestor, callArgs, descendants, field, unwrap, walk } from '../ast.ts';
import type { FunctionInfo } from '../model.ts';
import type { AstNode } from '../parser.ts';
import { norm, stateVarsFrom } from './predicates.ts';
import { defineRule } from './rule.ts';

/** Block values other than the block number (which mostly serves round arithmetic). */
const ENTROPY_VALUES =
  /^(block\.(timestamp|difficulty|coinbase|gaslimit|prevrandao|blockhash)|now|blockhash|block\.blockhash)$/;

const HASHES = new Set(['keccak256', 'sha3', 'sha256', 'ripemd160']);

export const weakRandomness = defineRule(
  {
    id: 'sol.randomness.block-values',
    title: 'Weak randomness from block values',
    description:
      "A block value (`blockhash`, `block.timestamp`/`now`, `block.number`, `block.difficulty`, `block.coinbase`) or the caller's address is used as a source of randomness. Miners can influence these values and other contracts can compute them in the same block, so the outcome is predictable.",
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
      if (n.type === 'binary_expression' && truncation(fa, n)) return undefined;
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
  const blockhash = name === 'blockhash' || name === 'block.blockhash';
  if ((!HASHES.has(name) && !blockhash) || !fn?.body) return undefined;
  if (usedAsNumber(fa, fa.analyze(fn), n)) return undefined;
  if (blockhash)
    return 'A block hash that this function never uses as a number (it returns or stores it, or hashes it into a digest): no outcome is drawn from it here; predictable if a caller draws one.';
  return 'A hash of block values that is never used as a number (an identifier or digest, not a random draw); predictable if it decides an outcome.';
}

/** `x % 2**32`: the low bits of a value kept in a narrower type, a truncation rather than a draw. */
function truncation(fa: FileAnalysis, n: AstNode): boolean {
  const r = field(n, 'right');
  if (!r) return false;
  const m = /^\(?2\*\*(\d+)\)?$/.exec(fa.compact(unwrap(r)));
  return m !== null && Number(m[1]) >= 16 && Number(m[1]) % 8 === 0;
}

/**
 * A block value read inside a hash, a modulo or `blockhash(…)`, or an address cast to an integer
 * and reduced modulo: the shapes of on-chain "random" number generation.
 */
function isRandomnessSinkUse(
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

export const randomnessFlow = defineRule(
  {
    id: 'sol.randomness.block-value-flow',
    title: 'Block value flows into a random number',
    description:
      "A block value (or the caller's address) is stored - in a local or a state variable - and later fed into a hash, `blockhash` or a modulo that picks an outcome. Miners and other contracts can predict or steer it.",
    remediation:
      'Use a verifiable randomness source (VRF) or commit-reveal; do not derive outcomes from block data.',
    severity: 'high',
    confidence: 'medium',
    category: 'bad_randomness',
    swc: 'SWC-120',
    cwe: 'CWE-330',
    reasoning:
      'Taints block values (and addresses cast to integers) through locals and state variables over def-use chains, and walks back from hashes used as numbers, `blockhash(...)` arguments and modulo operands to the statements that read the block value. A state variable that only stores `block.number` (plus or minus k) to be passed to `blockhash` in a later transaction is a commitment to a block not yet hashed, not an entropy source: the `blockhash` read is reported by `sol.randomness.block-values` instead.',
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
            message: `A block value read here reaches a hash, \`blockhash\` or modulo that produces a "random" outcome in \`${fn.name}()\`.`,
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
