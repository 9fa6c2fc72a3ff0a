/**
 * A declaration-level model of one Solidity file: contracts, inheritance, state variables,
 * functions and modifiers, with the helpers rules need (visibility defaults of old compilers,
 * pragma versions, call classification).
 */
import { callArgs, childOfType, childrenOfType, field, fields, unwrap } from './ast.ts';
import type { AstNode, ParseError } from './parser.ts';

export interface PragmaInfo {
  line: number;
  text: string;
  /** The lowest compiler version the pragma admits, as [major, minor, patch]. */
  minVersion: [number, number, number] | undefined;
  /** Whether the pragma admits more than one version (`^`, `>=`, ranges). */
  floating: boolean;
}

export interface VarInfo {
  name: string;
  typeText: string;
  node: AstNode;
  line: number;
  kind: 'state' | 'param' | 'return' | 'local';
  isMapping: boolean;
  isArray: boolean;
  isConstant: boolean;
  /** `storage`, `memory`, `calldata` or undefined (not written). */
  location?: string;
  initializer?: AstNode;
  visibility?: string;
}

export type FunctionKind = 'function' | 'constructor' | 'fallback' | 'receive' | 'modifier';

export interface FunctionInfo {
  name: string;
  kind: FunctionKind;
  node: AstNode;
  contract: ContractInfo;
  params: VarInfo[];
  returns: VarInfo[];
  visibility: 'public' | 'external' | 'internal' | 'private';
  mutability: 'payable' | 'view' | 'pure' | 'nonpayable';
  /** Modifier invocations in the header (name and node). */
  modifiers: Array<{ name: string; node: AstNode }>;
  body: AstNode | undefined;
  /** A 0.4 function named like its contract (an old-style constructor). */
  legacyConstructor: boolean;
  /** Line of the `function` keyword and of the header's end (before the body). */
  line: number;
  headerEndLine: number;
  /** Cache of `bodyNodes`: the body's nodes of a `BodyNodeKind`, in pre-order. */
  bodyIndex?: AstNode[];
}

/** Statement and declaration kinds that rules look up in function bodies, see `bodyNodes`. */
export type BodyNodeKind =
  | 'variable_declaration'
  | 'variable_declaration_statement'
  | 'expression_statement'
  | 'return_statement'
  | 'for_statement'
  | 'while_statement';

const BODY_NODE_KINDS: ReadonlySet<string> = new Set<BodyNodeKind>([
  'variable_declaration',
  'variable_declaration_statement',
  'expression_statement',
  'return_statement',
  'for_statement',
  'while_statement',
]);

function indexBody(n: AstNode, out: AstNode[]): void {
  if (BODY_NODE_KINDS.has(n.type)) out.push(n);
  for (const c of n.children) indexBody(c, out);
}

/**
 * The nodes of the given kinds in a function's body, in pre-order — the same nodes, in the same
 * order, as `descendants(fn.body, ...kinds)`. One walk per body records every kind of
 * `BodyNodeKind`, so the ten or so rules and analyses that search each body for their own
 * statements no longer walk the whole body each time.
 */
export function bodyNodes(fn: FunctionInfo, ...kinds: BodyNodeKind[]): AstNode[] {
  const body = fn.body;
  if (!body) return [];
  let all = fn.bodyIndex;
  if (!all) {
    all = [];
    indexBody(body, all);
    // A field of the function rather than a WeakMap: ephemeron tables slow every scavenge.
    fn.bodyIndex = all;
  }
  if (kinds.length === 1) {
    const k = kinds[0];
    return all.filter((n) => n.type === k);
  }
  return all.filter((n) => (kinds as string[]).includes(n.type));
}

export interface ContractInfo {
  name: string;
  /** The file that declares the contract. */
  file: SolFile;
  kind: 'contract' | 'interface' | 'library';
  node: AstNode;
  bases: string[];
  stateVars: Map<string, VarInfo>;
  functions: FunctionInfo[];
  modifiers: Map<string, FunctionInfo>;
  structs: Set<string>;
  enums: Set<string>;
  events: Set<string>;
  /** `using L for T` directives: library names. */
  usingLibraries: Set<string>;
  line: number;
}

export type CallKind =
  | 'call'
  | 'delegatecall'
  | 'callcode'
  | 'staticcall'
  | 'send'
  | 'transfer'
  | 'external'
  | 'internal'
  | 'builtin'
  | 'other';

export interface CallInfo {
  node: AstNode;
  kind: CallKind;
  /** The receiver expression of a member call (`a` in `a.call(…)`). */
  target?: AstNode;
  /** Called member or function name. */
  name: string;
  /** `value` option (`.value(x)`, `{value: x}`, or the amount of `send`/`transfer`). */
  value?: AstNode;
  gas?: AstNode;
  args: AstNode[];
}

const LOW_LEVEL = new Set(['call', 'delegatecall', 'callcode', 'staticcall']);
const NOT_CONTRACT_OBJECTS = new Set([
  'msg',
  'block',
  'tx',
  'abi',
  'super',
  'string',
  'bytes',
  'type',
  'Math',
]);
const _ARRAY_MEMBERS = new Set(['push', 'pop', 'length', 'concat']);
export const BUILTIN_FUNCTIONS = new Set([
  'require',
  'assert',
  'revert',
  'keccak256',
  'sha3',
  'sha256',
  'ripemd160',
  'ecrecover',
  'addmod',
  'mulmod',
  'selfdestruct',
  'suicide',
  'blockhash',
  'gasleft',
  'uint',
  'uint8',
  'uint16',
  'uint24',
  'uint32',
  'uint64',
  'uint128',
  'uint256',
  'int',
  'int256',
  'address',
  'bytes',
  'bytes4',
  'bytes32',
  'bool',
  'string',
  'payable',
]);

/** An `import` directive: the path as written and the names it binds (`alias` → imported name). */
export interface ImportInfo {
  path: string;
  line: number;
  /** `import {A as B} from "…"`: B → A. Empty for imports of every name. */
  aliases: Map<string, string>;
  /** `import * as M from "…"` / `import "…" as M`: the unit alias M. */
  unitAlias?: string;
}

/** One parsed file with its declarations. */
export class SolFile {
  readonly contracts: ContractInfo[] = [];
  readonly imports: ImportInfo[] = [];
  /** Structs, enums and user-defined value types declared at file level. */
  readonly valueTypes = new Set<string>();
  readonly pragma: PragmaInfo | undefined;
  /** Free functions and file-level constants are rare; they are kept as a pseudo-contract. */
  private lineStarts: number[] | undefined;

  constructor(
    readonly path: string,
    readonly source: string,
    readonly root: AstNode,
    readonly errors: ParseError[],
  ) {
    this.pragma = this.readPragma();
    for (const n of root.children) {
      if (
        n.type === 'contract_declaration' ||
        n.type === 'interface_declaration' ||
        n.type === 'library_declaration'
      ) {
        this.contracts.push(this.readContract(n));
      } else if (n.type === 'import_directive') {
        const imp = this.readImport(n);
        if (imp) this.imports.push(imp);
      } else if (
        n.type === 'struct_declaration' ||
        n.type === 'enum_declaration' ||
        n.type === 'user_defined_type_definition'
      ) {
        const name = field(n, 'name');
        if (name) this.valueTypes.add(this.text(name));
      }
    }
  }

  /** The node's source text, from the file the node belongs to (which may be another file of the project). */
  text(node: AstNode): string {
    return node.src.slice(node.start, node.end);
  }

  /** Whether the node belongs to this file (rather than to a base contract's file). */
  owns(node: AstNode): boolean {
    return node.src === this.source;
  }

  private readImport(n: AstNode): ImportInfo | undefined {
    const source = field(n, 'source');
    if (!source) return undefined;
    const path = this.text(source).replace(/^["']|["']$/g, '');
    const aliases = new Map<string, string>();
    let unitAlias: string | undefined;
    let lastName: string | undefined;
    for (const c of n.children) {
      if (c.field === 'import_name') {
        lastName = this.text(c);
        aliases.set(lastName, lastName);
      } else if (c.field === 'alias') {
        if (lastName !== undefined) {
          aliases.delete(lastName);
          aliases.set(this.text(c), lastName);
          lastName = undefined;
        } else unitAlias = this.text(c);
      }
    }
    return { path, line: n.line, aliases, ...(unitAlias ? { unitAlias } : {}) };
  }

  /** The source line (1-based), without its line break. */
  lineText(line: number): string {
    if (!this.lineStarts) {
      this.lineStarts = [0];
      for (let i = 0; i < this.source.length; i++)
        if (this.source.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
    }
    const s = this.lineStarts[line - 1];
    if (s === undefined) return '';
    const e = this.lineStarts[line] ?? this.source.length + 1;
    return this.source.slice(s, e - 1).replace(/\r$/, '');
  }

  /** Whether the compiler admitted by the pragma is older than `major.minor`. Unknown → false. */
  versionBelow(major: number, minor: number): boolean {
    const v = this.pragma?.minVersion;
    if (!v) return false;
    return v[0] < major || (v[0] === major && v[1] < minor);
  }

  /** Solidity before 0.8 has no checked arithmetic. No pragma → judged from legacy syntax. */
  get uncheckedArithmetic(): boolean {
    if (this.pragma?.minVersion) return this.versionBelow(0, 8);
    return /\b(throw|suicide|sha3|var)\b|\bconstant\s+returns\b/.test(this.source);
  }

  private readPragma(): PragmaInfo | undefined {
    for (const n of this.root.children) {
      if (n.type !== 'pragma_directive') continue;
      const text = this.text(n);
      const m = /pragma\s+solidity\s+([^;]+);?/.exec(text);
      if (!m) continue;
      const spec = m[1]!.trim();
      const versions = [...spec.matchAll(/(\d+)\.(\d+)(?:\.(\d+))?/g)].map(
        (v) => [Number(v[1]), Number(v[2]), Number(v[3] ?? 0)] as [number, number, number],
      );
      versions.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
      const floating = /[\^~><*x]/.test(spec) || versions.length > 1;
      return { line: n.line, text: text.trim(), minVersion: versions[0], floating };
    }
    return undefined;
  }

  private readContract(n: AstNode): ContractInfo {
    const name = this.text(field(n, 'name')!);
    const kind =
      n.type === 'interface_declaration'
        ? 'interface'
        : n.type === 'library_declaration'
          ? 'library'
          : 'contract';
    const bases = childrenOfType(n, 'inheritance_specifier').map((s) => {
      const a = field(s, 'ancestor');
      // `M.Base` (a unit alias) names the contract `Base`.
      return a ? this.text(a).replace(/\s+/g, '').replace(/^.*\./, '') : '';
    });
    const c: ContractInfo = {
      name,
      file: this,
      kind,
      node: n,
      bases,
      stateVars: new Map(),
      functions: [],
      modifiers: new Map(),
      structs: new Set(),
      enums: new Set(),
      events: new Set(),
      usingLibraries: new Set(),
      line: n.line,
    };
    const body = field(n, 'body');
    if (!body) return c;
    for (const m of body.children) {
      switch (m.type) {
        case 'state_variable_declaration': {
          const v = this.readVar(m, 'state');
          if (v) c.stateVars.set(v.name, v);
          break;
        }
        case 'function_definition':
        case 'constructor_definition':
        case 'fallback_receive_definition':
          c.functions.push(this.readFunction(m, c));
          break;
        case 'modifier_definition': {
          const f = this.readFunction(m, c);
          c.modifiers.set(f.name, f);
          break;
        }
        case 'struct_declaration':
          c.structs.add(this.text(field(m, 'name')!));
          break;
        case 'enum_declaration':
        case 'user_defined_type_definition':
          c.enums.add(this.text(field(m, 'name')!));
          break;
        case 'event_definition':
          c.events.add(this.text(field(m, 'name')!));
          break;
        case 'using_directive':
          for (const a of m.children) if (a.type === 'type_alias') c.usingLibraries.add(this.text(a));
          break;
      }
    }
    return c;
  }

  /** Reads a state variable, parameter or local declaration. */
  readVar(n: AstNode, kind: VarInfo['kind']): VarInfo | undefined {
    const nameNode = field(n, 'name');
    const typeNode = field(n, 'type');
    // Unnamed parameters and return values still count (`returns (bool)`).
    if (!nameNode && kind !== 'param' && kind !== 'return') return undefined;
    const typeText = typeNode ? this.text(typeNode).replace(/\s+/g, ' ') : 'var';
    const locNode = field(n, 'location');
    const full = this.text(n);
    const v: VarInfo = {
      name: nameNode ? this.text(nameNode) : '',
      typeText,
      node: n,
      line: n.line,
      kind,
      isMapping: /^mapping\s*\(/.test(typeText),
      isArray: /\]$/.test(typeText),
      isConstant:
        kind === 'state' &&
        nameNode !== undefined &&
        /\b(constant|immutable)\b/.test(full.slice(0, nameNode.start - n.start)),
    };
    if (locNode) v.location = this.text(locNode);
    const value = field(n, 'value');
    if (value) v.initializer = value;
    const vis = field(n, 'visibility');
    if (vis) v.visibility = this.text(vis);
    return v;
  }

  private readFunction(n: AstNode, contract: ContractInfo): FunctionInfo {
    const nameNode = field(n, 'name');
    let kind: FunctionKind = 'function';
    let name = nameNode ? this.text(nameNode) : '';
    if (n.type === 'constructor_definition') {
      kind = 'constructor';
      name = 'constructor';
    } else if (n.type === 'modifier_definition') kind = 'modifier';
    else if (n.type === 'fallback_receive_definition') {
      kind = /^\s*receive\b/.test(this.text(n)) ? 'receive' : 'fallback';
      name = kind;
    }
    const legacyConstructor = kind === 'function' && name === contract.name;
    if (legacyConstructor) kind = 'constructor';
    const params = childrenOfType(n, 'parameter')
      .map((p) => this.readVar(p, 'param'))
      .filter((v): v is VarInfo => v !== undefined);
    const rt = field(n, 'return_type');
    const returns = rt
      ? childrenOfType(rt, 'parameter')
          .map((p) => this.readVar(p, 'return'))
          .filter((v): v is VarInfo => v !== undefined)
      : [];
    const visNode = childOfType(n, 'visibility');
    const vis = visNode
      ? this.text(visNode)
      : kind === 'fallback' || kind === 'receive'
        ? 'external'
        : 'public';
    const mutNodes = childrenOfType(n, 'state_mutability').map((m) => this.text(m));
    let mutability: FunctionInfo['mutability'] = 'nonpayable';
    // 0.4's `constant` functions are views; the grammar keeps the keyword anonymous.
    const header = this.source.slice(n.start, field(n, 'body')?.start ?? n.end);
    if (/\bconstant\b/.test(header.replace(/\([^)]*\)/g, ''))) mutNodes.push('constant');
    if (mutNodes.includes('payable')) mutability = 'payable';
    else if (mutNodes.includes('view') || mutNodes.includes('constant')) mutability = 'view';
    else if (mutNodes.includes('pure')) mutability = 'pure';
    const modifiers = childrenOfType(n, 'modifier_invocation').map((m) => {
      const id = childOfType(m, 'identifier');
      return { name: id ? this.text(id) : this.text(m), node: m };
    });
    const body = field(n, 'body');
    return {
      name,
      kind,
      node: n,
      contract,
      params,
      returns,
      visibility: (['public', 'external', 'internal', 'private'].includes(vis)
        ? vis
        : 'public') as FunctionInfo['visibility'],
      mutability,
      modifiers,
      body,
      legacyConstructor,
      line: n.line,
      headerEndLine: body ? body.line : n.endLine,
      bodyIndex: undefined,
    };
  }

  /** Classifies a call expression (low-level, value transfer, external, internal, builtin). */
  classifyCall(call: AstNode, scope: Scope): CallInfo {
    let f = unwrap(field(call, 'function') ?? call);
    let value: AstNode | undefined;
    let gas: AstNode | undefined;
    for (;;) {
      if (f.type === 'struct_expression') {
        for (const a of childrenOfType(f, 'struct_field_assignment')) {
          const n = field(a, 'name');
          const v = field(a, 'value');
          if (!n || !v) continue;
          if (this.text(n) === 'value') value = v;
          if (this.text(n) === 'gas') gas = v;
        }
        f = unwrap(field(f, 'type') ?? f);
        if (f.type === 'struct_expression') break;
        continue;
      }
      if (f.type === 'call_expression') {
        const inner = unwrap(field(f, 'function') ?? f);
        if (inner.type === 'member_expression') {
          const prop = this.text(field(inner, 'property')!);
          const obj = field(inner, 'object');
          if ((prop === 'value' || prop === 'gas') && obj) {
            const arg = callArgs(f)[0];
            if (prop === 'value') value = arg;
            else gas = arg;
            f = unwrap(obj);
            continue;
          }
        }
      }
      break;
    }
    const args = callArgs(call);
    if (f.type === 'member_expression') {
      const prop = field(f, 'property');
      const obj = field(f, 'object');
      const name = prop ? this.text(prop) : '';
      const target = obj ? unwrap(obj) : undefined;
      if (LOW_LEVEL.has(name)) return { node: call, kind: name as CallKind, target, name, value, gas, args };
      if (name === 'send' && args.length === 1)
        return { node: call, kind: 'send', target, name, value: args[0], args };
      if (name === 'transfer' && args.length === 1 && target && this.isAddressExpr(target, scope))
        return { node: call, kind: 'transfer', target, name, value: args[0], args };
      if (target && this.isContractExpr(target, scope))
        return { node: call, kind: 'external', target, name, value, gas, args };
      return { node: call, kind: 'other', target, name, value, gas, args };
    }
    if (f.type === 'identifier') {
      const name = this.text(f);
      if (BUILTIN_FUNCTIONS.has(name)) return { node: call, kind: 'builtin', name, args };
      return { node: call, kind: 'internal', name, args };
    }
    return { node: call, kind: 'other', name: this.text(f), args };
  }

  /** Whether an expression denotes an address (for `transfer` with one argument). */
  isAddressExpr(n: AstNode, scope: Scope): boolean {
    const t = this.exprType(n, scope);
    if (t === undefined) return true;
    return /^address\b|payable/.test(t);
  }

  /** Whether an expression denotes another contract (a receiver of external calls). */
  isContractExpr(n: AstNode, scope: Scope): boolean {
    const e = unwrap(n);
    if (e.type === 'identifier') {
      const name = this.text(e);
      if (name === 'this') return true;
      if (NOT_CONTRACT_OBJECTS.has(name)) return false;
      if (scope.contract.usingLibraries.has(name) || scope.libraries.has(name)) return false;
      if (scope.contractNames.has(name)) return false; // `Lib.f()` or `Base.f()`: static/internal
    }
    if (e.type === 'call_expression') {
      // `IERC20(token)` / `Bank(msg.sender)`: a cast to a contract type.
      const fn = unwrap(field(e, 'function') ?? e);
      if (fn.type === 'identifier') {
        const name = this.text(fn);
        if (/^[A-Z]/.test(name) && !scope.contract.structs.has(name) && !scope.libraries.has(name))
          return true;
      }
      return false;
    }
    const t = this.exprType(e, scope);
    if (t === undefined) return false;
    return this.isContractType(t, scope);
  }

  isContractType(t: string, scope: Scope): boolean {
    const base = t.replace(/\s*\[.*$/, '').trim();
    if (!/^[A-Z_a-z]\w*$/.test(base)) return false;
    if (/^(u?int\d*|address|bool|string|bytes\d*|byte|fixed|ufixed|var)$/.test(base)) return false;
    for (const c of scope.allContracts) if (c.structs.has(base) || c.enums.has(base)) return false;
    if (scope.valueTypes.has(base)) return false;
    if (scope.libraries.has(base)) return false;
    return true;
  }

  /** A best-effort static type of an expression (declared type of the variable it reads). */
  exprType(n: AstNode, scope: Scope): string | undefined {
    const e = unwrap(n);
    if (e.type === 'identifier') {
      const name = this.text(e);
      if (name === 'this') return scope.contract.name;
      return scope.lookup(name)?.typeText;
    }
    if (e.type === 'member_expression') {
      const obj = field(e, 'object');
      const prop = field(e, 'property');
      if (!obj || !prop) return undefined;
      const o = this.text(unwrap(obj));
      const p = this.text(prop);
      if (o === 'msg' && p === 'sender') return 'address';
      if (o === 'tx' && p === 'origin') return 'address';
      if (o === 'block' && p === 'coinbase') return 'address';
      return undefined;
    }
    if (e.type === 'array_access') {
      const base = field(e, 'base');
      if (!base) return undefined;
      const t = this.exprType(base, scope);
      if (!t) return undefined;
      const m = /=>\s*(.+)\)$/.exec(t);
      if (m) return m[1]!.trim();
      return t.replace(/\[[^\]]*\]$/, '').trim();
    }
    if (e.type === 'call_expression') {
      const fn = unwrap(field(e, 'function') ?? e);
      if (fn.type === 'identifier' || fn.type === 'payable_conversion_expression') return this.text(fn);
    }
    if (e.type === 'payable_conversion_expression') return 'address payable';
    if (e.type === 'type_cast_expression') return this.text(childOfType(e, 'primitive_type') ?? e);
    return undefined;
  }
}

/** Names visible inside a function: locals and parameters shadow state variables. */
export class Scope {
  readonly locals = new Map<string, VarInfo>();

  constructor(
    readonly file: SolFile,
    readonly contract: ContractInfo,
    readonly fn: FunctionInfo | undefined,
    /** State variables of the contract and of its bases found in the scanned file. */
    readonly stateVars: Map<string, VarInfo>,
    readonly contractNames: Set<string>,
    readonly libraries: Set<string>,
    readonly allContracts: ContractInfo[],
    /** File-level structs, enums and user-defined value types the file can name. */
    readonly valueTypes: ReadonlySet<string> = new Set(),
  ) {
    if (fn) {
      for (const p of fn.params) if (p.name) this.locals.set(p.name, p);
      for (const r of fn.returns) if (r.name) this.locals.set(r.name, r);
      if (fn.body) {
        for (const d of bodyNodes(fn, 'variable_declaration')) {
          const v = file.readVar(d, 'local');
          if (v) {
            const stmt = d.parent?.type === 'variable_declaration_tuple' ? d.parent.parent : d.parent;
            const value = stmt ? field(stmt, 'value') : undefined;
            if (value && !v.initializer) v.initializer = value;
            this.locals.set(v.name, v);
          }
        }
      }
    }
  }

  lookup(name: string): VarInfo | undefined {
    return this.locals.get(name) ?? this.stateVars.get(name);
  }

  isStateVar(name: string): boolean {
    return !this.locals.has(name) && this.stateVars.has(name);
  }

  isParam(name: string): boolean {
    const v = this.locals.get(name);
    return v !== undefined && v.kind === 'param';
  }
}

/** Names a file can refer to: its own contracts, those it imports, and unique names elsewhere. */
export interface VisibleNames {
  contractsByName: Map<string, ContractInfo>;
  libraries: Set<string>;
  contractNames: Set<string>;
  /** Every contract visible from the file (for struct and enum names). */
  contracts: ContractInfo[];
  /** File-level structs, enums and user-defined value types of the file and the files it imports. */
  valueTypes: Set<string>;
}

/** What a file's index asks of the project model (`ProjectIndex` in project.ts). */
export interface ProjectView {
  visible(file: SolFile): VisibleNames;
  linearize(c: ContractInfo): ContractInfo[];
}

/** Everything the rules need about the contracts of one file, in the project it belongs to. */
export class FileIndex {
  /** Contracts the file can name: its own, those it imports, and unique names of the project. */
  readonly contractsByName: Map<string, ContractInfo>;
  readonly libraries: Set<string>;
  readonly contractNames: Set<string>;
  private readonly visibleContracts: ContractInfo[];
  private readonly valueTypes: ReadonlySet<string>;
  constructor(
    readonly file: SolFile,
    readonly project: ProjectView,
  ) {
    const v = project.visible(file);
    this.contractsByName = v.contractsByName;
    this.libraries = v.libraries;
    this.contractNames = v.contractNames;
    this.visibleContracts = v.contracts;
    this.valueTypes = v.valueTypes;
  }

  private stateVarsMemo = new Map<ContractInfo, Map<string, VarInfo>>();
  private functionsMemo = new Map<ContractInfo, FunctionInfo[]>();

  /** The contract and its bases, most derived first: Solidity's C3 linearisation across the project. */
  lineage(c: ContractInfo): ContractInfo[] {
    return this.project.linearize(c);
  }

  stateVarsOf(c: ContractInfo): Map<string, VarInfo> {
    const cached = this.stateVarsMemo.get(c);
    if (cached) return cached;
    const vars = new Map<string, VarInfo>();
    for (const x of [...this.lineage(c)].reverse()) for (const [k, v] of x.stateVars) vars.set(k, v);
    this.stateVarsMemo.set(c, vars);
    return vars;
  }

  /** Functions callable on the contract (own and inherited, own first). */
  functionsOf(c: ContractInfo): FunctionInfo[] {
    const cached = this.functionsMemo.get(c);
    if (cached) return cached;
    const out: FunctionInfo[] = [];
    this.functionsMemo.set(c, out);
    const seen = new Set<string>();
    for (const x of this.lineage(c)) {
      for (const f of x.functions) {
        const key = `${f.kind}:${f.name}:${f.params.length}`;
        if (f.kind === 'constructor' && x !== c) continue;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(f);
      }
    }
    return out;
  }

  modifierOf(c: ContractInfo, name: string): FunctionInfo | undefined {
    for (const x of this.lineage(c)) {
      const m = x.modifiers.get(name);
      if (m) return m;
    }
    return undefined;
  }

  scope(c: ContractInfo, fn: FunctionInfo | undefined, stateVars?: Map<string, VarInfo>): Scope {
    return new Scope(
      this.file,
      c,
      fn,
      stateVars ?? this.stateVarsOf(c),
      this.contractNames,
      this.libraries,
      this.visibleContracts,
      this.valueTypes,
    );
  }
}

/** The identifier at the root of an lvalue or access chain: `a` in `a.b[c].d`. */
export function baseIdentifier(n: AstNode): AstNode | undefined {
  let e = unwrap(n);
  for (;;) {
    if (e.type === 'identifier') return e;
    if (e.type === 'member_expression') {
      const o = field(e, 'object');
      if (!o) return undefined;
      e = unwrap(o);
      continue;
    }
    if (e.type === 'array_access' || e.type === 'slice_access') {
      const b = field(e, 'base');
      if (!b) return undefined;
      e = unwrap(b);
      continue;
    }
    return undefined;
  }
}

/** Identifiers assigned by an lvalue (tuples yield several). */
export function lvalueTargets(n: AstNode): AstNode[] {
  const e = unwrap(n);
  if (e.type === 'tuple_expression') return e.children.flatMap((c) => lvalueTargets(c));
  return [e];
}

export { fields };
