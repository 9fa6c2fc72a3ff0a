/**
 * The project model: every Solidity file of a scan, its imports resolved as the compiler would
 * resolve them, and contracts linearised as Solidity does (C3), so that a rule reading one file
 * knows the modifiers, internal functions, libraries and state variables of base contracts
 * declared in others.
 */
import { posix } from 'node:path';
import type { ContractInfo, ProjectView, SolFile, VisibleNames } from './model.ts';

/** A remapping `prefix=target` (remappings.txt, foundry.toml), optionally limited to a context. */
export interface Remapping {
  context: string;
  prefix: string;
  target: string;
}

/** Parses `remappings.txt` lines (`[context:]prefix=target`); comments and blanks are skipped. */
export function parseRemappings(text: string): Remapping[] {
  const out: Remapping[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*$/, '').trim();
    const m = /^(?:([^:=]+):)?([^=]+)=(.*)$/.exec(line);
    if (!m) continue;
    out.push({ context: (m[1] ?? '').trim(), prefix: m[2]!.trim(), target: m[3]!.trim() });
  }
  return out;
}

/** The `remappings = [...]` entries of a `foundry.toml` (any profile). */
export function foundryRemappings(toml: string): Remapping[] {
  const out: Remapping[] = [];
  for (const m of toml.matchAll(/^\s*remappings\s*=\s*\[([\s\S]*?)\]/gm)) {
    for (const s of m[1]!.matchAll(/["']([^"']+)["']/g)) out.push(...parseRemappings(s[1]!));
  }
  return out;
}

/** Folders where packages are looked up, after the remappings, as Foundry and Hardhat do. */
const PACKAGE_ROOTS = ['node_modules/', 'lib/'];

export class ProjectIndex implements ProjectView {
  private readonly files = new Map<string, SolFile>();
  private readonly byName = new Map<string, ContractInfo[]>();
  private readonly visibleMemo = new Map<SolFile, VisibleNames>();
  private readonly linearMemo = new Map<ContractInfo, ContractInfo[]>();
  private readonly resolveMemo = new Map<string, SolFile | undefined>();

  constructor(
    files: Iterable<SolFile>,
    private readonly remappings: readonly Remapping[] = [],
  ) {
    for (const f of files) this.add(f);
  }

  /** A project of one file (unit tests, a single-file scan). */
  static of(file: SolFile): ProjectIndex {
    return new ProjectIndex([file]);
  }

  add(file: SolFile): void {
    if (this.files.has(file.path)) return;
    this.files.set(file.path, file);
    for (const c of file.contracts) {
      const list = this.byName.get(c.name);
      if (list) list.push(c);
      else this.byName.set(c.name, [c]);
    }
    this.visibleMemo.clear();
    this.linearMemo.clear();
    this.resolveMemo.clear();
  }

  file(path: string): SolFile | undefined {
    return this.files.get(path);
  }

  get size(): number {
    return this.files.size;
  }

  /**
   * The tree paths an import may name, best first: a relative path against the importing file;
   * otherwise the longest matching remapping, the path from the root, then the package folders
   * (`node_modules/`, `lib/`, and Foundry's `lib/<name>/src/`).
   */
  candidatePaths(from: string, imported: string): string[] {
    if (imported.startsWith('./') || imported.startsWith('../'))
      return [posix.normalize(posix.join(posix.dirname(from), imported))];
    const out: string[] = [];
    let best: Remapping | undefined;
    for (const r of this.remappings) {
      if (r.context && !from.startsWith(r.context)) continue;
      if (!imported.startsWith(r.prefix)) continue;
      if (!best || r.prefix.length > best.prefix.length) best = r;
    }
    if (best) out.push(posix.normalize(best.target + imported.slice(best.prefix.length)));
    out.push(posix.normalize(imported));
    for (const root of PACKAGE_ROOTS) out.push(root + imported);
    const slash = imported.indexOf('/');
    if (slash > 0) {
      const name = imported.slice(0, slash);
      const rest = imported.slice(slash + 1);
      out.push(`lib/${name}/src/${rest}`, `lib/${name}/contracts/${rest}`);
    }
    return out.map((p) => p.replace(/^\.\//, ''));
  }

  resolve(from: string, imported: string): SolFile | undefined {
    const key = `${posix.dirname(from)}\u0000${imported}`;
    if (this.resolveMemo.has(key)) return this.resolveMemo.get(key);
    const found = this.resolveUncached(from, imported);
    this.resolveMemo.set(key, found);
    return found;
  }

  private resolveUncached(from: string, imported: string): SolFile | undefined {
    for (const p of this.candidatePaths(from, imported)) {
      const f = this.files.get(p);
      if (f) return f;
    }
    // A tree scanned from a sub-folder: match the import's path by its ending.
    const tail = imported.replace(/^(\.\.?\/)+/, '');
    let found: SolFile | undefined;
    for (const [p, f] of this.files) {
      if (p === tail || p.endsWith(`/${tail}`)) {
        if (found) return undefined; // ambiguous
        found = f;
      }
    }
    return found;
  }

  /**
   * What `file` can name: its own contracts first, then those of the files it imports (directly
   * or through them, with import aliases), then any contract whose name is unique in the project
   * (an import the scan could not resolve, such as a package that was not uploaded).
   */
  visible(file: SolFile): VisibleNames {
    const cached = this.visibleMemo.get(file);
    if (cached) return cached;
    const byName = new Map<string, ContractInfo>();
    for (const c of file.contracts) byName.set(c.name, c);
    const valueTypes = new Set(file.valueTypes);
    const seen = new Set<SolFile>([file]);
    const queue: SolFile[] = [file];
    while (queue.length > 0) {
      const f = queue.shift()!;
      for (const imp of f.imports) {
        const target = this.resolve(f.path, imp.path);
        if (!target) continue;
        if (f === file && imp.aliases.size > 0) {
          for (const [alias, original] of imp.aliases) {
            const c = target.contracts.find((x) => x.name === original) ?? this.uniqueNamed(original);
            if (c && !byName.has(alias)) byName.set(alias, c);
          }
        }
        if (seen.has(target)) continue;
        seen.add(target);
        queue.push(target);
        for (const t of target.valueTypes) valueTypes.add(t);
        for (const c of target.contracts) if (!byName.has(c.name)) byName.set(c.name, c);
      }
    }
    for (const [name, list] of this.byName)
      if (!byName.has(name) && list.length === 1) byName.set(name, list[0]!);
    const contracts = [...byName.values()];
    const v: VisibleNames = {
      contractsByName: byName,
      libraries: new Set([...byName].filter(([, c]) => c.kind === 'library').map(([n]) => n)),
      contractNames: new Set(byName.keys()),
      contracts: [...new Set(contracts)],
      valueTypes,
    };
    this.visibleMemo.set(file, v);
    return v;
  }

  private uniqueNamed(name: string): ContractInfo | undefined {
    const list = this.byName.get(name);
    return list && list.length === 1 ? list[0] : undefined;
  }

  /** The contract a base name of `c` refers to, as seen from the file declaring `c`. */
  baseOf(c: ContractInfo, name: string): ContractInfo | undefined {
    const found = this.visible(c.file).contractsByName.get(name);
    return found === c ? undefined : found;
  }

  /**
   * The C3 linearisation of `c`, most derived first, as the compiler computes it (bases are
   * listed from "most base-like" to "most derived"). Bases the project does not hold are left
   * out; an inheritance graph C3 rejects falls back to a depth-first order.
   */
  linearize(c: ContractInfo): ContractInfo[] {
    const cached = this.linearMemo.get(c);
    if (cached) return cached;
    // A cycle (broken code) must end: the contract alone while its own linearisation is computed.
    this.linearMemo.set(c, [c]);
    const bases = c.bases
      .map((b) => this.baseOf(c, b))
      .filter((b): b is ContractInfo => b !== undefined && b !== c);
    const sequences = [...bases].reverse().map((b) => [...this.linearize(b)]);
    sequences.push([...bases].reverse());
    const merged = c3merge(sequences);
    const out = merged
      ? [c, ...merged]
      : depthFirst(c, (x) => (x === c ? bases : this.linearize(x).slice(1)));
    this.linearMemo.set(c, out);
    return out;
  }
}

/** The C3 merge of sequences; undefined when no consistent order exists. */
function c3merge(sequences: ContractInfo[][]): ContractInfo[] | undefined {
  const out: ContractInfo[] = [];
  const seqs = sequences.filter((s) => s.length > 0);
  while (seqs.length > 0) {
    let head: ContractInfo | undefined;
    for (const s of seqs) {
      const candidate = s[0]!;
      if (!seqs.some((t) => t.indexOf(candidate) > 0)) {
        head = candidate;
        break;
      }
    }
    if (!head) return undefined;
    out.push(head);
    for (const s of seqs) if (s[0] === head) s.shift();
    for (let i = seqs.length - 1; i >= 0; i--) if (seqs[i]!.length === 0) seqs.splice(i, 1);
  }
  return out;
}

function depthFirst(c: ContractInfo, basesOf: (x: ContractInfo) => ContractInfo[]): ContractInfo[] {
  const out: ContractInfo[] = [];
  const seen = new Set<ContractInfo>();
  const visit = (x: ContractInfo): void => {
    if (seen.has(x)) return;
    seen.add(x);
    out.push(x);
    for (const b of [...basesOf(x)].reverse()) visit(b);
  };
  visit(c);
  return out;
}
