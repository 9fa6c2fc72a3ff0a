/** Payouts (SWC-105): fixed amounts that anyone can withdraw again and again. */
import type { FileAnalysis, FunctionAnalysis } from '../analysis.ts';
import { field, unwrap } from '../ast.ts';
import type { ContractInfo } from '../model.ts';
import type { AstNode } from '../parser.ts';
import { ancestorIs, isValueCall, norm, openToAnyone, stripAddressCasts } from './predicates.ts';
import { defineRule } from './rule.ts';

/** Whether the contract keeps ether on behalf of others: some function books `msg.value` into state. */
function holdsEtherForOthers(fa: FileAnalysis, c: ContractInfo): boolean {
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

export const fixedPayout = defineRule(
  {
    id: 'sol.payout.fixed-amount-anyone',
    title: 'Anyone can trigger a fixed payout, again and again',
    description:
      "A public function pays a fixed amount to its caller and checks nothing first: no caller check, no condition, no record of who was paid. Any account can call it repeatedly and drain the contract's ether.",
    remediation:
      'Restrict the function, pay only what the caller is owed from a balance debited first, or record that the caller was paid.',
    severity: 'high',
    confidence: 'high',
    category: 'access_control',
    swc: 'SWC-105',
    cwe: 'CWE-284',
    scanType: 'standard',
    reasoning:
      'Looks at the `transfer`/`send`/`call{value}` each entry point makes itself (a payment inside an internal function it calls is not followed) whose recipient is `msg.sender`/`tx.origin` and whose amount is a literal, a constant or a local only ever assigned literals. Reports when no condition (in the function, its modifiers or a caller check in a called internal function) precedes the payment on the control-flow graph. High where the contract books `msg.value` for others (it holds their ether); Medium otherwise.',
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
