/** Denial of service (SWC-113, 128): calls and payments that can block a loop or a function, unbounded loops. */
import type { FileAnalysis, FunctionAnalysis } from '../analysis.ts';
import { descendants, field, unwrap } from '../ast.ts';
import { baseIdentifier, bodyNodes } from '../model.ts';
import type { AstNode } from '../parser.ts';
import {
  ancestorIs,
  mutatingFunctions,
  norm,
  OWNER_NAME,
  resultUse,
  stripAddressCasts,
} from './predicates.ts';
import { defineRule } from './rule.ts';

const VALUE_KINDS = new Set(['transfer', 'send', 'call']);

export const callInLoop = defineRule(
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
        const use = resultUse(c.info.node, (n) => fa.text(n));
        const reverting =
          c.info.kind === 'transfer' ||
          ((c.info.kind === 'send' || c.info.kind === 'call') &&
            ((use.kind === 'used' && insideRequire(fa, c.info.node)) ||
              // `(bool ok, ) = to.call{value: v}(""); require(ok);`
              (use.kind === 'assigned' &&
                use.names[0] !== undefined &&
                requiredAfter(fa, a, c.node.id, use.names[0]))));
        if (!reverting) continue;
        ctx.report(meta, fa.statementOf(c.info.node), { fn });
      }
    }
  },
);

/**
 * Whether the local `name` is required after node `from`: `require(name)`, `assert(name)`, or
 * `if (!name) revert …;`.
 */
function requiredAfter(fa: FileAnalysis, a: FunctionAnalysis, from: number, name: string): boolean {
  if (!name) return false;
  const after = a.cfg.reachableFrom(from);
  return a.conditions.some((cond) => {
    if (!after.has(cond.node.id)) return false;
    const t = fa.compact(unwrap(cond.expr));
    if (cond.kind === 'require') return t === name;
    if (cond.kind !== 'if' || t !== `!${name}`) return false;
    const stmt = cond.expr.parent;
    const body = stmt?.type === 'if_statement' ? stmt.children.find((x) => x.field === 'body') : undefined;
    return body !== undefined && /^(\{)?(revert|throw)\b/.test(fa.compact(body));
  });
}

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

export const pushPaymentRevert = defineRule(
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

export const unboundedLoop = defineRule(
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
      for (const entry of fa.index.functionsOf(c)) {
        if (!fa.isEntryPoint(entry) || fa.checksCaller(entry)) continue;
        // The entry point and the internal functions it reaches without a caller check
        // (`join() { _add(msg.sender); }`).
        const reached = new Set([entry]);
        for (const f of reached)
          for (const ic of fa.analyze(f).internalCalls)
            if (ic.callee.body && !fa.checksCaller(ic.callee)) reached.add(ic.callee);
        for (const f of reached) {
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
      }
      for (const fn of c.functions) {
        if (!fn.body || fn.mutability === 'view' || fn.mutability === 'pure') continue;
        const a = fa.analyze(fn);
        for (const loop of bodyNodes(fn, 'for_statement', 'while_statement')) {
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

export const arrayReset = defineRule(
  {
    id: 'sol.dos.storage-array-reset',
    title: 'Clearing a growing storage array',
    description:
      'Assigning a new empty array to (or deleting) a storage array clears every element, at a gas cost proportional to its length. Once the array is long enough, the function can no longer execute.',
    remediation:
      "Keep a separate length/round counter instead of clearing the array, or bound the array's size.",
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
