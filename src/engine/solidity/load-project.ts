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
 * native runtime parses them on libuv's thread pool meanwhile (ADR 0100).
 */
const PARSE_AHEAD = 4;

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
  for (let i = 0; i < analysed.length; i++) {
    for (let j = i; j < Math.min(analysed.length, i + PARSE_AHEAD + 1); j++) {
      const path = analysed[j]!;
      if (ahead.has(path)) continue;
      const started = start(path);
      // Awaited in turn below; a scan aborted meanwhile leaves no unhandled rejection.
      started.catch(() => undefined);
      ahead.set(path, started);
    }
    const path = analysed[i]!;
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
