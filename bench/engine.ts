/**
 * Engine benchmark on the SmartBugs curated dataset (143 contracts, 207 annotated vulnerabilities),
 * scored as the dataset's README says: a reported vulnerability is a true positive for an
 * annotated one when its rule's DASP category matches and one of its lines falls on an annotated
 * line; each annotated vulnerability counts once; precision = true positives / all reported.
 * Runs solhint (recommended rules) on the same files in the same run, and compares the two Solidity
 * parsers. Prints tables and writes bench/results/engine.json.
 *
 *   npm run bench:engine            (dataset from ../shared, or SMARTBUGS_DIR=/path/to/smartbugs-curated)
 *   npm run bench:engine -- --llm-triage   (also the LLM triage pass, see bench/llm-triage.ts)
 * Timings are the fastest of three runs; CPU time is this process's user+system time.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as antlrParse } from '@solidity-parser/parser';
import { Language, Parser } from 'web-tree-sitter';
import { type EngineVulnerability, openDirectoryTree, type ScanType, scanTree } from '../src/engine/index.ts';
import { parseSolidity, solidityParserKind } from '../src/engine/solidity/parser.ts';
import { DASP_CATEGORIES, type DaspCategory } from '../src/engine/types.ts';
import { wantsLlmTriage, withScriptedTriage } from './llm-triage.ts';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const datasetDir =
  process.env.SMARTBUGS_DIR ?? path.resolve(repoRoot, '../shared/datasets/smartbugs-curated');
const CATEGORIES: readonly DaspCategory[] = DASP_CATEGORIES;

interface GroundTruth {
  file: string;
  vulnerabilities: Array<{ lines: number[]; category: DaspCategory }>;
}
interface Reported {
  file: string;
  category: DaspCategory | undefined;
  lines: [number, number];
}
interface CategoryScore {
  total: number;
  found: number;
  reported: number;
  falsePositives: number;
}

const groundTruth = JSON.parse(
  readFileSync(path.join(datasetDir, 'ground-truth.json'), 'utf8'),
) as GroundTruth[];
const contractsDir = path.join(datasetDir, 'contracts');
const files = (await readdir(contractsDir)).filter((f) => f.endsWith('.sol')).sort();
const sources = new Map(
  files.map((f) => [`contracts/${f}`, readFileSync(path.join(contractsDir, f), 'utf8')]),
);
// One line count for every tool, so that the lines/s figures (and their ratio) are comparable.
const totalLines = [...sources.values()].reduce((n, s) => n + s.split('\n').length, 0);
const annotated = groundTruth.reduce((n, g) => n + g.vulnerabilities.length, 0);

/** Scores reported items (only those with a category) against the annotations. */
function score(reported: Reported[]): {
  perCategory: Record<string, CategoryScore>;
  found: number;
  reported: number;
  truePositives: number;
} {
  const perCategory: Record<string, CategoryScore> = {};
  for (const c of CATEGORIES) perCategory[c] = { total: 0, found: 0, reported: 0, falsePositives: 0 };
  const byFile = new Map<string, Reported[]>();
  for (const r of reported) byFile.set(r.file, [...(byFile.get(r.file) ?? []), r]);
  let found = 0;
  for (const gt of groundTruth) {
    for (const v of gt.vulnerabilities) {
      const s = perCategory[v.category]!;
      s.total++;
      const hit = (byFile.get(gt.file) ?? []).some(
        (r) => r.category === v.category && v.lines.some((l) => l >= r.lines[0] && l <= r.lines[1]),
      );
      if (hit) {
        s.found++;
        found++;
      }
    }
  }
  let truePositives = 0;
  for (const r of reported) {
    if (!r.category) continue;
    const s = perCategory[r.category]!;
    s.reported++;
    const gt = groundTruth.find((g) => g.file === r.file);
    const tp = gt?.vulnerabilities.some(
      (v) => v.category === r.category && v.lines.some((l) => l >= r.lines[0] && l <= r.lines[1]),
    );
    if (tp) truePositives++;
    else s.falsePositives++;
  }
  return { perCategory, found, reported: reported.filter((r) => r.category).length, truePositives };
}

const pct = (a: number, b: number): string => (b === 0 ? '—' : `${((100 * a) / b).toFixed(1)}%`);

// --- the engine -----------------------------------------------------------------------------
/** Informational and gas findings are not claims of a vulnerability; they are counted apart. */
const isScored = (v: EngineVulnerability): boolean =>
  v.severity !== 'informational' && v.severity !== 'gas_optimization';
/** Claims of a vulnerability: severity medium and above (low findings are hints, not claims). */
const isClaim = (v: EngineVulnerability): boolean =>
  v.severity === 'critical' || v.severity === 'high' || v.severity === 'medium';

const engineRuns: Record<string, unknown> = {};
let standardScore: ReturnType<typeof score> | undefined;
let standardVulnerabilities: EngineVulnerability[] = [];
let standardLinesPerSecond = 0;
let standardUnmatchedClaims: Array<{ file: string; line: number; rule: string; severity: string }> = [];
let standardLinesPerCpuSecond = 0;
const tree = await openDirectoryTree(datasetDir, { prefix: 'contracts' });
// Load the runtimes and the grammar outside the timings (the native one, the default, and WASM).
await parseSolidity('contract Warmup {}');
await parseSolidity('contract Warmup {}', { runtime: 'wasm' });
// The machine is shared: each type runs three times and the fastest run counts, in wall-clock
// and in CPU time of this process.
const REPEAT = 3;
for (const type of ['lite', 'standard', 'audit'] as ScanType[]) {
  let ms = Number.POSITIVE_INFINITY;
  let cpuMs = Number.POSITIVE_INFINITY;
  let result: Awaited<ReturnType<typeof scanTree>> | undefined;
  for (let i = 0; i < REPEAT; i++) {
    const t = performance.now();
    const c = process.cpuUsage();
    result = await scanTree(tree, { type });
    const used = process.cpuUsage(c);
    ms = Math.min(ms, performance.now() - t);
    cpuMs = Math.min(cpuMs, (used.user + used.system) / 1000);
  }
  if (!result) throw new Error('no scan ran');
  const scored = result.vulnerabilities.filter(isScored);
  const s = score(
    scored.map((v) => ({
      file: v.location.file,
      category: v.category,
      lines: [v.location.startLine, v.location.endLine],
    })),
  );
  const claims = score(
    result.vulnerabilities.filter(isClaim).map((v) => ({
      file: v.location.file,
      category: v.category,
      lines: [v.location.startLine, v.location.endLine] as [number, number],
    })),
  );
  const all = score(
    result.vulnerabilities.map((v) => ({
      file: v.location.file,
      category: v.category,
      lines: [v.location.startLine, v.location.endLine],
    })),
  );
  // Claims (medium and above) that match no annotation, listed for reading: SmartBugs annotates
  // the flaw each contract was collected for, so some are real issues of their own.
  const unmatchedClaims = result.vulnerabilities
    .filter(isClaim)
    .filter((v) => {
      const gt = groundTruth.find((g) => g.file === v.location.file);
      return !gt?.vulnerabilities.some(
        (a) =>
          a.category === v.category &&
          a.lines.some((l) => l >= v.location.startLine && l <= v.location.endLine),
      );
    })
    .map((v) => ({
      file: v.location.file,
      line: v.location.startLine,
      rule: v.ruleId,
      severity: v.severity,
      category: v.category,
    }));
  const lps = Math.round(totalLines / (ms / 1000));
  const cpuLps = Math.round(totalLines / (cpuMs / 1000));
  engineRuns[type] = {
    found: s.found,
    total: annotated,
    recall: s.found / annotated,
    reported: s.reported,
    truePositives: s.truePositives,
    precision: s.truePositives / Math.max(1, s.reported),
    mediumAndAbove: {
      found: claims.found,
      reported: claims.reported,
      truePositives: claims.truePositives,
      precision: claims.truePositives / Math.max(1, claims.reported),
      perCategory: claims.perCategory,
      unmatched: unmatchedClaims,
    },
    reportedIncludingInformationalAndGas: all.reported,
    precisionIncludingInformationalAndGas: all.truePositives / Math.max(1, all.reported),
    ms: Math.round(ms),
    cpuMs: Math.round(cpuMs),
    linesPerSecond: lps,
    linesPerCpuSecond: cpuLps,
    messages: result.messages.length,
    perCategory: s.perCategory,
  };
  if (type === 'standard') {
    standardUnmatchedClaims = unmatchedClaims;
    standardScore = s;
    standardVulnerabilities = result.vulnerabilities;
    standardLinesPerSecond = lps;
    standardLinesPerCpuSecond = cpuLps;
  }
}
// --- the LLM triage pass (opt-in: --llm-triage) -------------------------------------------------
/** Recall (low and above) and precision of claims (medium and above) of a set of findings. */
const figures = (vs: EngineVulnerability[]) => {
  const toReported = (v: EngineVulnerability): Reported => ({
    file: v.location.file,
    category: v.category,
    lines: [v.location.startLine, v.location.endLine],
  });
  const scored = score(vs.filter(isScored).map(toReported));
  const claims = score(vs.filter(isClaim).map(toReported));
  return {
    found: scored.found,
    recall: scored.found / annotated,
    reported: scored.reported,
    claims: claims.reported,
    claimPrecision: claims.truePositives / Math.max(1, claims.reported),
  };
};
let llmTriage: Record<string, unknown> | null = null;
if (wantsLlmTriage()) {
  const run = await withScriptedTriage(standardVulnerabilities, (llm) =>
    scanTree(tree, { type: 'standard', llm, llmTriage: true, llmTriageLimit: Number.MAX_SAFE_INTEGER }),
  );
  const without = figures(standardVulnerabilities);
  const withTriage = figures(run.triaged);
  llmTriage = {
    reviewer: 'scripted (bench/llm-triage.ts) on the fake chat-completions server',
    requests: run.requests,
    dismissed: run.dismissed,
    lowered: run.lowered,
    added: run.added,
    ms: run.ms,
    without,
    with: withTriage,
  };
}
await tree.close();
const enginePeakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);

// --- parsers ----------------------------------------------------------------------------------
function timeParser(parse: (src: string) => unknown): {
  ms: number;
  linesPerSecond: number;
  slowestMs: number;
  slowestFile: string;
  failures: number;
} {
  let ms = 0;
  let slowestMs = 0;
  let slowestFile = '';
  let failures = 0;
  for (const [file, src] of sources) {
    const t = performance.now();
    try {
      parse(src);
    } catch {
      failures++;
    }
    const d = performance.now() - t;
    ms += d;
    if (d > slowestMs) {
      slowestMs = d;
      slowestFile = file;
    }
  }
  return {
    ms: Math.round(ms),
    linesPerSecond: Math.round(totalLines / (ms / 1000)),
    slowestMs: Math.round(slowestMs),
    slowestFile,
    failures,
  };
}
await Parser.init();
const tsParser = new Parser();
tsParser.setLanguage(
  await Language.load(path.join(repoRoot, 'node_modules/tree-sitter-solidity/tree-sitter-solidity.wasm')),
);
let treeSitterErrorFiles = 0;
const treeSitterRaw = timeParser((src) => {
  const t = tsParser.parse(src);
  if (t?.rootNode.hasError) treeSitterErrorFiles++;
  t?.delete();
});
// Our full path: parse + conversion to the plain AST (with the precedence repair), on each
// tree-sitter runtime (ADR 0100; the native one when the build compiled it).
const plain: string[] = [];
for (const src of sources.values()) plain.push(src);
async function conversionMs(runtime: 'native' | 'wasm'): Promise<number> {
  await parseSolidity('contract Warmup {}', { runtime });
  const started = performance.now();
  for (const src of plain) await parseSolidity(src, { runtime });
  return performance.now() - started;
}
const treeSitterPlainMs = await conversionMs('wasm');
const treeSitterNativeMs = solidityParserKind() === 'native' ? await conversionMs('native') : undefined;
const antlr = timeParser((src) => antlrParse(src, { loc: true, tolerant: false }));

// --- solhint ------------------------------------------------------------------------------------
const SOLHINT_CATEGORY: Record<string, DaspCategory> = {
  reentrancy: 'reentrancy',
  'avoid-call-value': 'reentrancy',
  'avoid-low-level-calls': 'unchecked_low_level_calls',
  'no-unchecked-calls': 'unchecked_low_level_calls',
  'check-send-result': 'unchecked_low_level_calls',
  'multiple-sends': 'denial_of_service',
  'not-rely-on-block-hash': 'bad_randomness',
  'not-rely-on-time': 'time_manipulation',
  'avoid-tx-origin': 'access_control',
  'avoid-suicide': 'access_control',
  'func-visibility': 'access_control',
  'state-visibility': 'access_control',
};
// In process through solhint's own API (what its CLI calls per file), so that wall-clock and CPU
// time compare like for like with the engine.
const solhint = createRequire(import.meta.url)('solhint') as {
  processStr(
    input: string,
    config: object,
    fileName: string,
  ): { messages: Array<{ line: number; ruleId: string | null }> };
};
const solhintMessages: Array<{ line: number; ruleId: string | null; filePath: string }> = [];
const t0 = performance.now();
const solhintCpu = process.cpuUsage();
for (const [file, src] of sources) {
  for (const m of solhint.processStr(src, { extends: 'solhint:recommended' }, file).messages) {
    solhintMessages.push({ line: m.line, ruleId: m.ruleId, filePath: file });
  }
}
const solhintCpuUsed = process.cpuUsage(solhintCpu);
const solhintMs = performance.now() - t0;
const solhintCpuMs = (solhintCpuUsed.user + solhintCpuUsed.system) / 1000;
const solhintScore = score(
  solhintMessages.map((m) => ({
    file: m.filePath,
    category: m.ruleId ? SOLHINT_CATEGORY[m.ruleId] : undefined,
    lines: [m.line, m.line],
  })),
);
const solhintLinesPerSecond = Math.round(totalLines / (solhintMs / 1000));
const solhintLinesPerCpuSecond = Math.round(totalLines / (solhintCpuMs / 1000));

// --- output -------------------------------------------------------------------------------------
const s = standardScore!;
console.log(
  `\nSmartBugs curated: ${sources.size} contracts, ${totalLines} lines, ${annotated} annotated vulnerabilities\n`,
);
console.log(
  `${'category'.padEnd(27)} ${'engine standard'.padEnd(16)} ${'FP'.padStart(4)} ${'precision'.padStart(10)}   ${'solhint'.padEnd(9)} ${'FP'.padStart(5)}`,
);
for (const c of CATEGORIES) {
  const e = s.perCategory[c]!;
  const h = solhintScore.perCategory[c]!;
  console.log(
    `${c.padEnd(27)} ${`${e.found}/${e.total}`.padEnd(16)} ${String(e.falsePositives).padStart(4)} ${pct(e.reported - e.falsePositives, e.reported).padStart(10)}   ${`${h.found}/${h.total}`.padEnd(9)} ${String(h.falsePositives).padStart(5)}`,
  );
}
console.log(
  `${'total'.padEnd(27)} ${`${s.found}/${annotated} (${pct(s.found, annotated)})`.padEnd(16)} ${String(s.reported - s.truePositives).padStart(4)} ${pct(s.truePositives, s.reported).padStart(10)}   ${`${solhintScore.found}/${annotated}`.padEnd(9)} ${String(solhintScore.reported - solhintScore.truePositives).padStart(5)}`,
);
console.log('\nby scan type (informational and gas findings not scored):');
for (const [type, r] of Object.entries(engineRuns) as Array<
  [
    string,
    {
      found: number;
      reported: number;
      precision: number;
      mediumAndAbove: { found: number; reported: number; truePositives: number; precision: number };
      reportedIncludingInformationalAndGas: number;
      precisionIncludingInformationalAndGas: number;
      ms: number;
      linesPerSecond: number;
      linesPerCpuSecond: number;
    },
  ]
>) {
  console.log(
    `  ${type.padEnd(9)} found ${r.found}/${annotated} (${pct(r.found, annotated)}), reported ${r.reported}, precision ${pct(r.precision * r.reported, r.reported)}; medium and above: found ${r.mediumAndAbove.found}, reported ${r.mediumAndAbove.reported}, precision ${pct(r.mediumAndAbove.truePositives, r.mediumAndAbove.reported)}; with informational/gas ${r.reportedIncludingInformationalAndGas} reported, precision ${pct(r.precisionIncludingInformationalAndGas * r.reportedIncludingInformationalAndGas, r.reportedIncludingInformationalAndGas)}; ${r.ms} ms, ${r.linesPerSecond} lines/s (${r.linesPerCpuSecond} per CPU-second)`,
  );
}
const unmatchedByRule = new Map<string, number>();
for (const u of standardUnmatchedClaims) {
  const k = `${u.rule} (${u.severity})`;
  unmatchedByRule.set(k, (unmatchedByRule.get(k) ?? 0) + 1);
}
console.log(
  `\nstandard claims (medium and above) matching no annotation: ${standardUnmatchedClaims.length} (listed in the JSON)`,
);
for (const [k, n] of [...unmatchedByRule].sort((x, y) => y[1] - x[1]))
  console.log(`  ${String(n).padStart(3)}  ${k}`);
console.log(
  `\nspeed (fastest of ${REPEAT}): engine standard ${standardLinesPerSecond} lines/s wall, ${standardLinesPerCpuSecond} lines per CPU-second (peak RSS ${enginePeakRssMb} MB)`,
);
console.log(
  `solhint 6.2.4 recommended: ${solhintLinesPerSecond} lines/s wall, ${solhintLinesPerCpuSecond} lines per CPU-second (${Math.round(solhintMs)} ms, ${solhintMessages.length} messages, ${solhintScore.reported} in mapped categories)`,
);
console.log(
  `engine/solhint: ${(standardLinesPerSecond / solhintLinesPerSecond).toFixed(1)}x wall, ${(standardLinesPerCpuSecond / solhintLinesPerCpuSecond).toFixed(1)}x CPU`,
);
console.log('\nparsers (parse only, all files):');
console.log(
  `  web-tree-sitter 0.25 + tree-sitter-solidity: ${treeSitterRaw.ms} ms, ${treeSitterRaw.linesPerSecond} lines/s, slowest ${treeSitterRaw.slowestMs} ms (${treeSitterRaw.slowestFile}), files with error nodes ${treeSitterErrorFiles}`,
);
console.log(
  `  same + conversion to the engine AST:        ${Math.round(treeSitterPlainMs)} ms, ${Math.round(totalLines / (treeSitterPlainMs / 1000))} lines/s`,
);
if (treeSitterNativeMs !== undefined)
  console.log(
    `  C runtime + conversion (native, default):   ${Math.round(treeSitterNativeMs)} ms, ${Math.round(totalLines / (treeSitterNativeMs / 1000))} lines/s`,
  );
console.log(
  `  @solidity-parser/parser (ANTLR):            ${antlr.ms} ms, ${antlr.linesPerSecond} lines/s, slowest ${antlr.slowestMs} ms (${antlr.slowestFile}), failures ${antlr.failures}`,
);

if (llmTriage) {
  const t = llmTriage as {
    requests: number;
    dismissed: number;
    lowered: number;
    added: number;
    without: ReturnType<typeof figures>;
    with: ReturnType<typeof figures>;
  };
  const line = (name: string, f: ReturnType<typeof figures>): string =>
    `  ${name.padEnd(22)} found ${f.found}/${annotated} (${pct(f.found, annotated)}), claims ${f.claims}, precision of claims ${pct(f.claimPrecision * f.claims, f.claims)}`;
  console.log(
    `\nLLM triage (scripted reviewer on the fake server; ${t.requests} findings reviewed, ${t.dismissed} dismissed, ${t.lowered} lowered, ${t.added} added):`,
  );
  console.log(line('standard', t.without));
  console.log(line('standard + triage', t.with));
  if (t.added > 0) {
    console.error('the triage pass added findings');
    process.exitCode = 1;
  }
}

const results = {
  dataset: { contracts: sources.size, lines: totalLines, vulnerabilities: annotated },
  scoring:
    'category + line (a reported line range covering an annotated line); each annotation counted once; precision = true positives / reported (informational and gas_optimization findings are listed apart)',
  engine: { ...engineRuns, peakRssMb: enginePeakRssMb },
  solhint: {
    version: '6.2.4',
    config: 'solhint:recommended',
    ms: Math.round(solhintMs),
    cpuMs: Math.round(solhintCpuMs),
    linesPerSecond: solhintLinesPerSecond,
    linesPerCpuSecond: solhintLinesPerCpuSecond,
    messages: solhintMessages.length,
    categoryMapping: SOLHINT_CATEGORY,
    found: solhintScore.found,
    reportedInMappedCategories: solhintScore.reported,
    precision: solhintScore.truePositives / Math.max(1, solhintScore.reported),
    perCategory: solhintScore.perCategory,
  },
  speedupOverSolhint: {
    wall: standardLinesPerSecond / solhintLinesPerSecond,
    cpu: standardLinesPerCpuSecond / solhintLinesPerCpuSecond,
  },
  parsers: {
    treeSitter: { ...treeSitterRaw, filesWithErrorNodes: treeSitterErrorFiles },
    treeSitterWithConversion: {
      ms: Math.round(treeSitterPlainMs),
      linesPerSecond: Math.round(totalLines / (treeSitterPlainMs / 1000)),
    },
    ...(treeSitterNativeMs !== undefined && {
      treeSitterNativeWithConversion: {
        ms: Math.round(treeSitterNativeMs),
        linesPerSecond: Math.round(totalLines / (treeSitterNativeMs / 1000)),
      },
    }),
    solidityParserAntlr: antlr,
  },
  llmTriage,
  node: process.version,
  measuredAt: new Date().toISOString(),
};
writeFileSync(path.join(repoRoot, 'bench/results/engine.json'), `${JSON.stringify(results, null, 2)}\n`);
console.log('\nwrote bench/results/engine.json');
