/**
 * Writes docs/performance.md from bench/results/*.json: what each bench measures, how to run it,
 * and the table of its latest result. Figures in the doc come only from those files.
 *
 *   npm run docs:performance             rewrite docs/performance.md
 *   npm run docs:performance -- --check  fail when docs/performance.md is not what the results give
 *
 * A known bench whose JSON no longer has the expected shape, and a result file of a bench this
 * script does not know, are rendered generically (scalar fields, then a table per list of rows),
 * so a bench may change its output without breaking the doc.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const resultsDir = path.join(root, 'bench', 'results');
const docPath = path.join(root, 'docs', 'performance.md');

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** What the doc says about a bench it knows. */
interface BenchInfo {
  title: string;
  command: string;
  measures: string;
  /** The result's tables; return null when the JSON does not have the shape this expects. */
  render?: (result: JsonObject) => string | null;
}

const isObject = (v: Json | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: Json | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** A number as the tables show it: thousands separated, at most `digits` decimals. */
export function fmt(v: Json | undefined, digits = 1): string {
  const n = num(v);
  if (n === null) return v === null || v === undefined ? '–' : String(v);
  return n.toLocaleString('en-US', { maximumFractionDigits: digits });
}
const pct = (v: Json | undefined): string => (num(v) === null ? '–' : `${fmt((num(v) ?? 0) * 100, 1)}%`);
const yes = (v: Json | undefined): string => (v === true ? 'yes' : v === false ? '**no**' : '–');
const cell = (s: string): string => s.replaceAll('|', '\\|').replaceAll('\n', ' ');

function table(head: string[], rows: string[][]): string {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

/** When and where a result was measured, from whichever fields the bench wrote. */
function measuredLine(r: JsonObject): string {
  const parts: string[] = [];
  const when = r.date ?? r.measuredAt;
  if (typeof when === 'string') parts.push(`measured ${when.slice(0, 16).replace('T', ' ')} UTC`);
  const cpus = num(r.cpus) ?? (isObject(r.machine) ? num(r.machine.cpus) : null);
  if (cpus !== null) parts.push(`${cpus} CPUs`);
  const node = r.node ?? (isObject(r.machine) ? r.machine.node : undefined);
  if (typeof node === 'string') parts.push(`Node ${node}`);
  const load = r.loadAverageBefore ?? r.loadAverage;
  if (Array.isArray(load) && num(load[0]) !== null)
    parts.push(`load average ${fmt(load[0], 2)} at the start`);
  return parts.length > 0 ? `*${parts.join(', ')}.*` : '';
}

function renderApi(r: JsonObject): string | null {
  if (!Array.isArray(r.backends)) return null;
  const out: string[] = [
    `${fmt(r.findings, 0)} findings, ${fmt(r.connections, 0)} connections, ${fmt(r.durationSeconds, 0)} s per measurement. Ratios are to ceiling (b), a Fastify route doing one \`select 1\` on a pool.`,
  ];
  for (const b of r.backends) {
    if (!isObject(b) || !Array.isArray(b.measurements)) return null;
    out.push(
      `**${String(b.backend)}**${num(b.peakServeRssMb) !== null ? ` (peak RSS of \`vigil serve\` ${fmt(b.peakServeRssMb, 0)} MB)` : ''}`,
    );
    const rows = b.measurements.filter(isObject).map((m) => {
      const cpu = isObject(m.cpuMicrosPerRequest) ? m.cpuMicrosPerRequest : {};
      return [
        String(m.name),
        fmt(m.requestsPerSecond, 0),
        fmt(m.p50Ms),
        fmt(m.p99Ms),
        fmt(m.ratioToDbCeiling, 2),
        m.p99TargetMs === null || m.p99TargetMs === undefined
          ? ''
          : `${fmt(m.p99TargetMs, 0)} ms: ${yes(m.meetsTarget)}`,
        fmt(m.bytesPerAnswer, 0),
        `${fmt(cpu.api, 0)} / ${fmt(cpu.postgres, 0)}`,
      ];
    });
    out.push(
      table(
        [
          'measurement',
          'req/s',
          'p50 ms',
          'p99 ms',
          '÷ (b)',
          'p99 target met',
          'bytes',
          'CPU µs/req API / PostgreSQL',
        ],
        rows,
      ),
    );
  }
  return out.join('\n\n');
}

function renderAnswerSize(r: JsonObject): string | null {
  if (!Array.isArray(r.rows)) return null;
  return table(
    ['body KB', 'bytes per answer', 'req/s', 'p99 ms'],
    r.rows
      .filter(isObject)
      .map((x) => [fmt(x.kb), fmt(x.bytesPerAnswer, 0), fmt(x.requestsPerSecond, 0), fmt(x.p99Ms)]),
  );
}

function renderConsole(r: JsonObject): string | null {
  if (!isObject(r.interactiveMs) || !isObject(r.targets)) return null;
  return table(
    ['figure', 'result', 'target'],
    [
      [
        'JavaScript of the first page, gzipped',
        `${fmt(r.firstPageGzipKb)} KB`,
        `≤ ${fmt(r.targets.firstPageGzipKb)} KB`,
      ],
      [
        `findings page interactive over ${fmt(r.findings, 0)} findings (p50 / max)`,
        `${fmt(r.interactiveMs.p50, 0)} / ${fmt(r.interactiveMs.max, 0)} ms`,
        `≤ ${fmt(r.targets.interactiveMs, 0)} ms`,
      ],
    ],
  );
}

function renderEngine(r: JsonObject): string | null {
  if (!isObject(r.engine) || !isObject(r.dataset)) return null;
  const rows: string[][] = [];
  for (const type of ['lite', 'standard', 'audit']) {
    const e = r.engine[type];
    if (!isObject(e)) continue;
    const m = isObject(e.mediumAndAbove) ? e.mediumAndAbove : {};
    rows.push([
      type,
      `${fmt(e.found, 0)}/${fmt(e.total, 0)} (${pct(e.recall)})`,
      pct(m.precision),
      pct(e.precision),
      fmt(e.ms, 0),
      fmt(e.linesPerSecond, 0),
    ]);
  }
  const out = [
    `SmartBugs curated: ${fmt(r.dataset.contracts, 0)} contracts, ${fmt(r.dataset.lines, 0)} lines, ${fmt(r.dataset.vulnerabilities, 0)} annotated vulnerabilities.`,
    table(
      ['scan type', 'recall', 'precision, Medium and above', 'precision, all claims', 'ms', 'lines/s'],
      rows,
    ),
  ];
  if (isObject(r.solhint)) {
    out.push(
      `solhint ${String(r.solhint.version ?? '')} on the same files: ${fmt(r.solhint.ms, 0)} ms (${fmt(r.solhint.linesPerSecond, 0)} lines/s).`,
    );
  }
  if (isObject(r.parsers)) {
    const p = r.parsers;
    const ts = isObject(p.treeSitter) ? p.treeSitter : {};
    const antlr = isObject(p.solidityParserAntlr) ? p.solidityParserAntlr : {};
    const converted: string[][] = [];
    for (const [key, name] of [
      ['treeSitterWithConversion', 'tree-sitter (WASM) + conversion to the engine AST'],
      ['treeSitterNativeWithConversion', 'tree-sitter (C runtime) + conversion, the default'],
    ] as const) {
      const c = p[key];
      if (isObject(c)) converted.push([name, fmt(c.ms, 0), fmt(c.linesPerSecond, 0), '']);
    }
    out.push(
      table(
        ['parser', 'ms for all files', 'lines/s', 'slowest file ms'],
        [
          ['tree-sitter (WASM)', fmt(ts.ms, 0), fmt(ts.linesPerSecond, 0), fmt(ts.slowestMs, 0)],
          ...converted,
          [
            '@solidity-parser/parser',
            fmt(antlr.ms, 0),
            fmt(antlr.linesPerSecond, 0),
            fmt(antlr.slowestMs, 0),
          ],
        ],
      ),
    );
  }
  return out.join('\n\n');
}

function renderHeldout(r: JsonObject): string | null {
  if (!isObject(r.engine) || !isObject(r.corpus)) return null;
  const rows = Object.entries(r.engine)
    .filter((e): e is [string, JsonObject] => isObject(e[1]))
    .map(([type, e]) => [
      type,
      `${fmt(e.found, 0)}/${fmt(e.total, 0)} (${pct(e.recall)})`,
      fmt(e.falsePositivesOnSafe, 0),
      fmt(e.unexpectedOnVulnerable, 0),
    ]);
  return [
    `${fmt(r.corpus.contracts, 0)} contracts (${fmt(r.corpus.safe, 0)} safe, ${fmt(r.corpus.vulnerable, 0)} vulnerable, ${fmt(r.corpus.expected, 0)} expected findings).`,
    table(
      ['scan type', 'recall', 'false positives on safe files', 'other findings on vulnerable files'],
      rows,
    ),
  ].join('\n\n');
}

function renderSolidifi(r: JsonObject): string | null {
  if (!isObject(r.perClass) || !isObject(r.dataset)) return null;
  const rows = Object.entries(r.perClass)
    .filter((e): e is [string, JsonObject] => isObject(e[1]))
    .map(([name, c]) => [
      name,
      fmt(c.injected, 0),
      fmt(c.found, 0),
      fmt(c.foundMediumOrAbove, 0),
      fmt(c.unmatched, 0),
      fmt(c.bestOfSix, 0),
    ]);
  rows.push(['**all**', fmt(r.dataset.injected, 0), fmt(r.found, 0), '', '', fmt(r.bestOfSix, 0)]);
  const out = [
    `SolidiFI development half, \`${String(r.scanType)}\`: ${fmt(r.dataset.lines, 0)} lines, recall ${pct(r.recall)}.`,
    table(
      [
        'class',
        'injected',
        'found',
        'found at Medium or above',
        'unmatched warnings',
        'best of the six tools',
      ],
      rows,
    ),
  ];
  if (isObject(r.speed)) {
    const s = r.speed;
    out.push(
      `Speed (fastest of the runs, start-up included): ${fmt(s.ms, 0)} ms wall, ${fmt(s.cpuMs, 0)} ms CPU, ${fmt(s.linesPerSecond, 0)} lines/s against a target of ${fmt(s.target, 0)}; peak RSS ${fmt(s.peakRssMb, 0)} MB.`,
    );
  }
  return out.join('\n\n');
}

function renderAudited(r: JsonObject): string | null {
  if (!Array.isArray(r.projects) || !isObject(r.totals)) return null;
  const t = r.totals;
  const rows = r.projects.filter(isObject).map((p) => {
    const f = isObject(p.findings) ? p.findings : {};
    return [
      String(p.project),
      fmt(p.files, 0),
      fmt(p.lines, 0),
      fmt(p.ms, 0),
      fmt(p.parseMs, 0),
      fmt((num(f.Critical) ?? 0) + (num(f.High) ?? 0), 0),
      fmt(f.Medium, 0),
      fmt(f.Low, 0),
      fmt(f.Info, 0),
      fmt(Array.isArray(p.overBudget) ? p.overBudget.length : null, 0),
      fmt(p.peakRssMb, 0),
    ];
  });
  rows.push([
    '**all**',
    '',
    fmt(t.lines, 0),
    fmt(t.ms, 0),
    fmt(t.parseMs, 0),
    fmt(t.high, 0),
    fmt(t.medium, 0),
    '',
    '',
    fmt(t.overBudgetFiles, 0),
    fmt(t.peakRssMb, 0),
  ]);
  const targets = isObject(r.targets) ? r.targets : {};
  const met = isObject(r.met) ? r.met : {};
  return [
    table(
      [
        'project',
        'files',
        'lines',
        'ms (start-up included)',
        'parse ms',
        'High+',
        'Medium',
        'Low',
        'Info',
        'files over budget',
        'peak RSS MB',
      ],
      rows,
    ),
    table(
      ['target', 'result', 'met'],
      [
        [
          'every project reported within 10 s',
          `${fmt(t.reported, 0)}/${fmt(t.projects, 0)} reported`,
          yes(met.everyProjectReportedInTime),
        ],
        [
          'High per 10,000 lines',
          `${fmt(t.highPer10k, 2)} (target ${fmt(targets.highPer10k)})`,
          yes(met.noHigh),
        ],
        [
          'Medium per 10,000 lines',
          `${fmt(t.mediumPer10k, 2)} (target ≤ ${fmt(targets.mediumPer10k)})`,
          yes(met.mediumPer10k),
        ],
        [
          'lines/s end to end',
          `${fmt(t.linesPerSecond, 0)} (target ${fmt(targets.linesPerSecond, 0)})`,
          yes(met.linesPerSecond),
        ],
        [
          'peak RSS',
          `${fmt(t.peakRssMb, 0)} MB (target ≤ ${fmt(targets.peakRssMb, 0)} MB)`,
          yes(met.peakRss),
        ],
      ],
    ),
    num(t.startupMs) === null
      ? ''
      : `One process costs ${fmt(t.startupMs, 0)} ms before it reads a file (a scan of a one-line contract)${t.nodeStartMs === undefined ? '' : `; \`node -e 0\` takes ${fmt(t.nodeStartMs, 0)} ms on the same machine`}.${typeof t.parser === 'string' ? ` The parse times are tree-sitter's ${t.parser === 'native' ? 'C runtime' : 'WASM build'} with the conversion to the engine's AST.` : ''}`,
  ]
    .filter((s) => s !== '')
    .join('\n\n');
}

function renderAlternate(r: JsonObject): string | null {
  if (!Array.isArray(r.sides)) return null;
  const rows = r.sides.filter(isObject).map((s) => {
    const w = isObject(s.wallMs) ? s.wallMs : {};
    const c = isObject(s.cpuMs) ? s.cpuMs : {};
    return [
      String(s.side),
      `${String(s.spec)}${Array.isArray(s.args) && s.args.length > 0 ? ` ${s.args.join(' ')}` : ''}`,
      `${fmt(w.mean, 0)} / ${fmt(w.median, 0)} / ${fmt(w.min, 0)}`,
      `${fmt(c.mean, 0)} / ${fmt(c.median, 0)} / ${fmt(c.min, 0)}`,
      fmt(s.peakRssMb, 0),
    ];
  });
  return [
    `The last comparison run, ${fmt(r.pairs, 0)} alternating pairs. It compares two builds or command lines; its figures say nothing of the current code unless both sides are \`.\`.`,
    table(
      [
        'side',
        'build and arguments',
        'wall ms mean / median / min',
        'CPU ms mean / median / min',
        'peak RSS MB',
      ],
      rows,
    ),
  ].join('\n\n');
}

function renderFindings(r: JsonObject): string | null {
  if (!Array.isArray(r.results)) return null;
  const rows = r.results
    .filter(isObject)
    .map((x) => [
      String(x.name),
      fmt(x.p50Ms),
      fmt(x.p99Ms),
      yes(x.meetsTarget),
      fmt(x.filteredTotal, 0),
      yes(x.totalExact),
    ]);
  return [
    `${fmt(r.findings, 0)} findings over ${fmt(r.repositories, 0)} repositories, ${fmt(r.runsPerScenario, 0)} runs per scenario, PostgreSQL ${String(r.postgres ?? '')}; target p99 ≤ ${fmt(r.targetP99Ms, 0)} ms.`,
    table(['scenario', 'p50 ms', 'p99 ms', 'target met', 'filteredTotal', 'total exact'], rows),
  ].join('\n\n');
}

function renderPlans(r: JsonObject): string | null {
  if (!Array.isArray(r.results)) return null;
  const rows = r.results.filter(isObject).map((x) => {
    const statements = Array.isArray(x.statements) ? x.statements.filter(isObject) : [];
    const generic = statements.reduce((n, s) => n + (num(s.generic) ?? 0), 0);
    const custom = statements.reduce((n, s) => n + (num(s.custom) ?? 0), 0);
    return [
      String(x.order),
      fmt(x.pages, 0),
      fmt(x.msPerPage, 2),
      fmt(x.nodeCpuMsPerPage, 2),
      `${fmt(generic, 0)} / ${fmt(custom, 0)}`,
    ];
  });
  return [
    `${fmt(r.pagesPerWalk, 0)} pages of 20 per walk, one connection, database \`${String(r.database)}\`.`,
    table(
      ['order', 'pages', 'ms per page', 'Node CPU ms per page', 'executions on a generic / custom plan'],
      rows,
    ),
  ].join('\n\n');
}

function renderFuzz(r: JsonObject): string | null {
  if (!Array.isArray(r.results)) return null;
  const statuses = new Map<string, number>();
  for (const x of r.results.filter(isObject)) {
    if (!isObject(x.statuses)) continue;
    for (const [code, n] of Object.entries(x.statuses))
      statuses.set(code, (statuses.get(code) ?? 0) + (num(n) ?? 0));
  }
  const codes = [...statuses.keys()].sort();
  return [
    `${fmt(r.operations, 0)} operations × ${fmt(r.runsPerOperation, 0)} cases (seed ${fmt(r.seed, 0)}): ${fmt(r.requests, 0)} requests in ${fmt(r.seconds, 0)} s${num(r.providerFailures) !== null ? `, ${fmt(r.providerFailures, 0)} declared provider failures (502/504)` : ''}.`,
    table(
      ['status', 'answers'],
      codes.map((c) => [c, fmt(statuses.get(c), 0)]),
    ),
  ].join('\n\n');
}

function renderScanLoad(r: JsonObject): string | null {
  if (!isObject(r.idle) || !isObject(r.during) || !isObject(r.scan)) return null;
  const row = (name: string, key: string): string[] => {
    const i = isObject(r.idle) && isObject(r.idle[key]) ? r.idle[key] : {};
    const d = isObject(r.during) && isObject(r.during[key]) ? r.during[key] : {};
    return [name, `${fmt(i.p50)} / ${fmt(i.p99)}`, `${fmt(d.p50)} / ${fmt(d.p99)}`, fmt(d.n, 0)];
  };
  const loop = isObject(r.eventLoopDelayMs) ? r.eventLoopDelayMs : {};
  const loopDuring = isObject(loop.during) ? loop.during : {};
  return [
    `${fmt(r.files, 0)} files, ${String(r.database)} database; the scan ${String(r.scan.status)} in ${fmt(r.scan.seconds)} s with ${fmt(r.scan.findings, 0)} findings. Target ${String(r.target)}: ${yes(r.met)}. API event-loop delay p99 during the scan: ${fmt(loopDuring.p99)} ms.`,
    table(
      ['read', 'idle p50 / p99 ms', 'during the scan p50 / p99 ms', 'requests during'],
      [
        row('GET /api/scanner/v1/credits', 'credits'),
        row('GET /api/v0/repositories/all-findings', 'allFindings'),
      ],
    ),
  ].join('\n\n');
}

function renderStartup(r: JsonObject): string | null {
  if (!Array.isArray(r.results) || !isObject(r.targets)) return null;
  const t = r.targets;
  const rows = r.results.filter(isObject).map((x) => {
    const median = (k: string): Json | undefined =>
      isObject(x[k]) ? (x[k] as JsonObject).median : undefined;
    const idle = isObject(x.idle) ? x.idle : {};
    const nodeIdle = isObject(idle.node) ? idle.node : {};
    const pg = isObject(idle.postgres) ? idle.postgres : {};
    return [
      String(x.variant),
      fmt(median('helpS'), 3),
      fmt(median('startToHealthzS'), 3),
      fmt(median('startCpuS'), 2),
      fmt(nodeIdle.rssMb, 0),
      fmt(pg.pssSumMb, 0),
    ];
  });
  return [
    `Medians of ${fmt(r.runs, 0)} runs; \`node -e 0\` takes ${fmt(r.nodeBareS, 3)} s. Targets: \`--help\` ≤ ${fmt(t.helpS)} s, start to \`/healthz\` ≤ ${fmt(t.startToHealthzS)} s, idle Node RSS < ${fmt(t.idleNodeRssMb, 0)} MB.`,
    table(
      ['variant', '--help s', 'start to /healthz s', 'start CPU s', 'idle Node RSS MB', 'PostgreSQL PSS MB'],
      rows,
    ),
  ].join('\n\n');
}

function renderUploads(r: JsonObject): string | null {
  if (!Array.isArray(r.results)) return null;
  const rows = r.results.filter(isObject).map((x) => {
    const put = isObject(x.put) ? x.put : {};
    const complete = isObject(x.complete) ? x.complete : {};
    const ref = isObject(x.reference) ? x.reference : {};
    const growth = isObject(x.rssGrowthMB) ? x.rssGrowthMB : {};
    return [
      `${fmt(num(x.sizeBytes) === null ? null : (num(x.sizeBytes) ?? 0) / 1e6, 0)} MB (${fmt(x.files, 0)} files)`,
      fmt(put.mbPerSecond, 0),
      fmt(complete.mbPerSecond, 0),
      fmt(ref.combinedMbPerSecond, 0),
      `${fmt(x.completeVsReference, 2)}× (CPU ${fmt(x.completeVsReferenceCpu, 2)}×)`,
      `+${fmt(growth.put, 0)} / +${fmt(growth.complete, 0)}`,
    ];
  });
  return [
    `Client ${String(r.client)}, ${String(r.store)} store, ${String(r.database)} database. Target: ${String(r.target)}.`,
    table(
      [
        'archive',
        'PUT MB/s',
        'complete MB/s',
        'sha256sum + tar -tzf MB/s',
        'complete ÷ reference',
        'peak RSS growth MB PUT / complete',
      ],
      rows,
    ),
  ].join('\n\n');
}

/** Every bench the doc knows, by the base name of its result file, in the doc's order. */
export const BENCHES: Record<string, BenchInfo> = {
  api: {
    title: 'API throughput',
    command: 'npm run bench:api',
    measures:
      "For the PostgreSQL server and the embedded default: generates 1,000,000 findings, starts `vigil serve` and `vigil worker` as separate processes and runs autocannon (20 connections) against ceilings — (a) a bare Fastify route, (b) the same after one `select 1` on a pool, (c) the pages in turn read by id with one statement — and against Vigil's reads: getScan, getCreditBalances, all-findings (one page repeated, 500 pages in turn, three filters, with writes beside), company users, reports and the audit log. Reports requests per second, p50/p99, the ratio to (b), the bytes per answer and where the CPU went.",
    render: renderApi,
  },
  'api-traffic': {
    title: 'API under mixed traffic',
    command: 'npm run bench:api -- --traffic',
    measures:
      "Virtual users of every role, each reading its own mix (all-findings with random filters, orders and cursor depths, a finding, its comments, users, reports, the audit log, credits, scan status) with 10% writes, over 20 connections; p50/p99 per operation and the throughput beside ceiling (c), the same requests' SQL alone on a pool (per operation too).",
  },
  findings: {
    title: 'all-findings over 1,000,000 findings',
    command: 'npm run bench:findings',
    measures:
      "Calls the listing's service function for several users, filters and orders over 1,000,000 findings in 1,000 repositories: p50/p99 over repeated runs, the EXPLAIN plans, and `filteredTotal` checked against an independent count.",
    render: renderFindings,
  },
  'findings-plans': {
    title: 'How PostgreSQL plans pages in turn',
    command: 'npx tsx bench/findings-plans.ts [--pages 500] [order ...]',
    measures:
      'Walks 500 pages of 20, each from the cursor of the one before, on one pooled connection, per order; reports the time and Node CPU per page and how many executions of each statement ran on a kept generic plan or were planned anew (`pg_prepared_statements`). Runs against a database `bench:findings` or `bench:api -- --keep` left.',
    render: renderPlans,
  },
  'answer-size': {
    title: 'What the size of an answer costs',
    command: 'npm run bench:answer-size',
    measures:
      'autocannon (20 connections) against a bare Fastify route answering a fixed JSON body of 0.4 to 40 KB: how fast this machine moves answers of the sizes the API sends, whatever the server does.',
    render: renderAnswerSize,
  },
  'scan-load': {
    title: 'Reads while a large scan completes',
    command: 'npm run bench:scan-load',
    measures:
      'Starts the API and a separate `vigil worker` on one embedded server, then reads credits and all-findings idle and while a 5,000-file scan runs and writes its findings. Target: p99 ≤ 100 ms during the scan.',
    render: renderScanLoad,
  },
  startup: {
    title: 'Start-up and idle memory',
    command: 'npm run bench:startup',
    measures:
      "`vigil --help` wall time, `vigil start` from spawn to the first `/healthz` 200 (the embedded server started too), and the idle process's memory, for the compiled build and for the sources through tsx.",
    render: renderStartup,
  },
  uploads: {
    title: 'Uploads',
    command: 'npm run bench:uploads',
    measures:
      'A real tar.gz PUT by curl to the embedded store and completed (verified and stored): MB/s, CPU and peak memory of each step, beside the practical limit `sha256sum` + `tar -tzf` on the same file. `npm run bench:uploads:parts` times the parts of a completion apart and writes nothing.',
    render: renderUploads,
  },
  console: {
    title: 'Console',
    command: 'npm run bench:console',
    measures:
      'In Chromium: the gzipped JavaScript of the first page, and the findings page\'s time from navigation to rows rendered and "Load more" responding, over 1,000,000 findings.',
    render: renderConsole,
  },
  engine: {
    title: 'Scan engine on SmartBugs',
    command: 'npm run bench:engine',
    measures:
      'Recall and precision on the SmartBugs curated dataset, scored by its README (category + annotated line), for the three scan types; solhint on the same files; and the two Solidity parsers timed on the same files.',
    render: renderEngine,
  },
  'engine-heldout': {
    title: 'Scan engine on the held-out corpus',
    command: 'npm run bench:engine:heldout',
    measures:
      'Contracts written for this project outside SmartBugs, each naming what it should produce; recall, and any finding of severity low or above on a safe file counts as a false positive.',
    render: renderHeldout,
  },
  'engine-solidifi': {
    title: 'Scan engine on SolidiFI',
    command: 'npm run bench:engine:solidifi',
    measures:
      "One `vigil engine scan` process over the development half of SolidiFI (bugs injected into host contracts), start-up included; detection scored by the benchmark's rule, beside the six tools of its README, and the speed of the fastest of three runs.",
    render: renderSolidifi,
  },
  'engine-audited': {
    title: 'Scan engine on audited production code',
    command: 'npm run bench:engine:audited',
    measures:
      "One `vigil engine scan` process per audited project, start-up included; Medium and above there counts as a false alarm. Per project: lines, time, findings by severity, files over their time budget, peak RSS, beside tree-sitter's parse time alone.",
    render: renderAudited,
  },
  'engine-alternate': {
    title: 'Two engine builds compared',
    command: 'npm run bench:engine:alternate -- --a <revision> --b <revision>',
    measures:
      "Alternating runs of two builds or two command lines of `vigil engine scan` on SolidiFI, so that the machine's load drifts over both alike; a tool for comparing a change, not a figure of the current code.",
    render: renderAlternate,
  },
  fuzz: {
    title: 'Fuzzing every operation',
    command: 'npm run test:fuzz',
    measures:
      'Every operation of `openapi.json` fuzzed from its schema as a caller with access (4 cases per operation, as `npm test` runs it): no 5xx but declared provider failures, errors in shape, nothing written by a refused request.',
    render: renderFuzz,
  },
  'fuzz-long': {
    title: 'Fuzzing every operation, long run',
    command: 'npm run test:fuzz -- --long',
    measures: 'The same with 100 cases per operation.',
    render: renderFuzz,
  },
};

/** Scalars of an object, flattened one level, for the generic rendering. */
function scalars(o: JsonObject, prefix = ''): string[][] {
  const rows: string[][] = [];
  for (const [k, v] of Object.entries(o)) {
    if (v === null || typeof v !== 'object')
      rows.push([`${prefix}${k}`, typeof v === 'number' ? fmt(v, 3) : String(v)]);
    else if (isObject(v) && prefix === '') rows.push(...scalars(v, `${k}.`));
    else if (Array.isArray(v) && v.every((x) => x === null || typeof x !== 'object') && v.length <= 12)
      rows.push([`${prefix}${k}`, v.map((x) => (typeof x === 'number' ? fmt(x, 3) : String(x))).join(', ')]);
  }
  return rows;
}

/** Any result: its scalar fields, then a table for each list of objects (their scalar columns). */
export function renderGeneric(r: JsonObject): string {
  const out: string[] = [];
  const top = scalars(r);
  if (top.length > 0) out.push(table(['field', 'value'], top.slice(0, 40)));
  const lists = (o: JsonObject, prefix: string, depth: number): void => {
    for (const [k, v] of Object.entries(o)) {
      if (Array.isArray(v) && v.length > 0 && v.every(isObject)) {
        const columns = [...new Set(v.flatMap((x) => scalars(x).map((c) => c[0] ?? '')))].slice(0, 10);
        const rows = v.slice(0, 50).map((x) => {
          const values = new Map(scalars(x).map((c) => [c[0] ?? '', c[1] ?? '']));
          return columns.map((c) => values.get(c) ?? '');
        });
        out.push(
          `\`${prefix}${k}\`${v.length > 50 ? ` (first 50 of ${v.length})` : ''}:\n\n${table(columns, rows)}`,
        );
        if (depth < 1) for (const x of v.slice(0, 4)) lists(x, `${prefix}${k}[].`, depth + 1);
      } else if (isObject(v) && depth < 1) lists(v, `${prefix}${k}.`, depth + 1);
    }
  };
  lists(r, '', 0);
  return out.join('\n\n');
}

/** docs/performance.md from the result files of `dir`. */
export function renderDoc(dir: string): string {
  const files = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort()
    : [];
  const results = new Map(
    files.map((f) => [
      f.slice(0, -'.json'.length),
      JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as Json,
    ]),
  );
  const known = Object.keys(BENCHES);
  const unknown = [...results.keys()].filter((name) => !known.includes(name));
  const out: string[] = [
    '# Performance',
    '',
    'What each bench measures, how to run it, and its latest result. Generated by',
    '`npm run docs:performance` from `bench/results/*.json` (one file per bench, replaced by each run;',
    'git keeps the earlier ones); `npm run check` fails when this file differs from what they give.',
    '',
    'The benches run on a shared machine: wall-clock figures move with its load, which each result',
    'records; CPU times move much less. Compare runs made on the same machine at similar load.',
    '',
    '## Benches',
    '',
    table(
      ['bench', 'command', 'latest result'],
      [...known, ...unknown].map((name) => [
        `[${BENCHES[name]?.title ?? name}](#${slug(BENCHES[name]?.title ?? name)})`,
        `\`${BENCHES[name]?.command ?? '(unknown bench)'}\``,
        results.has(name) ? `\`bench/results/${name}.json\`` : 'not run yet',
      ]),
    ),
  ];
  for (const name of [...known, ...unknown]) {
    const info = BENCHES[name];
    const result = results.get(name);
    out.push('', `## ${info?.title ?? name}`, '');
    if (info) out.push(`\`${info.command}\` — ${info.measures}`, '');
    if (!isObject(result)) {
      out.push(result === undefined ? 'No result yet.' : renderGeneric({ value: result }));
      continue;
    }
    const when = measuredLine(result);
    if (when) out.push(when, '');
    out.push(info?.render?.(result) ?? renderGeneric(result));
  }
  return `${out.join('\n').replace(/\n{3,}/g, '\n\n')}\n`;
}

/** GitHub's anchor of a heading. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replaceAll(' ', '-');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = renderDoc(resultsDir);
  if (process.argv.includes('--check')) {
    const current = existsSync(docPath) ? readFileSync(docPath, 'utf8') : '';
    if (current !== text) {
      process.stderr.write(
        'docs/performance.md is not what bench/results gives: run npm run docs:performance\n',
      );
      process.exit(1);
    }
  } else {
    writeFileSync(docPath, text);
    process.stdout.write(`wrote ${path.relative(root, docPath)}\n`);
  }
}
