/**
 * Which files of a tree a scan reports on. Every path of a tree falls in one class:
 *
 * - `report`: Solidity rules and secret rules run and report;
 * - `test`: tests, mocks and deployment scripts (`test/`, `tests/`, `mock/`, `mocks/`, `script/`
 *   directories at any depth, `*.t.sol`, `*.s.sol`): secrets are looked for, Solidity rules are
 *   not run unless tests are included (`--include-tests`, `include_tests = true` in `vigil.toml`);
 * - `vendored`: packages of other projects (`node_modules/` and `vendor/` at any depth, `lib/` at
 *   the root of the tree or beside a `foundry.toml`): nothing is reported;
 * - `ignored`: matched by `.vigilignore` or `exclude` in `vigil.toml` (gitignore syntax): nothing
 *   is reported.
 *
 * The classes are data, not a filtered listing: files that are not reported stay in the tree, so
 * that an analysis can still read them for context (imports resolve into `lib/` and
 * `node_modules/`). `.vigilignore` and `vigil.toml` are read by the engine itself from the top
 * folder of the tree's files (its root, or the workspace prefix of a tree limited to one), so a
 * server scanning an uploaded tree honours them as the command line does.
 * Decided in docs/adr/0004-scan-selection-defaults.md.
 */
import ignore, { type Ignore } from 'ignore';
import { AppError } from '../../errors.ts';
import type { ScanMessage } from '../types.ts';
import type { SourceEntry, SourceTree } from './tree.ts';

/** What a scan does with a path: see the module comment. */
export type PathClass = 'report' | 'test' | 'vendored' | 'ignored';

/** What {@link classifyPath} needs besides the path. */
export interface SelectionSettings {
  /** Test-like files are reported like any other. */
  readonly includeTests: boolean;
  /** The patterns of `.vigilignore` and `vigil.toml`'s `exclude`, when there are any. */
  readonly ignore?: Ignore;
  /** The folder the patterns are relative to (POSIX, no trailing slash; `''` for the root). */
  readonly base?: string;
  /**
   * Directories (POSIX, no trailing slash) that hold a `foundry.toml`: their `lib/` is vendored.
   * The root of the tree (`''`) is always one.
   */
  readonly packageRoots: ReadonlySet<string>;
}

/** The file that lists paths not to scan, at the root of the tree (gitignore syntax). */
export const VIGILIGNORE_FILE = '.vigilignore';
/** The project's scan settings, at the root of the tree. */
export const VIGIL_TOML_FILE = 'vigil.toml';
/** Largest settings file read (they are a few lines; a huge one is a mistake). */
const MAX_SETTINGS_BYTES = 256 * 1024;

const TEST_DIRECTORIES = new Set(['test', 'tests', 'mock', 'mocks', 'script']);
/**
 * Folders that hold copies of other projects' code at any depth: npm's, and the `vendor/` of Go,
 * PHP, Ruby and many Solidity monorepos - lower case only, as those tools write it (a project's
 * own `contracts/Vendor/` is its code about vendors).
 */
const VENDOR_DIRECTORIES = new Set(['node_modules', 'vendor']);
const TEST_FILE = /\.[ts]\.sol$/i;

/**
 * A `.vigilignore` or `vigil.toml` the engine cannot use; the message says where and what to fix.
 * An AppError (INVALID_PROJECT_SETTINGS), so that a scan on the server fails with it at once.
 */
export class ProjectSettingsError extends AppError {
  constructor(message: string) {
    super('INVALID_PROJECT_SETTINGS', { message });
  }
}

/** The settings of a tree with nothing configured. */
export function defaultSelectionSettings(options: { includeTests?: boolean } = {}): SelectionSettings {
  return { includeTests: options.includeTests ?? false, packageRoots: new Set(['']) };
}

/**
 * The class of one path of a tree (a POSIX path relative to its root).
 * Directory names are matched as whole path segments, case-insensitively: `src/test/A.sol` is a
 * test, `contests/A.sol` is not.
 */
export function classifyPath(path: string, settings: SelectionSettings): PathClass {
  return classify(path, settings).kind;
}

/** The class of a path and, for a path not reported, the folder or pattern that decided it. */
function classify(path: string, settings: SelectionSettings): { kind: PathClass; where: string } {
  if (settings.ignore) {
    const rel = settings.base ? path.slice(settings.base.length + 1) : path;
    if (rel && settings.ignore.ignores(rel)) return { kind: 'ignored', where: '' };
  }
  const segments = path.split('/');
  let test: string | undefined;
  for (let i = 0; i < segments.length - 1; i++) {
    const name = segments[i]!.toLowerCase();
    const parent = segments.slice(0, i).join('/');
    if (VENDOR_DIRECTORIES.has(segments[i]!) || (name === 'lib' && settings.packageRoots.has(parent)))
      return { kind: 'vendored', where: `${segments.slice(0, i + 1).join('/')}/` };
    if (test === undefined && TEST_DIRECTORIES.has(name)) test = `${segments.slice(0, i + 1).join('/')}/`;
  }
  if (settings.includeTests) return { kind: 'report', where: '' };
  if (test !== undefined) return { kind: 'test', where: test };
  const file = segments[segments.length - 1]!;
  if (TEST_FILE.test(file)) return { kind: 'test', where: `*${file.slice(-6).toLowerCase()}` };
  return { kind: 'report', where: '' };
}

/**
 * The settings of a tree: its `.vigilignore` and `vigil.toml` and the Foundry projects in it, with
 * `includeTests` from the caller (`--include-tests`) overriding the file. The settings files are
 * those of the top folder of the tree's files: the root, or the deepest folder that holds every
 * file (the workspace prefix of a tree limited to one; a settings file there is itself one of the
 * files, so no deeper folder can be taken). Patterns are relative to that folder. Throws
 * {@link ProjectSettingsError} for a settings file that cannot be used.
 */
export async function loadSelectionSettings(
  tree: Pick<SourceTree, 'read'>,
  entries: readonly SourceEntry[],
  options: { includeTests?: boolean } = {},
): Promise<SelectionSettings> {
  const packageRoots = new Set<string>(['']);
  const base = topFolder(entries);
  const at = (name: string) => (base ? `${base}/${name}` : name);
  let vigilignore: SourceEntry | undefined;
  let toml: SourceEntry | undefined;
  for (const e of entries) {
    if (e.path === at(VIGILIGNORE_FILE)) vigilignore = e;
    else if (e.path === at(VIGIL_TOML_FILE)) toml = e;
    else if (e.path.endsWith('/foundry.toml')) packageRoots.add(e.path.slice(0, -'/foundry.toml'.length));
  }
  const patterns: string[] = [];
  if (vigilignore) patterns.push(...(await readSettingsFile(tree, vigilignore)).split(/\r?\n/));
  const fromToml = toml ? parseVigilToml(await readSettingsFile(tree, toml)) : {};
  if (fromToml.exclude) patterns.push(...fromToml.exclude);
  const matcher = patterns.some((p) => p.trim() !== '' && !p.startsWith('#'))
    ? ignore().add(patterns)
    : undefined;
  return {
    includeTests: options.includeTests === true || fromToml.includeTests === true,
    ...(matcher ? { ignore: matcher, base } : {}),
    packageRoots,
  };
}

/** The deepest folder that holds every entry (`''` when that is the root). */
function topFolder(entries: readonly SourceEntry[]): string {
  let common: string[] | undefined;
  for (const e of entries) {
    const dirs = e.path.split('/').slice(0, -1);
    if (!common) common = dirs;
    else {
      let n = 0;
      while (n < common.length && n < dirs.length && common[n] === dirs[n]) n++;
      common.length = n;
    }
    if (common.length === 0) return '';
  }
  return common?.join('/') ?? '';
}

async function readSettingsFile(tree: Pick<SourceTree, 'read'>, entry: SourceEntry): Promise<string> {
  if (entry.size > MAX_SETTINGS_BYTES)
    throw new ProjectSettingsError(
      `${entry.path}: ${entry.size} bytes is over the ${MAX_SETTINGS_BYTES}-byte limit of a settings file.`,
    );
  return (await tree.read(entry.path)).toString('utf8');
}

/** What `vigil.toml` sets. */
export interface VigilTomlSettings {
  includeTests?: boolean;
  exclude?: string[];
}

const TOML_KEYS = 'include_tests (true or false) and exclude (an array of gitignore patterns)';

/**
 * Reads `vigil.toml`. Only the keys Vigil knows are accepted, at the top level: `include_tests`
 * (a boolean) and `exclude` (an array of strings, gitignore patterns); comments, basic and literal
 * strings, and arrays over several lines are TOML as usual. Anything else (tables, other keys,
 * other value types) is refused with {@link ProjectSettingsError} naming the line, rather than
 * silently ignored.
 */
export function parseVigilToml(text: string): VigilTomlSettings {
  const out: VigilTomlSettings = {};
  const seen = new Set<string>();
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const fail = (what: string): never => {
      throw new ProjectSettingsError(`${VIGIL_TOML_FILE} line ${i + 1}: ${what}`);
    };
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('['))
      fail(`tables are not supported; write the keys at the top level. Vigil reads ${TOML_KEYS}.`);
    const m = /^([A-Za-z0-9_-]+|"[^"]*")\s*=\s*(.*)$/.exec(line);
    if (!m) fail(`expected key = value (got "${line.slice(0, 60)}").`);
    const key = m![1]!.replace(/^"|"$/g, '');
    if (seen.has(key)) fail(`${key} is set twice.`);
    seen.add(key);
    let rest = m![2]!;
    if (key === 'include_tests') {
      const v = /^(true|false)\s*(#.*)?$/.exec(rest);
      if (!v) fail('include_tests must be true or false.');
      out.includeTests = v![1] === 'true';
    } else if (key === 'exclude') {
      if (!rest.startsWith('['))
        fail('exclude must be an array of strings, such as ["generated/", "*.gen.sol"].');
      // An array may span lines: gather them until its closing bracket.
      const values: string[] = [];
      const start = i + 1;
      let pos = 1;
      for (;;) {
        const tail = rest.slice(pos);
        const token = /^\s*(?:#.*$)?/.exec(tail)!;
        pos += token[0].length;
        if (pos >= rest.length) {
          i++;
          if (i >= lines.length)
            throw new ProjectSettingsError(
              `${VIGIL_TOML_FILE} line ${start}: exclude: the array is not closed with "]".`,
            );
          rest = lines[i]!;
          pos = 0;
          continue;
        }
        const ch = rest[pos];
        if (ch === ']') {
          if (!/^\s*(#.*)?$/.test(rest.slice(pos + 1))) fail('unexpected text after the array.');
          break;
        }
        if (ch === ',') {
          pos++;
          continue;
        }
        const s = /^"((?:[^"\\]|\\.)*)"|^'([^']*)'/.exec(rest.slice(pos));
        if (!s) fail('exclude must hold strings only ("…" or \'…\').');
        values.push(s![2] ?? unescapeBasic(s![1]!, fail));
        pos += s![0].length;
      }
      out.exclude = values;
    } else {
      fail(`unknown key "${key}". Vigil reads ${TOML_KEYS}.`);
    }
  }
  return out;
}

function unescapeBasic(text: string, fail: (what: string) => never): string {
  return text.replace(/\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)/g, (_, e: string) => {
    switch (e[0]) {
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case '"':
        return '"';
      case '\\':
        return '\\';
      case 'u':
      case 'U':
        return String.fromCodePoint(Number.parseInt(e.slice(1), 16));
      default:
        return fail(`unknown escape "\\${e}" in a string.`);
    }
  });
}

/** Counts of what a scan left out, to tell the user (see {@link selectionMessages}). */
export class SelectionSummary {
  private testFiles = 0;
  private readonly testWhere = new Set<string>();
  private vendoredFiles = 0;
  private readonly vendoredWhere = new Set<string>();
  private ignoredFiles = 0;

  constructor(readonly settings: SelectionSettings) {}

  /** Classifies `path` and counts it when it is not reported; returns its class. */
  add(path: string, isSolidity: boolean): PathClass {
    const { kind, where } = classify(path, this.settings);
    if (kind === 'test' && isSolidity) {
      this.testFiles++;
      this.testWhere.add(where);
    } else if (kind === 'vendored') {
      this.vendoredFiles++;
      this.vendoredWhere.add(where);
    } else if (kind === 'ignored') this.ignoredFiles++;
    return kind;
  }

  /** What the report says about the files left out (nothing when none was). */
  messages(): ScanMessage[] {
    const out: ScanMessage[] = [];
    if (this.testFiles > 0)
      out.push({
        level: 'info',
        value: `Solidity rules skipped ${this.testFiles} test or script file(s) under ${listed(this.testWhere)} (their secrets were scanned); use --include-tests or include_tests = true in vigil.toml to include them.`,
      });
    if (this.vendoredFiles > 0)
      out.push({
        level: 'info',
        value: `${this.vendoredFiles} file(s) of vendored packages under ${listed(this.vendoredWhere)} were not scanned.`,
      });
    if (this.ignoredFiles > 0)
      out.push({
        level: 'info',
        value: `${this.ignoredFiles} file(s) excluded by ${VIGILIGNORE_FILE} or ${VIGIL_TOML_FILE} were not scanned.`,
      });
    return out;
  }
}

const LISTED = 5;

function listed(where: ReadonlySet<string>): string {
  const all = [...where].sort();
  const shown = all.slice(0, LISTED).join(', ');
  return all.length > LISTED ? `${shown} and ${all.length - LISTED} more` : shown;
}
