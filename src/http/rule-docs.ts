import { Type } from '@sinclair/typebox';
import { REPORT_SEVERITY } from '../engine/report/common.ts';
import { allRuleMetas } from '../engine/rules-catalogue.ts';
import type { RuleMeta } from '../engine/types.ts';
import { AppError } from '../errors.ts';
import type { App } from './app-type.ts';

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Vigil rules</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1b1f24;background:#fff}
@media (prefers-color-scheme:dark){body{color:#e6e6e6;background:#15171a}a{color:#8cb4ff}}
code{font-size:.9em}dt{font-weight:600;margin-top:.6rem}table{border-collapse:collapse}td,th{padding:.2rem .6rem;text-align:left;border-bottom:1px solid #8884}</style>
</head><body>${body}</body></html>\n`;
}

function rulePage(rule: RuleMeta): string {
  const link = (label: string, href: string | null) =>
    href ? `<a href="${escapeHtml(href)}">${escapeHtml(label)}</a>` : escapeHtml(label);
  const swc = rule.swc ? link(rule.swc, `https://swcregistry.io/docs/${rule.swc}`) : '—';
  const cwe = rule.cwe
    ? link(rule.cwe, `https://cwe.mitre.org/data/definitions/${rule.cwe.replace(/^CWE-/, '')}.html`)
    : '—';
  return page(
    rule.title,
    `<p><a href="/docs/rules">All rules</a></p>
<h1>${escapeHtml(rule.title)}</h1>
<p><code>${escapeHtml(rule.id)}</code></p>
<dl>
<dt>Severity</dt><dd>${REPORT_SEVERITY[rule.severity]}</dd>
<dt>Confidence</dt><dd>${escapeHtml(rule.confidence)}</dd>
<dt>Category</dt><dd>${escapeHtml(rule.category)}</dd>
<dt>Scan types</dt><dd>${escapeHtml(rule.scanType)} and above</dd>
<dt>SWC</dt><dd>${swc}</dd>
<dt>CWE</dt><dd>${cwe}</dd>
</dl>
<h2>What it finds</h2><p>${escapeHtml(rule.description)}</p>
${rule.reasoning ? `<h2>What it reasons about</h2><p>${escapeHtml(rule.reasoning)}</p>` : ''}
<h2>How to fix it</h2><p>${escapeHtml(rule.remediation)}</p>`,
  );
}

function indexPage(rules: RuleMeta[]): string {
  const rows = rules
    .map(
      (r) =>
        `<tr><td><a href="/docs/rules/${encodeURIComponent(r.id)}"><code>${escapeHtml(r.id)}</code></a></td><td>${escapeHtml(r.title)}</td><td>${REPORT_SEVERITY[r.severity]}</td><td>${escapeHtml(r.scanType)}</td></tr>`,
    )
    .join('\n');
  return page(
    'Rules',
    `<h1>Scan engine rules</h1><table><thead><tr><th>Rule</th><th>Title</th><th>Severity</th><th>Scan type</th></tr></thead><tbody>
${rows}
</tbody></table>`,
  );
}

/** The rule pages that reports link (`/docs/rules`, `/docs/rules/{ruleId}`), from the rule catalogue. */
export function registerRuleDocs(app: App): void {
  const rules = allRuleMetas();
  const byId = new Map(rules.map((r) => [r.id, r]));
  const index = indexPage(rules);
  app.get(
    '/docs/rules',
    { schema: { hide: true }, config: { auth: { kind: 'none' } } },
    async (_request, reply) => reply.type('text/html; charset=utf-8').send(index),
  );
  app.get(
    '/docs/rules/:ruleId',
    {
      schema: { hide: true, params: Type.Object({ ruleId: Type.String({ maxLength: 200 }) }) },
      config: { auth: { kind: 'none' } },
    },
    async (request, reply) => {
      const rule = byId.get(request.params.ruleId);
      if (!rule)
        throw new AppError('NOT_FOUND', { message: `No rule ${request.params.ruleId}; see /docs/rules.` });
      return reply.type('text/html; charset=utf-8').send(rulePage(rule));
    },
  );
}
