/** Time manipulation (SWC-116): decisions on `block.timestamp` within a proposer's reach. */
import { descendants, field, unwrap } from '../ast.ts';
import { bodyNodes } from '../model.ts';
import type { AstNode } from '../parser.ts';
import { stateVarsFrom } from './predicates.ts';
import { defineRule } from './rule.ts';

const TIMESTAMP = /^(block\.timestamp|now)$/;

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

export const timestampDependence = defineRule(
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
                : "The block timestamp decides a window of a few minutes, within reach of the proposer's drift.",
            });
            break;
          }
        }
        // A function whose result is the timestamp, or a decision on it, for callers to act on.
        for (const r of bodyNodes(fn, 'return_statement')) {
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
