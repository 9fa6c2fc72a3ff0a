/** A readable Markdown rendering of the threat model. */
import type { CodeRef, ThreatModel } from '../types.ts';

const at = (r: CodeRef): string => `\`${r.file}:${r.line}${r.endLine ? `-${r.endLine}` : ''}\``;
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function renderThreatModelMarkdown(model: ThreatModel): string {
  const out: string[] = [];
  const s = model.summary;
  out.push('# Threat model', '');
  out.push(
    `Generated ${model.generatedAt}. ${s.files} files (${s.solidityFiles} Solidity, ${s.lines} lines), ${s.contracts} contracts, ${s.entryPoints} entry points, ${s.externalCalls} external calls, ${s.threats} threats.`,
    '',
  );
  out.push('## Threats', '');
  if (model.threats.length === 0) out.push('No threats derived from the code.', '');
  for (const t of model.threats) {
    out.push(`### ${t.id} · ${t.title} (${t.severity})`, '', `${t.description} Category: ${t.category}.`, '');
    for (const r of t.refs.slice(0, 20))
      out.push(`- ${at(r)}${r.function ? ` in \`${r.contract}.${r.function}\`` : ''}`);
    if (t.refs.length > 20) out.push(`- … and ${t.refs.length - 20} more`);
    out.push('');
  }
  const table = (title: string, head: string[], rows: string[][]): void => {
    out.push(`## ${title}`, '');
    if (rows.length === 0) {
      out.push('None found.', '');
      return;
    }
    out.push(`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`);
    for (const r of rows) out.push(`| ${r.map(cell).join(' | ')} |`);
    out.push('');
  };
  table(
    'Contracts and inheritance',
    ['contract', 'kind', 'inherits', 'upgradeable', 'where'],
    model.contracts.map((c) => [
      c.name,
      c.kind,
      c.bases.join(', ') || '—',
      c.upgradeable ? 'yes' : 'no',
      at(c.ref),
    ]),
  );
  table(
    'Entry points',
    ['function', 'kind', 'payable', 'caller check', 'modifiers', 'where'],
    model.entryPoints.map((e) => [
      `${e.contract}.${e.function}`,
      e.kind,
      e.payable ? 'yes' : 'no',
      e.guarded ? 'yes' : '**none**',
      e.modifiers.join(', ') || '—',
      at(e.ref),
    ]),
  );
  table(
    'Privileged roles',
    ['role', 'kind', 'guards', 'where'],
    model.roles.map((r) => [`${r.contract}.${r.name}`, r.kind, r.guards.join(', ') || '—', at(r.ref)]),
  );
  table(
    'Assets',
    ['asset', 'kind', 'where'],
    model.assets.map((a) => [`${a.contract}.${a.name}`, a.kind, at(a.ref)]),
  );
  table(
    'External calls',
    ['from', 'kind', 'target', 'value', 'caller-chosen target', 'where'],
    model.externalCalls.map((c) => [
      `${c.contract}.${c.function}`,
      c.kind,
      `\`${c.target}\``,
      c.sendsValue ? 'yes' : 'no',
      c.callerControlledTarget ? '**yes**' : 'no',
      at(c.ref),
    ]),
  );
  table(
    'Upgradeability and lifecycle',
    ['contract', 'pattern', 'detail', 'where'],
    model.upgradeability.map((u) => [u.contract, u.pattern, u.detail, at(u.ref)]),
  );
  table(
    'Oracles and randomness',
    ['contract', 'kind', 'detail', 'where'],
    model.oracles.map((o) => [o.contract, o.kind, o.detail, at(o.ref)]),
  );
  table(
    'Trust boundaries',
    ['from', 'to', 'description', 'where'],
    model.trustBoundaries.map((t) => [t.from, t.to, t.description, at(t.ref)]),
  );
  return out.join('\n');
}
