/**
 * Solidity parsing with tree-sitter (chosen by measurement: see bench/engine.ts, ~50x faster than
 * the ANTLR parser and linear in file size). Where the build compiled it, tree-sitter's C runtime
 * parses and writes the tree as one flat array (`native/solidity_tree.c`, ADR 0100); elsewhere the
 * runtime compiled to WASM does, walked with its cursor. Either way the tree is converted once into
 * a plain JavaScript AST so that rules never cross into the runtime, and the runtime's tree is
 * freed right away (bounded memory).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Language, Parser } from 'web-tree-sitter';

/** A node of the plain AST. Wrapper nodes (`expression`, `statement`) are collapsed. */
export interface AstNode {
  type: string;
  /** The field name under which the parent holds this node (`left`, `body`, …), if any. */
  field: string | null;
  /** UTF-16 offsets into the source string. */
  start: number;
  end: number;
  /** 1-based lines. */
  line: number;
  endLine: number;
  children: AstNode[];
  parent: AstNode | null;
  /**
   * The whole source of the file the node belongs to (shared, not copied): a rule that reads a
   * modifier or base function declared in another file of the project takes its text from there.
   */
  src: string;
  /** The operator token of binary, unary, update and augmented assignment expressions. */
  op?: string;
}

export interface ParseError {
  line: number;
  kind: 'error' | 'missing';
}

export interface ParsedSource {
  root: AstNode;
  source: string;
  errors: ParseError[];
}

const WRAPPERS = new Set(['expression', 'statement']);
const OPERATOR_NODES = new Set([
  'binary_expression',
  'unary_expression',
  'update_expression',
  'augmented_assignment_expression',
]);
const PUNCTUATION = new Set(['(', ')', '[', ']', '{', '}', ',', ';']);
/** Data locations: anonymous keywords the conversion keeps. */
const LOCATIONS = new Set(['memory', 'storage', 'calldata']);

/**
 * The tree-cursor entry points of the WASM module. The library's `TreeCursor` copies the cursor
 * into the module's transfer buffer before and out of it after every call (four `setValue` and
 * four `getValue` calls per property read); the module's functions read the cursor from that
 * buffer and the `goto…` ones write it back, so a walk that makes no other call in between can
 * call them directly.
 */
interface CursorBinding {
  _ts_tree_cursor_goto_first_child_wasm(tree: number): number;
  _ts_tree_cursor_goto_next_sibling_wasm(tree: number): number;
  _ts_tree_cursor_goto_parent_wasm(tree: number): number;
  _ts_tree_cursor_current_node_type_id_wasm(tree: number): number;
  _ts_tree_cursor_current_field_id_wasm(tree: number): number;
  _ts_tree_cursor_current_node_is_missing_wasm(tree: number): number;
  _ts_tree_cursor_start_index_wasm(tree: number): number;
  _ts_tree_cursor_end_index_wasm(tree: number): number;
}

/** What `convert` reads from a cursor: the library's `TreeCursor` or the direct binding. */
interface CursorLike {
  readonly startIndex: number;
  readonly endIndex: number;
  readonly nodeTypeId: number;
  readonly currentFieldId: number;
  readonly nodeIsMissing: boolean;
  gotoFirstChild(): boolean;
  gotoNextSibling(): boolean;
  gotoParent(): boolean;
}

/** A cursor over the transfer buffer (valid only while nothing else calls into the module). */
class DirectCursor implements CursorLike {
  constructor(
    private readonly c: CursorBinding,
    private readonly tree: number,
  ) {}
  get startIndex(): number {
    return this.c._ts_tree_cursor_start_index_wasm(this.tree);
  }
  get endIndex(): number {
    return this.c._ts_tree_cursor_end_index_wasm(this.tree);
  }
  get nodeTypeId(): number {
    return this.c._ts_tree_cursor_current_node_type_id_wasm(this.tree);
  }
  get currentFieldId(): number {
    return this.c._ts_tree_cursor_current_field_id_wasm(this.tree);
  }
  get nodeIsMissing(): boolean {
    return this.c._ts_tree_cursor_current_node_is_missing_wasm(this.tree) === 1;
  }
  gotoFirstChild(): boolean {
    return this.c._ts_tree_cursor_goto_first_child_wasm(this.tree) === 1;
  }
  gotoNextSibling(): boolean {
    return this.c._ts_tree_cursor_goto_next_sibling_wasm(this.tree) === 1;
  }
  gotoParent(): boolean {
    return this.c._ts_tree_cursor_goto_parent_wasm(this.tree) === 1;
  }
}

/** The fields of a record of the native tree (`native/solidity_tree.c`), in order. */
const RECORD_SIZE = 6;
const R_TYPE = 0;
const R_FIELD = 1;
const R_START = 2;
const R_END = 3;
/** The index of the record after the node's subtree: the next sibling's, if there is one. */
const R_NEXT = 4;
const R_MISSING = 5;

/** A cursor over the pre-order records of the native tree. */
class RecordCursor implements CursorLike {
  /** The current record's first field. */
  private at = 0;
  /** The first fields of the current node's ancestors, innermost last. */
  private readonly parents: number[] = [];
  constructor(private readonly records: Int32Array) {}
  get startIndex(): number {
    return this.records[this.at + R_START]!;
  }
  get endIndex(): number {
    return this.records[this.at + R_END]!;
  }
  get nodeTypeId(): number {
    return this.records[this.at + R_TYPE]!;
  }
  get currentFieldId(): number {
    return this.records[this.at + R_FIELD]!;
  }
  get nodeIsMissing(): boolean {
    return this.records[this.at + R_MISSING] === 1;
  }
  gotoFirstChild(): boolean {
    // A node has children when its subtree holds more than its own record.
    if (this.records[this.at + R_NEXT]! * RECORD_SIZE === this.at + RECORD_SIZE) return false;
    this.parents.push(this.at);
    this.at += RECORD_SIZE;
    return true;
  }
  gotoNextSibling(): boolean {
    const parent = this.parents[this.parents.length - 1];
    if (parent === undefined) return false;
    const next = this.records[this.at + R_NEXT]!;
    if (next >= this.records[parent + R_NEXT]!) return false;
    this.at = next * RECORD_SIZE;
    return true;
  }
  gotoParent(): boolean {
    const parent = this.parents.pop();
    if (parent === undefined) return false;
    this.at = parent;
    return true;
  }
}

/** What `native/solidity_tree.c` exports. */
interface NativeTree {
  parse(source: string, language: unknown): Int32Array;
  /** The same parse on libuv's thread pool. */
  parseAsync(source: string, language: unknown): Promise<Int32Array>;
  symbols(language: unknown): { types: string[]; named: boolean[]; fields: Array<string | null> };
}

/** Where scripts/build.mjs puts the compiled native tree. */
const NATIVE_TREE_FILE = new URL('../../../dist/native/solidity-tree.node', import.meta.url);

/** Node type names, named-ness and field names by numeric id: runtimes hand over numbers, not strings. */
interface GrammarNames {
  typeNames: string[];
  typeNamed: boolean[];
  fieldNames: Array<string | null>;
}

interface NativeRuntime extends GrammarNames {
  kind: 'native';
  tree: NativeTree;
  /** The grammar compiled by the `tree-sitter-solidity` package (its prebuilt binary). */
  language: unknown;
}

interface WasmRuntime extends GrammarNames {
  kind: 'wasm';
  parser: Parser;
  /** The module's cursor functions, when this process initialised the module (see `CursorBinding`). */
  binding: CursorBinding | undefined;
}

export type SolidityRuntime = NativeRuntime | WasmRuntime;

/**
 * Which runtime parses by default: `VIGIL_SOLIDITY_PARSER=wasm` or `native` chooses; unset, the
 * native one when the build compiled it, else WASM.
 */
function runtimeChoice(): 'native' | 'wasm' | 'auto' {
  const v = process.env.VIGIL_SOLIDITY_PARSER;
  return v === 'native' || v === 'wasm' ? v : 'auto';
}

let nativeRuntime: NativeRuntime | Error | undefined;

/** The native runtime, loaded once per process, or why it cannot load here. */
function loadNative(): NativeRuntime | Error {
  if (nativeRuntime) return nativeRuntime;
  try {
    const require = createRequire(import.meta.url);
    const tree = require(fileURLToPath(NATIVE_TREE_FILE)) as NativeTree;
    const language = grammarBinary(require).language;
    const { types, named, fields } = tree.symbols(language);
    nativeRuntime = {
      kind: 'native',
      tree,
      language,
      typeNames: types,
      typeNamed: named,
      fieldNames: fields,
    };
  } catch (err) {
    nativeRuntime = new Error(
      `the native Solidity parser does not load (${(err as Error).message}); "npm run build" compiles it`,
    );
  }
  return nativeRuntime;
}

/**
 * The compiled grammar of `tree-sitter-solidity`: its binary loaded directly where the package
 * keeps it (a local build first, then the prebuilt one for this platform, as the package's own
 * `node-gyp-build` looks), which spares each process that loader and the package's 73 KB
 * `node-types.json`; the package itself where neither is found.
 */
function grammarBinary(require: NodeJS.Require): { language: unknown } {
  try {
    const dir = path.dirname(require.resolve('tree-sitter-solidity/package.json'));
    for (const file of [
      path.join(dir, 'build/Release/tree_sitter_solidity_binding.node'),
      path.join(dir, 'prebuilds', `${process.platform}-${process.arch}`, 'tree-sitter-solidity.node'),
    ])
      if (existsSync(file)) return require(file) as { language: unknown };
  } catch {
    // the package's own loader below
  }
  return require('tree-sitter-solidity') as { language: unknown };
}

/** The native runtime when this process parses with it by default (see `runtimeChoice`). */
function defaultNative(): NativeRuntime | undefined {
  const choice = runtimeChoice();
  if (choice === 'wasm') return undefined;
  const native = loadNative();
  if (!(native instanceof Error)) return native;
  if (choice === 'native') throw native;
  return undefined;
}

/** The tree-sitter runtime this process parses with by default. */
export function solidityParserKind(): 'native' | 'wasm' {
  return defaultNative() ? 'native' : 'wasm';
}

const CURSOR_FUNCTIONS: Array<keyof CursorBinding> = [
  '_ts_tree_cursor_goto_first_child_wasm',
  '_ts_tree_cursor_goto_next_sibling_wasm',
  '_ts_tree_cursor_goto_parent_wasm',
  '_ts_tree_cursor_current_node_type_id_wasm',
  '_ts_tree_cursor_current_field_id_wasm',
  '_ts_tree_cursor_current_node_is_missing_wasm',
  '_ts_tree_cursor_start_index_wasm',
  '_ts_tree_cursor_end_index_wasm',
];

let wasmPromise: Promise<WasmRuntime> | undefined;

/**
 * Below this much Solidity a process that exits after its scan parses with V8's baseline
 * WebAssembly code only. The parser's hottest function (the grammar's lexer) is large: its
 * optimised compilation costs ~50-70 ms of CPU, which a scan of a few hundred kilobytes never
 * earns back, and a process cannot exit before a compilation it started ends. Above it the
 * optimised code pays for itself (measured by bench:engine:audited; ADR 0021).
 */
export const OPTIMIZED_PARSER_MIN_BYTES = 1_000_000;

let baselineOnly = false;

/**
 * For a short-lived process (`vigil engine scan`) that will parse `bytes` of Solidity with the
 * WASM runtime: picks the WebAssembly tier before the runtime loads (later calls, and a process
 * that parses natively, do nothing). Undo with {@link restoreParserTiering} before the process
 * writes its code cache.
 */
export function tierParserForShortRun(bytes: number): void {
  if (wasmPromise || baselineOnly || bytes >= OPTIMIZED_PARSER_MIN_BYTES || defaultNative()) return;
  setV8Flags('--liftoff-only');
  baselineOnly = true;
}

/**
 * Gives V8 back its default WebAssembly tiers: the flags a code cache is checked against. Setting
 * `--liftoff-only` also turned off the flags it implies, which are turned back on one by one.
 */
export function restoreParserTiering(): void {
  if (!baselineOnly) return;
  setV8Flags('--no-liftoff-only --wasm-tier-up --wasm-dynamic-tiering');
  baselineOnly = false;
}

/** `v8.setFlagsFromString`, required when the WASM runtime's tier is set: a native scan never loads `node:v8`. */
function setV8Flags(flags: string): void {
  (createRequire(import.meta.url)('node:v8') as typeof import('node:v8')).setFlagsFromString(flags);
}

/** Whether the Emscripten module exports every cursor function this parser calls. */
function isCursorBinding(module: Record<string, unknown>): module is Record<string, unknown> & CursorBinding {
  return CURSOR_FUNCTIONS.every((f) => typeof module[f] === 'function');
}

/** Loads the WASM runtime and the Solidity grammar once per process. */
function loadWasm(): Promise<WasmRuntime> {
  wasmPromise ??= (async () => {
    // The module object passed to `init` becomes the Emscripten module and receives its
    // exports; when another caller initialised the module first, the library's cursor is used.
    // The runtime's and the grammar's files are located from here, not from the library's own
    // location, which a bundle of the library (scripts/build.mjs) does not keep.
    const require = createRequire(import.meta.url);
    const module: Record<string, unknown> = {
      locateFile: (name: string) => require.resolve(`web-tree-sitter/${name}`),
    };
    await Parser.init(module);
    const binding = isCursorBinding(module) ? module : undefined;
    const language = await Language.load(
      await readFile(require.resolve('tree-sitter-solidity/tree-sitter-solidity.wasm')),
    );
    const parser = new Parser();
    parser.setLanguage(language);
    const typeNames: string[] = [];
    const typeNamed: boolean[] = [];
    for (let id = 0; id < language.nodeTypeCount; id++) {
      typeNames.push(language.nodeTypeForId(id) ?? '');
      typeNamed.push(language.nodeTypeIsNamed(id));
    }
    const fieldNames: Array<string | null> = [null];
    for (let id = 1; id <= language.fieldCount; id++) fieldNames.push(language.fieldNameForId(id));
    return { kind: 'wasm', parser, binding, typeNames, typeNamed, fieldNames };
  })();
  return wasmPromise;
}

/**
 * Loads a runtime and the Solidity grammar once per process: the default one, or the one named
 * (`native` throws when it cannot load here).
 */
export async function loadSolidityParser(kind?: 'native' | 'wasm'): Promise<SolidityRuntime> {
  if (kind === 'native') {
    const native = loadNative();
    if (native instanceof Error) throw native;
    return native;
  }
  return (kind === undefined && defaultNative()) || loadWasm();
}

/**
 * Parses Solidity source into the plain AST; syntax errors are collected, never thrown.
 * `runtime` picks a runtime over the process's default; `direct: false` converts a WASM tree
 * through the library's `TreeCursor` (the fallback path). Both are for tests.
 */
export async function parseSolidity(
  source: string,
  options: { runtime?: 'native' | 'wasm'; direct?: boolean } = {},
): Promise<ParsedSource> {
  const runtime = await loadSolidityParser(options.runtime);
  if (runtime.kind === 'native')
    return convertRecords(runtime.tree.parse(source, runtime.language), source, runtime);
  const tree = runtime.parser.parse(source);
  if (!tree) throw new Error('tree-sitter returned no tree');
  try {
    const ctx = convertContext(source, runtime, tree.rootNode.hasError);
    // `walk()` leaves the new cursor in the transfer buffer, where the direct cursor reads it;
    // `delete()` frees it from the library's copy (the same allocation).
    const cursor = tree.walk();
    const binding = options.direct === false ? undefined : runtime.binding;
    const walker = binding ? new DirectCursor(binding, treeAddress(tree)) : cursor;
    const root = convert(walker, null, ctx, walker.nodeTypeId);
    cursor.delete();
    return { root, source, errors: ctx.errors };
  } finally {
    tree.delete();
  }
}

/**
 * Starts parsing `source` and returns what finishes it. The native runtime parses on libuv's
 * thread pool meanwhile, so a caller that starts the next files before finishing this one (the
 * project loader) has them parsed while it converts; with WASM the parse happens when finished.
 */
export function startSolidityParse(source: string): () => Promise<ParsedSource> {
  const native = defaultNative();
  if (!native) return () => parseSolidity(source);
  const records = native.tree.parseAsync(source, native.language);
  // A parse started but never finished (a scan aborted meanwhile) is no unhandled rejection.
  records.catch(() => undefined);
  return async () => convertRecords(await records, source, native);
}

function convertRecords(records: Int32Array, source: string, names: GrammarNames): ParsedSource {
  const cursor = new RecordCursor(records);
  // Every record says whether its node is missing: no need to ask the tree first.
  const ctx = convertContext(source, names, true);
  const root = convert(cursor, null, ctx, cursor.nodeTypeId);
  return { root, source, errors: ctx.errors };
}

function convertContext(source: string, names: GrammarNames, checkMissing: boolean): ConvertContext {
  return {
    source,
    errors: [],
    // Lines come from offsets (one table per file) rather than from tree-sitter points, which
    // the WASM cursor would read one call at a time.
    lines: new LineIndex(source),
    checkMissing,
    // One object shape whichever runtime parsed: the conversion reads these for every node.
    names: { typeNames: names.typeNames, typeNamed: names.typeNamed, fieldNames: names.fieldNames },
    stack: [],
    top: 0,
  };
}

interface ConvertContext {
  source: string;
  errors: ParseError[];
  lines: LineIndex;
  checkMissing: boolean;
  names: GrammarNames;
  /** The children of the nodes being converted, innermost last, up to `top`. */
  stack: AstNode[];
  top: number;
}

/**
 * Offset → 1-based line over the line starts of a file. The conversion asks for node starts in
 * order (a pre-order walk never goes back), so each search starts from the previous start's line
 * and gallops forward: a step or two per node instead of a binary search over the whole file.
 */
export class LineIndex {
  private readonly starts: number[] = [0];
  /** Index of the line the last `startLine` found. */
  private hint = 0;

  constructor(source: string) {
    for (let i = source.indexOf('\n'); i >= 0; i = source.indexOf('\n', i + 1)) this.starts.push(i + 1);
  }

  /** The line of `offset`, searched from the line of the previous call's offset. */
  startLine(offset: number): number {
    if (this.starts[this.hint]! > offset) this.hint = 0;
    this.hint = this.search(offset, this.hint);
    return this.hint + 1;
  }

  /** The line of `offset`, at or after the 1-based line `line` (whose start is at or before it). */
  lineFrom(line: number, offset: number): number {
    return this.search(offset, line - 1) + 1;
  }

  /** The last line index whose start is at or before `offset`, given one such index `lo`. */
  private search(offset: number, lo: number): number {
    const starts = this.starts;
    const last = starts.length - 1;
    let step = 1;
    let hi = lo + 1;
    while (hi <= last && starts[hi]! <= offset) {
      lo = hi;
      step *= 2;
      hi = lo + step;
    }
    if (hi > last) hi = last;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

/** The module address of a tree (the library keeps it at index 0). */
function treeAddress(tree: import('web-tree-sitter').Tree): number {
  // The address is a private field of the library's Tree, absent from its types: read by key
  // (the cursor functions above take it to walk the tree without allocations).
  const address: unknown = Reflect.get(tree, 0);
  if (typeof address !== 'number') throw new Error('web-tree-sitter: a tree without its address');
  return address;
}

/** Leaves share this array until a child is added (most nodes of a tree are leaves). */
const NO_CHILDREN: AstNode[] = [];

function convert(cursor: CursorLike, parent: AstNode | null, ctx: ConvertContext, typeId: number): AstNode {
  const start = cursor.startIndex;
  const end = cursor.endIndex;
  const line = ctx.lines.startLine(start);
  const node: AstNode = {
    type: ctx.names.typeNames[typeId] ?? 'ERROR',
    field: ctx.names.fieldNames[cursor.currentFieldId] ?? null,
    start,
    end,
    line,
    endLine: end > start ? ctx.lines.lineFrom(line, end - 1) : line,
    children: NO_CHILDREN,
    parent,
    src: ctx.source,
  };
  if (node.type === 'ERROR') ctx.errors.push({ line: node.line, kind: 'error' });
  if (cursor.gotoFirstChild()) {
    // Children gather on the shared stack and leave it as an array of their exact size: an array
    // grown by `push` keeps room for 17, and the whole tree stays alive for the scan. The stack
    // is never shortened (a length write is a call into V8's runtime): `ctx.top` is its end.
    const children = ctx.stack;
    const base = ctx.top;
    const operator = OPERATOR_NODES.has(node.type);
    do {
      if (ctx.checkMissing && cursor.nodeIsMissing)
        ctx.errors.push({ line: ctx.lines.startLine(cursor.startIndex), kind: 'missing' });
      const childTypeId = cursor.nodeTypeId;
      const type = ctx.names.typeNames[childTypeId] ?? 'ERROR';
      if (ctx.names.typeNamed[childTypeId] || type === 'ERROR') {
        if (type === 'comment') continue;
        let child = convert(cursor, node, ctx, childTypeId);
        // Collapse `expression`/`statement` wrappers: keep the wrapper's field on the child.
        while (WRAPPERS.has(child.type) && child.children.length === 1) {
          const inner = child.children[0]!;
          inner.field = child.field;
          inner.parent = node;
          child = inner;
        }
        children[ctx.top++] = child;
      } else if (LOCATIONS.has(type) && ctx.names.fieldNames[cursor.currentFieldId] === 'location') {
        // `memory`/`storage`/`calldata` are anonymous keywords, but the rules need them.
        const keywordLine = ctx.lines.startLine(cursor.startIndex);
        children[ctx.top++] = {
          type,
          field: 'location',
          start: cursor.startIndex,
          end: cursor.endIndex,
          line: keywordLine,
          endLine: keywordLine,
          children: NO_CHILDREN,
          parent: node,
          src: ctx.source,
        };
      } else if (operator && node.op === undefined && !PUNCTUATION.has(type)) {
        node.op = type;
      }
    } while (cursor.gotoNextSibling());
    cursor.gotoParent();
    if (ctx.top > base) node.children = children.slice(base, ctx.top);
    ctx.top = base;
  }
  return reassociate(node);
}

/** Solidity operator precedence (higher binds tighter). */
const PRECEDENCE: Record<string, number> = {
  '**': 10,
  '*': 9,
  '/': 9,
  '%': 9,
  '+': 8,
  '-': 8,
  '<<': 7,
  '>>': 7,
  '&': 6,
  '^': 5,
  '|': 4,
  '<': 3,
  '>': 3,
  '<=': 3,
  '>=': 3,
  '==': 2,
  '!=': 2,
  '&&': 1,
  '||': 0,
};

/**
 * After an index access was rotated onto an operand, `(a + b[c]) * d` may sit under a
 * higher-precedence operator as its left operand; rotate to `a + (b[c] * d)`. Source
 * parentheses produce `parenthesized_expression`, so a bare lower-precedence left operand is
 * always such a leftover.
 */
function reassociateBinary(x: AstNode): AstNode {
  const li = x.children.findIndex((c) => c.field === 'left');
  const left = x.children[li];
  if (left?.type !== 'binary_expression' || !left.op || !x.op) return x;
  if ((PRECEDENCE[left.op] ?? 99) >= (PRECEDENCE[x.op] ?? 99)) return x;
  const ri = left.children.findIndex((c) => c.field === 'right');
  const inner = left.children[ri];
  if (!inner) return x;
  const { field: xField, parent: xParent, end: xEnd, endLine: xEndLine } = x;
  inner.field = 'left';
  inner.parent = x;
  x.children[li] = inner;
  x.start = inner.start;
  x.line = inner.line;
  const fixed = reassociateBinary(x);
  fixed.field = 'right';
  fixed.parent = left;
  left.children[ri] = fixed;
  left.field = xField;
  left.parent = xParent;
  left.end = xEnd;
  left.endLine = xEndLine;
  return left;
}

/** Postfix expressions and the child that holds what they apply to. */
const POSTFIX_BASE: Record<string, string> = {
  array_access: 'base',
  slice_access: 'base',
  member_expression: 'object',
  call_expression: 'function',
  // Postfix `x++`/`x--` only: see `reassociate`.
  update_expression: 'argument',
};
const OPERATOR_TYPES = new Set([
  'binary_expression',
  'unary_expression',
  'ternary_expression',
  'update_expression',
]);

/** The operand an unparenthesized postfix operator should have bound to: the last one. */
function lastOperand(op: AstNode): AstNode | undefined {
  switch (op.type) {
    case 'binary_expression':
      return op.children.find((c) => c.field === 'right');
    case 'unary_expression':
      return op.children.find((c) => c.field === 'argument');
    case 'update_expression': {
      const arg = op.children.find((c) => c.field === 'argument');
      return arg && arg.start > op.start ? arg : undefined; // prefix `++x` only
    }
    case 'ternary_expression':
      return op.children[op.children.length - 1];
    default:
      return undefined;
  }
}

/**
 * tree-sitter-solidity 1.2 gives index access a lower precedence than every operator:
 * `a + b[i]` comes out as `(a + b)[i]`, `!m[k]` as `(!m)[k]`. Parentheses in the source yield a
 * `parenthesized_expression`, so an operator directly under a postfix expression is always this
 * mistake; rotate the postfix onto the operator's last operand: `a + (b[i])`. The same holds for
 * postfix increments: `n == nonces[h]++` comes out as `(n == nonces[h])++`.
 */
function reassociate(x: AstNode): AstNode {
  if (x.type === 'binary_expression') return reassociateBinary(x);
  const baseField = POSTFIX_BASE[x.type];
  if (!baseField) return x;
  const bi = x.children.findIndex((c) => c.field === baseField);
  const base = x.children[bi];
  if (!base || !OPERATOR_TYPES.has(base.type)) return x;
  // A prefix `++x` starts before its operand: its operand is what follows, never a leftover.
  if (x.type === 'update_expression' && base.start !== x.start) return x;
  const operand = lastOperand(base);
  if (!operand) return x;
  const { field: xField, parent: xParent, end: xEnd, endLine: xEndLine } = x;
  const oi = base.children.indexOf(operand);
  const operandField = operand.field;
  operand.field = baseField;
  operand.parent = x;
  x.children[bi] = operand;
  x.start = operand.start;
  x.line = operand.line;
  const fixed = reassociate(x);
  fixed.field = operandField;
  fixed.parent = base;
  base.children[oi] = fixed;
  base.field = xField;
  base.parent = xParent;
  base.end = xEnd;
  base.endLine = xEndLine;
  return base;
}
