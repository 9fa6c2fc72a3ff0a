/** `vigil engine scan <dir>`: runs the scan engine on a local directory and prints a report. */
import { randomUUID } from 'node:crypto';
import { open, writeFile } from 'node:fs/promises';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { engineFileBudgetMs, loadLlmConfig, loadRulesUrl } from '../config.ts';
import {
  type EngineVulnerability,
  openDirectoryTree,
  restoreParserTiering,
  SastReportText,
  type ScanResult,
  type ScanType,
  scanTree,
  tierParserForShortRun,
  toSarifReport,
  toSastReport,
} from '../engine/index.ts';
import { REPORT_SEVERITY } from '../engine/report/common.ts';
import { renderRuleCatalogue } from '../engine/rules-doc.ts';
import { createLlmClient, type LlmClientOptions } from '../integrations/llm/llm-client.ts';

export interface EngineCommandDeps {
  /** LLM settings from the configuration (`VIGIL_LLM_*`); command-line options override them. */
  llm?: Partial<LlmClientOptions>;
  /**
   * Base of the rule pages the reports link (`…/docs/rules` of a public Vigil server); without it
   * they link the repository's rule catalogue. `--public-url` overrides it.
   */
  rulesUrl?: string | undefined;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream & { isTTY?: boolean };
}

interface ScanCommandOptions {
  type: ScanType;
  format: 'sast' | 'sarif' | 'table';
  output?: string;
  prefix?: string;
  fileBudget?: number;
  llmBaseUrl?: string;
  llmApiKey?: string;
  llmModel?: string;
  includeTests?: boolean;
  publicUrl?: string;
}

/** Adds `engine scan` and `engine rules` to the program. */
/** The engine commands configured from the environment (rule docs URL, optional LLM endpoint). */
export function registerEngineCommandsFromEnv(program: Command, env: NodeJS.ProcessEnv): void {
  const llm = loadLlmConfig(env);
  registerEngineCommands(program, {
    rulesUrl: loadRulesUrl(env),
    ...(llm ? { llm: { baseUrl: llm.baseUrl, apiKey: llm.apiKey ?? undefined, model: llm.model } } : {}),
  });
}

export function registerEngineCommands(program: Command, deps: EngineCommandDeps = {}): void {
  const engine = program.command('engine').description('run the scan engine locally');
  engine
    .command('rules')
    .description('print the rule catalogue (Markdown)')
    .option('--output <file>', 'write it to a file instead of stdout')
    .action(async (opts: { output?: string }) => {
      const text = renderRuleCatalogue();
      if (opts.output) await writeFile(opts.output, text);
      else (deps.stdout ?? process.stdout).write(text);
    });
  engine
    .command('scan')
    .description('scan a directory and print a SAST, SARIF or table report')
    .argument('<dir>', 'directory to scan')
    .addOption(
      new Option('--type <type>', 'scan type').choices(['lite', 'standard', 'audit']).default('standard'),
    )
    .addOption(
      new Option('--format <format>', 'report format').choices(['sast', 'sarif', 'table']).default('table'),
    )
    .option('--output <file>', 'write the report to a file instead of stdout')
    .option('--prefix <path>', 'scan only this sub-path of the directory')
    .option(
      '--include-tests',
      'run the Solidity rules on tests, mocks and scripts too (test/, script/, *.t.sol, …)',
    )
    .option(
      '--public-url <url>',
      'public address of a Vigil server whose /docs/rules pages the report links (default VIGIL_PUBLIC_URL; without one, the repository’s docs/engine-rules.md)',
      parsePublicUrl,
    )
    .option(
      '--file-budget <seconds>',
      'analysis time per Solidity file before it gets the cheap passes only (0: no limit; default 2)',
      parseFileBudget,
    )
    .option('--llm-base-url <url>', 'OpenAI-compatible API base URL for the audit review')
    .option('--llm-api-key <key>', 'API key for the LLM')
    .option('--llm-model <model>', 'model for the LLM review')
    .action(async (dir: string, opts: ScanCommandOptions) => {
      const stdout = deps.stdout ?? process.stdout;
      const stderr = deps.stderr ?? process.stderr;
      const tree = await openDirectoryTree(dir, opts.prefix ? { prefix: opts.prefix } : {});
      const baseUrl = opts.llmBaseUrl ?? deps.llm?.baseUrl;
      const model = opts.llmModel ?? deps.llm?.model;
      const apiKey = opts.llmApiKey ?? deps.llm?.apiKey;
      const llm =
        opts.type === 'audit' && baseUrl && model
          ? createLlmClient({ ...deps.llm, baseUrl, model, ...(apiKey ? { apiKey } : {}) })
          : undefined;
      const progress = stderr.isTTY === true;
      const rulesUrl = opts.publicUrl ? `${opts.publicUrl}/docs/rules` : deps.rulesUrl;
      const startTime = new Date();
      // A SAST report is rendered file by file while the scan runs; not with an LLM pass, which
      // changes the findings after the files (the whole report is rendered at the end then).
      const sast = opts.format === 'sast' && !llm ? new SastReportText(rulesUrl, randomUUID) : undefined;
      let result: ScanResult;
      try {
        result = await scanTree(tree, {
          type: opts.type,
          ...(opts.includeTests ? { includeTests: true } : {}),
          beforeParse: tierParserForShortRun,
          ...(sast ? { onFileFindings: (i, found) => sast.add(i, found) } : {}),
          ...(opts.fileBudget !== undefined
            ? { fileBudgetMs: engineFileBudgetMs(opts.fileBudget * 1000) }
            : {}),
          ...(llm ? { llm } : {}),
          onProgress: progress
            ? ({ filesDone, filesTotal }) => {
                stderr.write(`\rscanning ${filesDone}/${filesTotal} files`);
              }
            : undefined,
        });
      } finally {
        await tree.close();
        restoreParserTiering();
      }
      if (progress) stderr.write('\n');
      const endTime = new Date();
      const sastMeta = {
        startTime,
        endTime,
        messages: result.messages,
        ...(rulesUrl ? { rulesUrl } : {}),
      };
      const rendered = sast?.finish(result.vulnerabilities, sastMeta);
      const items = rendered
        ? []
        : result.vulnerabilities.map((vulnerability) => ({ id: randomUUID(), vulnerability }));
      const text =
        rendered ??
        (opts.format === 'sast'
          ? `${JSON.stringify(toSastReport(items, sastMeta), null, 2)}\n`
          : opts.format === 'sarif'
            ? `${JSON.stringify(toSarifReport(items, { startTime, endTime, messages: result.messages, ...(rulesUrl ? { rulesUrl } : {}) }), null, 2)}\n`
            : renderTable(result));
      const pieces = typeof text === 'string' ? [Buffer.from(text)] : text;
      if (opts.output) {
        const file = await open(opts.output, 'w');
        try {
          await file.writev(pieces);
        } finally {
          await file.close();
        }
      } else for (const piece of pieces) stdout.write(piece);
    });
}

/** An http(s) address without a trailing slash. */
function parsePublicUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('expected an http:// or https:// address');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError('expected an http:// or https:// address');
  return value.replace(/\/+$/, '');
}

function parseFileBudget(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 3600)
    throw new InvalidArgumentError('expected a number of seconds from 0 (no limit) to 3600');
  return n;
}

const ORDER = ['critical', 'high', 'medium', 'low', 'informational', 'gas_optimization'] as const;

function renderTable(result: ScanResult): string {
  const rows = [...result.vulnerabilities].sort(
    (a, b) => ORDER.indexOf(a.severity) - ORDER.indexOf(b.severity),
  );
  const lines: string[] = [];
  const cell = (v: EngineVulnerability): string[] => [
    REPORT_SEVERITY[v.severity],
    `${v.location.file}:${v.location.startLine}`,
    v.ruleId,
    v.title,
  ];
  const table = [['SEVERITY', 'LOCATION', 'RULE', 'TITLE'], ...rows.map(cell)];
  const widths = [0, 1, 2].map((i) => Math.min(60, Math.max(8, ...table.map((r) => r[i]!.length))));
  for (const r of table) lines.push(r.map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c)).join('  '));
  for (const m of result.messages) lines.push(`${m.level}: ${m.value}`);
  const counts = ORDER.map((s) => [s, rows.filter((v) => v.severity === s).length] as const).filter(
    ([, n]) => n > 0,
  );
  const over = result.filesOverBudget ?? [];
  if (over.length > 0)
    lines.push(`${over.length} file(s) over the analysis budget, cheap passes only: ${over.join(', ')}`);
  lines.push(
    `${rows.length} finding(s)${counts.length ? ` (${counts.map(([s, n]) => `${n} ${REPORT_SEVERITY[s]}`).join(', ')})` : ''} in ${result.stats.files} files, ${result.stats.lines} lines, ${result.stats.durationMs} ms.`,
  );
  return `${lines.join('\n')}\n`;
}
