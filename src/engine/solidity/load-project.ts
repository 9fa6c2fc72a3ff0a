/**
 * Loading the project model of a tree: the Solidity files to analyse are parsed once, then the
 * files their imports name (base contracts, libraries, interfaces in `lib/`, `node_modules/` or
 * a test folder) are parsed for context, so that every rule sees the whole inheritance chain.
 */
import { isProbablyText } from '../secrets/secrets.ts';
import type { SourceEntry, SourceTree } from '../sources/tree.ts';
import type { ScanMessage } from '../types.ts';
import { FileAnalysis } from './analysis.ts';
import type { SolFile } from './model.ts';
import { type ParsedSource, startSolidityParse } from './parser.ts';
import { foundryRemappings, ProjectIndex, parseRemappings, type Remapping } from './project.ts';
import { countLines, type ParsedSolidityFile, parseSolFile } from './scan-file.ts';

/** Files read for context only (not analysed) stop here: a scan of a huge monorepo stays bounded. */
export const MAX_CONTEXT_FILES = 2000;

/**
 * Files of the analysed list read and handed to the parser before the one being converted: the
 * native runtime parses them on libuv's thread pool meanwhile (ADR 0100). At most this many, and
 * no more than `PARSE_AHEAD_BYTES` of source beyond the file being converted: a tree of huge files
 * does not hold several of them and their trees in memory at once.
 */
const PARSE_AHEAD = 4;
const PARSE_AHEAD_BYTES = 4 * 1024 * 1024;

/**
 * The files to hand to the parser before converting `paths[i]`: that file unless it is started,
 * then the next ones up to `PARSE_AHEAD` beyond it and `PARSE_AHEAD_BYTES` of source in all
 * beyond it, counting those already started.
 */
export function filesToStart(
  paths: readonly string[],
  i: number,
  started: ReadonlyMap<string, unknown>,
  sizeOf: (path: string) => number,
): string[] {
  const current = paths[i];
  const out: string[] = [];
  let bytes = 0;
  for (const p of started.keys()) if (p !== current) bytes += sizeOf(p);
  for (let j = i; j < Math.min(paths.length, i + PARSE_AHEAD + 1); j++) {
    const next = paths[j]!;
    if (started.has(next) || out.includes(next)) continue;
    if (next !== current) {
      if (bytes + sizeOf(next) > PARSE_AHEAD_BYTES) break;
      bytes += sizeOf(next);
    }
    out.push(next);
  }
  return out;
}

/** A file read and handed to the parser, not yet converted. */
interface StartedParse {
  source: string;
  finish: () => Promise<ParsedSource>;
}

/** A parsed file of the project with the warnings of its parse. */
interface LoadedFile {
  file: SolFile;
  messages: ScanMessage[];
  lineCount: number;
}

/** The project model of a tree and the parsed files it holds. */
export class LoadedProject {
  constructor(
    readonly project: ProjectIndex,
    private readonly loaded: Map<string, LoadedFile>,
  ) {}

  /** Whether `path` was parsed (analysed files and the context files their imports name). */
  has(path: string): boolean {
    return this.loaded.has(path);
  }

  /** The source of a loaded file. */
  source(path: string): string | undefined {
    return this.loaded.get(path)?.file.source;
  }

  /** A parsed file with its analysis bound to the project; undefined when it was not loaded. */
  take(path: string): (ParsedSolidityFile & { lineCount: number }) | undefined {
    const f = this.loaded.get(path);
    if (!f) return undefined;
    return {
      file: f.file,
      analysis: new FileAnalysis(f.file, this.project),
      messages: f.messages,
      lineCount: f.lineCount,
    };
  }
}

/** Options of {@link loadProject}. */
export interface LoadProjectOptions {
  signal?: AbortSignal;
  /** Called each time a file is handed to the parser. */
  onParse?: (path: string) => void;
  /** Largest Solidity file parsed, in bytes. */
  maxFileBytes: number;
}

/**
 * Parses `analysed` (tree paths of Solidity files, in order) and then, breadth first, the
 * files of the tree their imports resolve to. Remappings come from `remappings.txt` and
 * `foundry.toml` at the tree's root.
 */
export async function loadProject(
  tree: SourceTree,
  entries: readonly SourceEntry[],
  analysed: readonly string[],
  options: LoadProjectOptions,
): Promise<LoadedProject> {
  const byPath = new Map(entries.map((e) => [e.path, e]));
  const remappings = await readRemappings(tree, byPath);
  const project = new ProjectIndex([], remappings);
  const loaded = new Map<string, LoadedFile>();
  /** Reads a file and starts its parse; undefined for a file not to parse. */
  const start = async (path: string): Promise<StartedParse | undefined> => {
    options.signal?.throwIfAborted();
    const entry = byPath.get(path);
    if (!entry || entry.size > options.maxFileBytes) return undefined;
    const buf = await tree.read(path);
    if (!isProbablyText(buf)) return undefined;
    const source = buf.toString('utf8');
    // Files are read ahead: a scan aborted during the read hands nothing more to the parser.
    options.signal?.throwIfAborted();
    options.onParse?.(path);
    return { source, finish: startSolidityParse(source) };
  };
  const parse = async (path: string, started = start(path)): Promise<LoadedFile | undefined> => {
    const s = await started;
    if (!s) return undefined;
    const { file, messages } = await parseSolFile(path, s.source, s.finish);
    const l: LoadedFile = { file, messages, lineCount: countLines(s.source) };
    loaded.set(path, l);
    project.add(file);
    return l;
  };
  const queue: SolFile[] = [];
  // The next files are read and parsed (on the native runtime's threads) while this one is
  // converted and indexed.
  const ahead = new Map<string, Promise<StartedParse | undefined>>();
  const sizeOf = (path: string): number => byPath.get(path)?.size ?? 0;
  for (let i = 0; i < analysed.length; i++) {
    const path = analysed[i]!;
    for (const next of filesToStart(analysed, i, ahead, sizeOf)) {
      const started = start(next);
      // Awaited in turn below; a scan aborted meanwhile leaves no unhandled rejection.
      started.catch(() => undefined);
      ahead.set(next, started);
    }
    const l = await parse(path, ahead.get(path));
    ahead.delete(path);
    if (l) queue.push(l.file);
  }
  let context = 0;
  while (queue.length > 0 && context < MAX_CONTEXT_FILES) {
    const file = queue.shift()!;
    for (const imp of file.imports) {
      // The tree's own file for the import, by the compiler's rules, before any looser match.
      const path = project.candidatePaths(file.path, imp.path).find((p) => byPath.has(p));
      if (!path || loaded.has(path)) continue;
      const l = await parse(path);
      if (!l) continue;
      context++;
      queue.push(l.file);
    }
  }
  return new LoadedProject(project, loaded);
}

async function readRemappings(tree: SourceTree, byPath: Map<string, SourceEntry>): Promise<Remapping[]> {
  const out: Remapping[] = [];
  if (byPath.has('remappings.txt'))
    out.push(...parseRemappings((await tree.read('remappings.txt')).toString('utf8')));
  if (byPath.has('foundry.toml'))
    out.push(...foundryRemappings((await tree.read('foundry.toml')).toString('utf8')));
  return out;
}
