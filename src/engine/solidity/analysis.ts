/**
 * Per-function facts over the CFG (calls, state reads and writes, conditions) and the
 * inter-procedural summaries rules share: which functions write state, make external calls that
 * can re-enter, or check the caller's identity — following internal calls and modifiers.
 */
import { Deadline } from '../deadline.ts';
import { ancestor, callArgs, descendants, field, unwrap, walk } from './ast.ts';
import { Cfg, type CfgNode } from './cfg.ts';
import {
  baseIdentifier,
  bodyNodes,
  type CallInfo,
  type ContractInfo,
  FileIndex,
  type FunctionInfo,
  type Scope,
  type SolFile,
  type VarInfo,
} from './model.ts';
import type { AstNode } from './parser.ts';
import { ProjectIndex } from './project.ts';

export interface CallSite {
  info: CallInfo;
  node: CfgNode;
}

export interface StateAccess {
  name: string;
  ast: AstNode;
  node: CfgNode;
}

export interface FunctionAnalysis {
  fn: FunctionInfo;
  contract: ContractInfo;
  scope: Scope;
  cfg: Cfg;
  calls: CallSite[];
  stateWrites: StateAccess[];
  stateReads: StateAccess[];
  /** Internal calls resolved to a function of the contract's lineage. */
  internalCalls: Array<{ callee: FunctionInfo; site: CallSite }>;
  /** Condition expressions (require/assert arguments, if/loop conditions) with their node. */
  conditions: Array<{ expr: AstNode; node: CfgNode; kind: 'require' | 'if' | 'loop' }>;
  /** Modifiers resolved to their definitions. */
  modifiers: FunctionInfo[];
}

/** Marks the entry-point map as built when the file has no entry point. */
const NO_FUNCTION = {} as FunctionInfo;

/** The caller's address as an expression reads (after `compact`: `_msgSender()` reads as `msg.sender`). */
const CALLER = /^(msg\.sender|tx\.origin)$/;

const BLOCK_RANDOM = /^(block\.(timestamp|number|difficulty|coinbase|gaslimit|prevrandao|blockhash)|now)$/;

/** What the rules of one file share: the index, lazily built analyses and summaries. */
export class FileAnalysis {
  readonly index: FileIndex;
  private analyses = new Map<FunctionInfo, FunctionAnalysis>();
  private writesMemo = new Map<FunctionInfo, boolean>();
  private reentrantMemo = new Map<FunctionInfo, CallSite | null>();
  private callerCheckMemo = new Map<FunctionInfo, boolean>();
  private reachingMemo = new Map<FunctionInfo, FunctionInfo[]>();
  private callersMemo = new Map<FunctionInfo, Array<{ caller: FunctionAnalysis; args: AstNode[] }>>();
  /** The file's analysis budget: the CFG fixpoints and every function analysed check it. */
  deadline: Deadline = Deadline.none;

  constructor(
    readonly file: SolFile,
    /** The scan's project model; without one the file is a project of its own. */
    project?: ProjectIndex,
  ) {
    this.index = new FileIndex(file, project ?? ProjectIndex.of(file));
  }

  text(n: AstNode): string {
    return this.file.text(n);
  }

  private compactMemo = new Map<AstNode, string>();

  /** The node's text without whitespace (`msg . sender` → `msg.sender`), computed once per node. */
  compact(n: AstNode): string {
    let t = this.compactMemo.get(n);
    if (t === undefined) {
      t = this.file.text(n);
      if (/\s/.test(t)) t = t.replace(/\s+/g, '');
      // `_msgSender()` (OpenZeppelin's Context, meta-transactions) names the caller as `msg.sender` does.
      if (t.includes('_msgSender()')) t = t.replace(/\b_msgSender\(\)/g, 'msg.sender');
      this.compactMemo.set(n, t);
    }
    return t;
  }

  /** Functions and modifiers declared in the file, each with the contract declaring it. */
  *ownFunctions(): Generator<FunctionInfo> {
    for (const c of this.file.contracts) {
      yield* c.functions;
    }
  }

  /** Throws `BudgetExceededError` once the file's analysis budget is spent (CFGs check through it). */
  checkDeadline(): void {
    this.deadline.check();
  }

  analyze(fn: FunctionInfo): FunctionAnalysis {
    this.checkDeadline();
    const cached = this.analyses.get(fn);
    if (cached) return cached;
    const contract = fn.contract;
    const scope = this.index.scope(contract, fn);
    const cfg = new Cfg(
      fn.body,
      (n) => this.file.text(n),
      (name) => scope.locals.has(name),
      fn.params.map((p) => p.name),
      this,
    );
    const a: FunctionAnalysis = {
      fn,
      contract,
      scope,
      cfg,
      calls: [],
      stateWrites: [],
      stateReads: [],
      internalCalls: [],
      conditions: [],
      modifiers: fn.modifiers
        .map((m) => this.index.modifierOf(contract, m.name))
        .filter((m): m is FunctionInfo => m !== undefined),
    };
    this.analyses.set(fn, a);
    for (const node of cfg.nodes) {
      if (!node.ast) continue;
      if (node.kind === 'cond')
        a.conditions.push({
          expr: node.ast,
          node,
          kind: node.loops.length && isLoopCond(node) ? 'loop' : 'if',
        });
      this.collect(a, node, node.ast);
    }
    return a;
  }

  private collect(a: FunctionAnalysis, node: CfgNode, ast: AstNode): void {
    const { scope } = a;
    const writeTargets = new Set<AstNode>();
    walk(ast, (x) => {
      switch (x.type) {
        case 'call_expression': {
          const info = this.file.classifyCall(x, scope);
          // The inner `a.call.value(x)` of `a.call.value(x)()` is part of the outer call.
          const parentCall = x.parent && x.field === 'function' && x.parent.type === 'call_expression';
          const isOption =
            parentCall && info.kind === 'other' && (info.name === 'value' || info.name === 'gas');
          if (!isOption) a.calls.push({ info, node });
          if (info.kind === 'internal') {
            const callee = this.resolveInternal(a.contract, info.name, info.args.length);
            if (callee) a.internalCalls.push({ callee, site: { info, node } });
          }
          if (info.kind === 'builtin' && (info.name === 'require' || info.name === 'assert')) {
            const arg = info.args[0];
            if (arg) a.conditions.push({ expr: arg, node, kind: 'require' });
          }
          if (info.kind === 'other' && info.target && (info.name === 'push' || info.name === 'pop')) {
            this.recordWrite(a, node, info.target, writeTargets);
          }
          break;
        }
        case 'assignment_expression':
        case 'augmented_assignment_expression': {
          const left = field(x, 'left');
          if (left) {
            const l = unwrap(left);
            const targets = l.type === 'tuple_expression' ? l.children.map(unwrap) : [l];
            for (const t of targets) this.recordWrite(a, node, t, writeTargets);
          }
          break;
        }
        case 'update_expression':
        case 'unary_expression': {
          if (x.type === 'unary_expression' && x.op !== 'delete') break;
          const arg = field(x, 'argument');
          if (arg) this.recordWrite(a, node, unwrap(arg), writeTargets);
          break;
        }
        case 'identifier': {
          if (x.field === 'property') break;
          const name = this.text(x);
          if (scope.isStateVar(name)) a.stateReads.push({ name, ast: x, node });
          break;
        }
      }
      return undefined;
    });
  }

  private recordWrite(a: FunctionAnalysis, node: CfgNode, target: AstNode, seen: Set<AstNode>): void {
    if (seen.has(target)) return;
    seen.add(target);
    const base = baseIdentifier(target);
    if (!base) return;
    const name = this.text(base);
    if (a.scope.isStateVar(name)) {
      a.stateWrites.push({ name, ast: target, node });
      return;
    }
    // Writes through a storage pointer (`Account storage acc = accounts[i]; acc.x = 1`).
    const local = a.scope.locals.get(name);
    if (local && base !== unwrap(target) && isStoragePointer(local, this.file, a.scope)) {
      const origin = local.initializer ? baseIdentifier(local.initializer) : undefined;
      a.stateWrites.push({ name: origin ? this.text(origin) : name, ast: target, node });
    }
  }

  resolveInternal(contract: ContractInfo, name: string, argc: number): FunctionInfo | undefined {
    const fns = this.index.functionsOf(contract).filter((f) => f.name === name && f.kind === 'function');
    return fns.find((f) => f.params.length === argc) ?? fns[0];
  }

  /** Whether the function (its modifiers and the internal functions it reaches) writes state. */
  writesState(fn: FunctionInfo): boolean {
    const m = this.writesMemo.get(fn);
    if (m !== undefined) return m;
    this.writesMemo.set(fn, false);
    const a = this.analyze(fn);
    const r =
      a.stateWrites.length > 0 ||
      a.calls.some(
        (c) => c.info.kind === 'builtin' && (c.info.name === 'selfdestruct' || c.info.name === 'suicide'),
      ) ||
      a.internalCalls.some((c) => this.writesState(c.callee)) ||
      a.modifiers.some((mod) => this.analyze(mod).stateWrites.length > 0);
    this.writesMemo.set(fn, r);
    return r;
  }

  /**
   * The first call through which the function (directly or via internal calls) hands control to
   * code that may call back: low-level calls forwarding gas, and calls on contracts whose address
   * the caller controls. `transfer`/`send` forward only 2,300 gas and are not counted. A `view` or
   * `pure` function makes none (0.5 and later): every call it makes is a STATICCALL, so no code it
   * reaches can change state.
   */
  reentrantCall(fn: FunctionInfo): CallSite | undefined {
    if ((fn.mutability === 'view' || fn.mutability === 'pure') && this.staticCallsForViews())
      return undefined;
    const m = this.reentrantMemo.get(fn);
    if (m !== undefined) return m ?? undefined;
    this.reentrantMemo.set(fn, null);
    const a = this.analyze(fn);
    let found: CallSite | undefined = a.calls.find((c) => this.isReentrantCall(a, c));
    if (!found) {
      for (const ic of a.internalCalls) {
        if (this.reentrantCall(ic.callee)) {
          found = ic.site;
          break;
        }
      }
    }
    this.reentrantMemo.set(fn, found ?? null);
    return found;
  }

  isReentrantCall(a: FunctionAnalysis, c: CallSite): boolean {
    const { info } = c;
    if (info.kind === 'call' || info.kind === 'callcode') {
      // A fixed small gas stipend (`.gas(2300)`) cannot re-enter meaningfully.
      if (info.gas && /^\d+$/.test(this.text(info.gas)) && Number(this.text(info.gas)) <= 2300) return false;
      return true;
    }
    if (info.kind === 'external' && info.target) {
      const t = unwrap(info.target);
      if (this.text(t) === 'this') return false;
      // A `view`/`pure` function is called with STATICCALL (0.5+): the callee cannot change state.
      if (this.staticCallsForViews() && this.callsReadOnly(a, c)) return false;
      return this.isCallerControlledAddress(a, t) || this.storedByAnyone(a, t);
    }
    return false;
  }

  /**
   * The declarations, in the project, of the function an external call names: the receiver's
   * contract type (`IERC20(token).f`, a variable declared `IERC20`) and its bases.
   */
  calleeDeclarations(a: FunctionAnalysis, c: CallSite): FunctionInfo[] {
    const contract = this.receiverContract(a, c);
    if (!contract) return [];
    return this.index
      .functionsOf(contract)
      .filter((f) => f.name === c.info.name && f.params.length === c.info.args.length);
  }

  /** The contract type of an external call's receiver, when the project declares it. */
  receiverContract(a: FunctionAnalysis, c: CallSite): ContractInfo | undefined {
    const target = c.info.target ? unwrap(c.info.target) : undefined;
    if (!target) return undefined;
    const typeName =
      target.type === 'call_expression'
        ? this.compact(unwrap(field(target, 'function') ?? target))
        : this.file.exprType(target, a.scope);
    return typeName ? this.index.contractsByName.get(typeName.trim()) : undefined;
  }

  /** Whether the compiler calls `view` functions with STATICCALL: 0.5 and later (no pragma: no legacy syntax). */
  private staticCallsForViews(): boolean {
    const f = this.file;
    if (f.pragma?.minVersion) return !f.versionBelow(0, 5);
    return !/\b(throw|suicide|sha3|var)\b|\bconstant\s+returns\b/.test(f.source);
  }

  /** A `view`/`pure` function, or the getter of a public state variable. */
  private callsReadOnly(a: FunctionAnalysis, c: CallSite): boolean {
    const decls = this.calleeDeclarations(a, c);
    if (decls.length > 0) return decls.every((f) => f.mutability === 'view' || f.mutability === 'pure');
    const contract = this.receiverContract(a, c);
    if (!contract) return false;
    return this.index.stateVarsOf(contract).get(c.info.name)?.visibility === 'public';
  }

  /**
   * `Bank(msg.sender)`, a parameter, or an element of a parameter: an address the caller chooses.
   * A parameter of an internal or private function is chosen by its callers: it counts when one
   * of the call sites in the file passes an address its own caller chooses.
   */
  isCallerControlledAddress(a: FunctionAnalysis, n: AstNode, seen: Set<FunctionInfo> = new Set()): boolean {
    const e = unwrap(n);
    const t = this.compact(e);
    if (t === 'msg.sender' || t === 'tx.origin') return true;
    if (e.type === 'call_expression') {
      const arg = callArgs(e)[0];
      return arg ? this.isCallerControlledAddress(a, arg, seen) : false;
    }
    const base = baseIdentifier(e);
    if (!base) return false;
    const v = a.scope.locals.get(this.text(base));
    if (v === undefined) return false;
    // An argument passed on through a local (`address t = token; settle(t)`).
    if (v.kind !== 'param')
      return (
        seen.size > 0 && v.initializer !== undefined && this.isCallerControlledAddress(a, v.initializer, seen)
      );
    const { fn } = a;
    // A constructor's arguments are the deployer's choice, not a caller's.
    if (fn.kind === 'constructor') return false;
    if (fn.kind !== 'function' || (fn.visibility !== 'internal' && fn.visibility !== 'private')) return true;
    const index = fn.params.indexOf(v);
    const sites = this.callersOf(fn);
    // A library's helper no function of its file calls (`Address.functionDelegateCall`) holds
    // whatever the code that uses the library passes: nothing here says a caller chooses it.
    if (sites.length === 0 && fn.contract.kind === 'library') return false;
    if (index < 0 || sites.length === 0 || seen.has(fn)) return true;
    seen.add(fn);
    return sites.some(({ caller, args }) => {
      const arg = args[index];
      return arg === undefined || this.isCallerControlledAddress(caller, arg, seen);
    });
  }

  /**
   * Internal call sites of `fn` in the file, with the caller's analysis and the arguments passed.
   * For a library's function, its calls as `Lib.f(a, b)` and, where `using Lib for …` applies,
   * as `a.f(b)` (the receiver is the first argument).
   */
  callersOf(fn: FunctionInfo): Array<{ caller: FunctionAnalysis; args: AstNode[] }> {
    const cached = this.callersMemo.get(fn);
    if (cached) return cached;
    const out: Array<{ caller: FunctionAnalysis; args: AstNode[] }> = [];
    const library = fn.contract.kind === 'library' ? fn.contract.name : undefined;
    // `using Lib for T;` in a contract, or at file level (0.8.13 and later).
    const usingAtFileLevel =
      library === undefined ? undefined : new RegExp(`\\busing\\s+${library}\\s+for\\b`);
    for (const g of this.ownFunctions()) {
      if (!g.body) continue;
      const ga = this.analyze(g);
      for (const ic of ga.internalCalls)
        if (ic.callee === fn) out.push({ caller: ga, args: ic.site.info.args });
      if (library === undefined) continue;
      const bound = g.contract.usingLibraries.has(library) || usingAtFileLevel?.test(g.node.src) === true;
      for (const { info } of ga.calls) {
        if (info.kind !== 'other' || info.name !== fn.name || !info.target) continue;
        if (info.args.length === fn.params.length && this.text(info.target) === library)
          out.push({ caller: ga, args: info.args });
        else if (bound && info.args.length + 1 === fn.params.length)
          out.push({ caller: ga, args: [info.target, ...info.args] });
      }
    }
    this.callersMemo.set(fn, out);
    return out;
  }

  /**
   * Whether the function restricts its caller: a modifier, a condition or an internal call that
   * compares `msg.sender`/`tx.origin` with stored state or looks it up in a role map.
   */
  checksCaller(fn: FunctionInfo): boolean {
    const m = this.callerCheckMemo.get(fn);
    if (m !== undefined) return m;
    this.callerCheckMemo.set(fn, false);
    const a = this.analyze(fn);
    let r = a.conditions.some((c) => this.isCallerCheck(c.expr, a) || this.callsCallerPredicate(c.expr, a));
    if (!r) {
      for (const mod of fn.modifiers) {
        const def = this.index.modifierOf(fn.contract, mod.name);
        if (def ? this.checksCaller(def) : /only|auth|owner|admin|role|govern|restricted/i.test(mod.name)) {
          r = true;
          break;
        }
      }
    }
    if (!r) r = this.assemblyChecksCaller(fn);
    // `_checkRole(role, _msgSender())`: a checker handed the caller as an argument.
    if (!r)
      r = a.internalCalls.some((c) => {
        const i = c.site.info.args.findIndex((x) => CALLER.test(this.compact(x)));
        return i >= 0 && c.callee.visibility !== 'public' && this.checksParamAsCaller(c.callee, i);
      });
    if (!r) r = a.internalCalls.some((c) => c.callee.visibility !== 'public' && this.checksCaller(c.callee));
    // `requireAdmin(upkeep)` with `if (msg.sender != upkeep.admin) revert …`, handed a record this
    // function read from storage rather than one its caller passed.
    if (!r)
      r = a.internalCalls.some(
        (c) =>
          c.callee.visibility !== 'public' &&
          c.site.info.args.some(
            (x, i) => !this.isParamDerived(x, a) && this.comparesCallerWithParam(c.callee, i),
          ),
      );
    if (!r)
      r = a.internalCalls.some(
        (c) => c.callee.kind === 'function' && this.checksCaller(c.callee) && !c.callee.params.length,
      );
    this.callerCheckMemo.set(fn, r);
    return r;
  }

  /** Whether `fn` compares the caller with its `index`-th parameter or a field of it (`upkeep.admin`). */
  private comparesCallerWithParam(fn: FunctionInfo, index: number): boolean {
    const p = fn.params[index]?.name;
    if (!p || !fn.body) return false;
    const a = this.analyze(fn);
    return a.conditions.some((c) =>
      descendants(c.expr, 'binary_expression').some((b) => {
        if (b.op !== '==' && b.op !== '!=') return false;
        const l = field(b, 'left');
        const r = field(b, 'right');
        if (!l || !r) return false;
        const [lt, rt] = [this.compact(unwrap(l)), this.compact(unwrap(r))];
        const other = CALLER.test(lt) ? r : CALLER.test(rt) ? l : undefined;
        const base = other ? baseIdentifier(unwrap(other)) : undefined;
        return base !== undefined && this.text(base) === p;
      }),
    );
  }

  /** Whether `fn` checks its `index`-th parameter as it would check the caller. */
  private checksParamAsCaller(fn: FunctionInfo, index: number): boolean {
    const p = fn.params[index]?.name;
    if (!p || !fn.body) return false;
    const a = this.analyze(fn);
    const names = new Set([p]);
    return a.conditions.some((c) => this.isCallerCheck(c.expr, a, names));
  }

  /**
   * An inline-assembly caller check (Solady's `_checkOwner`): a Yul `if` whose condition reads
   * `caller()` and whose body reverts.
   */
  private assemblyChecksCaller(fn: FunctionInfo): boolean {
    if (!fn.body) return false;
    return descendants(fn.body, 'yul_if_statement').some((y) => {
      const [cond, block] = y.children;
      if (!cond || !block) return false;
      return /\bcaller\(\)/.test(this.compact(cond)) && /\brevert\(/.test(this.compact(block));
    });
  }

  /**
   * Whether the function is restricted to a role: one of its modifiers checks the caller
   * (`onlyOwner`, `auth`, `onlyRole(…)`, wherever declared). A check written in the body against
   * a record's owner (`msg.sender == orders[id].maker`) restricts the caller to their own
   * records, which anyone can create: that is no role.
   */
  restrictedToRole(fn: FunctionInfo): boolean {
    let r = this.restrictedMemo.get(fn);
    if (r === undefined) {
      // Provisionally false: a role map whose writers lead back here grants nothing by itself.
      this.restrictedMemo.set(fn, false);
      r = this.restrictedByCheck(fn, true);
      this.restrictedMemo.set(fn, r);
    }
    return r;
  }
  private restrictedMemo = new Map<FunctionInfo, boolean>();

  /** {@link restrictedToRole}, with or without role maps (their writers are judged without). */
  private restrictedByCheck(fn: FunctionInfo, roleMaps: boolean): boolean {
    const byModifier = fn.modifiers.some((mod) => {
      const def = this.index.modifierOf(fn.contract, mod.name);
      return def ? this.checksCaller(def) : /only|auth|owner|admin|role|govern|restricted/i.test(mod.name);
    });
    if (byModifier || !fn.body) return byModifier;
    const a = this.analyze(fn);
    // In the body: the caller compared with one account (`msg.sender == owner`, `== address(this)`,
    // `== entryPoint()`), or a checker called with no argument or with the caller.
    if (a.conditions.some((c) => this.comparesCallerWithAccount(c.expr, c.kind, a))) return true;
    if (roleMaps && a.conditions.some((c) => this.looksUpCallerInRoleMap(c.expr, c.kind, a))) return true;
    return a.internalCalls.some(
      (c) =>
        c.callee.visibility !== 'public' &&
        (c.site.info.args.length === 0 || c.site.info.args.some((x) => CALLER.test(this.compact(x)))) &&
        this.checksCaller(c.callee),
    );
  }

  /**
   * `require(isKeeper[msg.sender])`, `if (!s_transmitters[msg.sender].active) revert …`: the caller
   * looked up in a state mapping that only functions checking their caller (or constructors)
   * write. A mapping anyone can enter (`balances[msg.sender]`, written by `deposit`) is no role.
   */
  private looksUpCallerInRoleMap(
    expr: AstNode,
    kind: 'require' | 'if' | 'loop',
    a: FunctionAnalysis,
  ): boolean {
    return this.membershipsRequired(expr, kind, a).some((name) => {
      const writers = this.roleMapWriters(a.contract, name).filter((w) => w.fn !== a.fn);
      // Someone is granted the role (a constructor or another function writes it), and every
      // function that can grant it is restricted to a role itself, or to members already.
      return writers.length > 0 && writers.every((w) => w.guarded);
    });
  }

  /**
   * The state mappings in which a condition requires the caller to be a member: the entry (or a
   * field of it) is the flag the condition tests, not a number it compares (`balances[msg.sender]
   * > 0`); being a member passes the check (a lookup `require` asserts, one an `if` negates to
   * revert); and nothing else lets a caller through: beside it, a `require` may only add
   * conditions (`&&`), an `if` that reverts only more reasons (`||`).
   */
  private membershipsRequired(expr: AstNode, kind: 'require' | 'if' | 'loop', a: FunctionAnalysis): string[] {
    if (kind === 'loop') return [];
    const out: string[] = [];
    for (const acc of descendants(expr, 'array_access')) {
      const index = field(acc, 'index');
      const map = baseIdentifier(acc);
      if (!index || !map || !CALLER.test(this.compact(unwrap(index)))) continue;
      const name = this.text(map);
      if (!a.scope.isStateVar(name)) continue;
      let negated = false;
      let flag = true;
      for (let p = acc.parent; p && p !== expr.parent; p = p.parent) {
        if (p.type === 'unary_expression' && p.op === '!') negated = !negated;
        else if (p.type === 'binary_expression' && p.op === (kind === 'if' ? '||' : '&&')) continue;
        else if (p.type !== 'member_expression' && p.type !== 'parenthesized_expression') flag = false;
      }
      if (flag && negated === (kind === 'if')) out.push(name);
    }
    return out;
  }

  /** The functions that write `name` in the contract, each with whether every way into it is restricted to a role. */
  private roleMapWriters(
    contract: ContractInfo,
    name: string,
  ): Array<{ fn: FunctionInfo; guarded: boolean }> {
    let byName = this.roleWritersMemo.get(contract);
    if (!byName) {
      byName = new Map();
      this.roleWritersMemo.set(contract, byName);
    }
    let writers = byName.get(name);
    if (!writers) {
      writers = this.writersOf(contract, name).map((f) => ({
        fn: f,
        guarded: f.kind === 'constructor' || this.guardedIn(contract, f, name, new Set()),
      }));
      byName.set(name, writers);
    }
    return writers;
  }
  private roleWritersMemo = new Map<
    ContractInfo,
    Map<string, Array<{ fn: FunctionInfo; guarded: boolean }>>
  >();

  /**
   * Whether every way into `fn` is restricted to a role (by a modifier, or the caller compared with
   * a stored account; a modifier runs on an internal call too) or to members of `map` already, or it is no entry point and each
   * function of the contract that calls it is so guarded. A check that only keeps a caller from
   * signing up twice (`require(!registered[msg.sender])`) restricts nothing.
   */
  private guardedIn(contract: ContractInfo, fn: FunctionInfo, map: string, seen: Set<FunctionInfo>): boolean {
    if (this.restrictedByCheck(fn, false)) return true;
    // Only members get here (`transmit` books its own caller's balance): nobody joins through it.
    const a = this.analyze(fn);
    if (a.conditions.some((c) => this.membershipsRequired(c.expr, c.kind, a).includes(map))) return true;
    if (this.isEntryPoint(fn) || seen.has(fn)) return !this.isEntryPoint(fn);
    seen.add(fn);
    return (this.internalCallersIn(contract).get(fn) ?? []).every((g) =>
      this.guardedIn(contract, g, map, seen),
    );
  }

  /** Per function of the contract, the functions of the contract that call it internally. */
  private internalCallersIn(contract: ContractInfo): Map<FunctionInfo, FunctionInfo[]> {
    let callers = this.internalCallersMemo.get(contract);
    if (!callers) {
      callers = new Map();
      for (const g of this.index.functionsOf(contract))
        for (const c of this.analyze(g).internalCalls) {
          if (c.callee === g) continue;
          const list = callers.get(c.callee);
          if (!list) callers.set(c.callee, [g]);
          else if (!list.includes(g)) list.push(g);
        }
      this.internalCallersMemo.set(contract, callers);
    }
    return callers;
  }
  private internalCallersMemo = new Map<ContractInfo, Map<FunctionInfo, FunctionInfo[]>>();

  /** `msg.sender == owner`: the caller against a stored account, `address(this)` or a getter's answer. */
  private comparesCallerWithAccount(
    expr: AstNode,
    kind: 'require' | 'if' | 'loop',
    a: FunctionAnalysis,
  ): boolean {
    return descendants(expr, 'binary_expression').some((b) => {
      // `require(msg.sender == owner)`, or `if (msg.sender != owner) revert …`.
      if (!((b.op === '==' && kind === 'require') || (b.op === '!=' && kind === 'if'))) return false;
      const l = field(b, 'left');
      const r = field(b, 'right');
      if (!l || !r) return false;
      const [lt, rt] = [this.compact(unwrap(l)), this.compact(unwrap(r))];
      const caller = CALLER;
      const other = caller.test(lt) ? r : caller.test(rt) ? l : undefined;
      if (!other) return false;
      const o = this.compact(unwrap(other));
      if (caller.test(o)) return false;
      if (/^(address\(this\)|this)$/.test(o)) return true;
      if (/^\w+\(\)$/.test(o)) return true;
      // A stored account that only functions checking their caller (or constructors) set, besides
      // this one: `highestBidder`, which any bidder becomes, is no role.
      if (!/^\w+$/.test(o) || !a.scope.isStateVar(o)) return false;
      return this.index
        .functionsOf(a.contract)
        .filter(
          (f) =>
            f !== a.fn && f.kind !== 'constructor' && this.analyze(f).stateWrites.some((w) => w.name === o),
        )
        .every((f) => !this.isEntryPoint(f) || this.checksCaller(f));
    });
  }

  /**
   * Whether a condition calls an internal predicate that compares the caller's identity
   * (`require(isOwner())` with `function isOwner() view returns (bool) { return msg.sender == _owner; }`).
   */
  private callsCallerPredicate(expr: AstNode, a: FunctionAnalysis): boolean {
    return descendants(expr, 'call_expression').some((call) => {
      const f = field(call, 'function');
      const callee =
        f && unwrap(f).type === 'identifier'
          ? this.resolveInternal(a.contract, this.text(unwrap(f)), callArgs(call).length)
          : undefined;
      return callee !== undefined && callee !== a.fn && this.returnsCallerCheck(callee);
    });
  }

  private returnsCallerCheck(fn: FunctionInfo): boolean {
    if (!fn.body || !fn.returns.every((r) => /^bool$/.test(r.typeText)) || fn.returns.length !== 1)
      return false;
    const a = this.analyze(fn);
    return bodyNodes(fn, 'return_statement').some((r) => this.isCallerCheck(r, a));
  }

  /** A condition that compares the caller's identity (not a per-caller balance). */
  isCallerCheck(expr: AstNode, a: FunctionAnalysis, callerNames?: ReadonlySet<string>): boolean {
    const callerLocals = this.callerDerivedLocals(a);
    for (const n of callerNames ?? []) callerLocals.add(n);
    // The caller under its own name or an alias (not a lookup keyed by it, whose zero means
    // "not a member": `if (ownerIndex[msg.sender] == 0) return;` does check the caller).
    const aliases = new Set(callerNames ?? []);
    for (const d of a.cfg.defs) if (d.rhs && CALLER.test(this.compact(d.rhs))) aliases.add(d.name);
    let hit = false;
    walk(expr, (x) => {
      if (hit) return false;
      const t = this.compact(x);
      const isCaller =
        (x.type === 'member_expression' || x.type === 'call_expression') &&
        (t === 'msg.sender' || t === 'tx.origin');
      const isDerived = x.type === 'identifier' && x.field !== 'property' && callerLocals.has(t);
      if (!isCaller && !isDerived) return undefined;
      const direct = isCaller || aliases.has(t);
      // Walk up to the condition root: a relational/arithmetic operator makes it a balance check.
      let p: AstNode | null = x.parent;
      let identity = false;
      let numeric = false;
      let child: AstNode = x;
      while (p && child !== expr) {
        if (p.type === 'binary_expression') {
          if (p.op === '==' || p.op === '!=') {
            const other = field(p, 'left') === child ? field(p, 'right') : field(p, 'left');
            // The caller `!= address(0)` says nothing about who the caller is.
            const literal = other !== undefined && isLiteralValue(this.compact(unwrap(other)));
            if (other && !this.isParamDerived(other, a) && !(direct && literal)) identity = true;
          } else if (p.op && /^(<|>|<=|>=|\+|-|\*|\/|%)$/.test(p.op)) numeric = true;
        }
        if (p.type === 'array_access' && child.field === 'index') {
          if (this.isOwnCounter(p, a)) numeric = true;
          else identity = true;
        }
        if (p.type === 'call_expression' && child.type === 'call_argument') identity = true;
        child = p;
        p = p.parent;
      }
      if (identity && !numeric) hit = true;
      return undefined;
    });
    return hit;
  }

  /**
   * `invested[msg.sender]` in a function that also updates `invested`: a number the caller keeps
   * for themselves (a deposit, a counter), not a role they must hold.
   */
  private isOwnCounter(access: AstNode, a: FunctionAnalysis): boolean {
    const base = baseIdentifier(access);
    if (!base) return false;
    const name = this.text(base);
    const v = a.scope.isStateVar(name) ? a.scope.stateVars.get(name) : undefined;
    if (!v || !/=>\s*u?int\d*\s*\)$/.test(v.typeText)) return false;
    return a.stateWrites.some((w) => w.name === name);
  }

  /**
   * Locals holding a lookup keyed by the caller (`uint idx = ownerIndex[msg.sender]`): comparing
   * them (`if (idx == 0) return;`) checks the caller's identity.
   */
  private callerDerivedLocals(a: FunctionAnalysis): Set<string> {
    const out = new Set<string>();
    for (const d of a.cfg.defs) {
      if (!d.rhs) continue;
      // `address sender = msg.sender;`: the caller under another name.
      if (CALLER.test(this.compact(d.rhs))) {
        out.add(d.name);
        continue;
      }
      const hit = descendants(d.rhs, 'array_access').some((acc) => {
        const idx = field(acc, 'index');
        return idx !== undefined && /(msg\.sender|tx\.origin)\)?$/.test(this.compact(idx));
      });
      if (hit) out.add(d.name);
    }
    return out;
  }

  isParamDerived(n: AstNode, a: FunctionAnalysis): boolean {
    const base = baseIdentifier(n);
    if (!base) return false;
    const v = a.scope.locals.get(this.text(base));
    return v !== undefined && v.kind === 'param';
  }

  /** Identifiers of local/param variables, `msg.value`, `msg.data` under `n`. */
  isUserInput(n: AstNode, a: FunctionAnalysis): boolean {
    let hit = false;
    walk(n, (x) => {
      if (hit) return false;
      if (x.type === 'identifier' && x.field !== 'property' && a.scope.isParam(this.text(x))) hit = true;
      if (x.type === 'member_expression') {
        const t = this.compact(x);
        if (t === 'msg.value' || t === 'msg.data') hit = true;
      }
      return undefined;
    });
    return hit;
  }

  /** Whether an expression reads a block value usable as entropy or time. */
  readsBlockValue(n: AstNode, pattern: RegExp = BLOCK_RANDOM): boolean {
    let hit = false;
    walk(n, (x) => {
      if (hit) return false;
      if (x.type === 'member_expression' || (x.type === 'identifier' && x.field !== 'property')) {
        if (pattern.test(this.compact(x))) hit = true;
      }
      if (x.type === 'call_expression') {
        const f = field(x, 'function');
        const name = f ? this.compact(unwrap(f)) : '';
        if (name === 'blockhash' || name === 'block.blockhash')
          hit = pattern === BLOCK_RANDOM || pattern.test(name);
      }
      return undefined;
    });
    return hit;
  }

  /** Whether the function is an entry point: callable from outside (public/external, fallback, receive). */
  isEntryPoint(fn: FunctionInfo): boolean {
    if (fn.kind === 'constructor' || fn.kind === 'modifier') return false;
    if (fn.contract.kind !== 'contract') return false;
    return fn.visibility === 'public' || fn.visibility === 'external';
  }

  /** Public functions that reach `fn` through internal calls (including itself when public). */
  entryPointsReaching(fn: FunctionInfo): FunctionInfo[] {
    if (!this.reachingMemo.size) {
      // One walk of the call graph from every entry point of the file, recorded per callee.
      for (const c of this.file.contracts) {
        for (const entry of c.functions) {
          if (!this.isEntryPoint(entry)) continue;
          const seen = new Set<FunctionInfo>();
          const stack = [entry];
          while (stack.length) {
            const f = stack.pop()!;
            if (seen.has(f)) continue;
            seen.add(f);
            const list = this.reachingMemo.get(f);
            if (list) list.push(entry);
            else this.reachingMemo.set(f, [entry]);
            for (const ic of this.analyze(f).internalCalls) stack.push(ic.callee);
          }
        }
      }
      this.reachingMemo.set(NO_FUNCTION, []);
    }
    return this.reachingMemo.get(fn) ?? [];
  }

  /** The statement enclosing an expression (for locations and snippets). */
  statementOf(n: AstNode): AstNode {
    const s = ancestor(
      n,
      'expression_statement',
      'variable_declaration_statement',
      'return_statement',
      'emit_statement',
      'if_statement',
      'for_statement',
      'while_statement',
      'do_while_statement',
      'state_variable_declaration',
    );
    if (!s) return n;
    if (
      s.type === 'if_statement' ||
      s.type === 'for_statement' ||
      s.type === 'while_statement' ||
      s.type === 'do_while_statement'
    ) {
      const cond = field(s, 'condition');
      if (cond && cond.start <= n.start && n.end <= cond.end) return cond;
      return n;
    }
    return s;
  }

  stateVar(contract: ContractInfo, name: string): VarInfo | undefined {
    return this.index.stateVarsOf(contract).get(name);
  }

  /** All analyses of the contract's own functions (constructors, modifiers excluded). */
  functionsOfContract(c: ContractInfo): FunctionAnalysis[] {
    return c.functions.map((f) => this.analyze(f));
  }

  /**
   * Whether the call's receiver is a state variable (`IHook(hook)`, `hook`) that a public function
   * without a caller check sets: any caller chose it in an earlier transaction.
   */
  private storedByAnyone(a: FunctionAnalysis, target: AstNode): boolean {
    let t = unwrap(target);
    // `IHook(hook)`: the conversion names the same address.
    if (t.type === 'call_expression' && callArgs(t).length === 1) t = unwrap(callArgs(t)[0]!);
    if (t.type !== 'identifier') return false;
    const name = this.text(t);
    return a.scope.isStateVar(name) && !this.writtenOnlyByPrivileged(a.contract, name);
  }

  /** Whether only constructors and functions that check their caller (or are reached only through such) write the state variable. */
  writtenOnlyByPrivileged(c: ContractInfo, name: string): boolean {
    return this.writersOf(c, name).every(
      (w) =>
        w.kind === 'constructor' ||
        this.checksCaller(w) ||
        (!this.isEntryPoint(w) && this.entryPointsReaching(w).every((e) => this.checksCaller(e))),
    );
  }

  /** Every function (own or inherited) of `c` that writes the state variable `name`. */
  writersOf(c: ContractInfo, name: string): FunctionInfo[] {
    return this.index.functionsOf(c).filter((f) => this.analyze(f).stateWrites.some((w) => w.name === name));
  }

  /** Calls of `require`, `assert` and their first argument anywhere in a subtree. */
  requireArgs(n: AstNode): AstNode[] {
    return descendants(n, 'call_expression')
      .filter((c) => {
        const f = field(c, 'function');
        const name = f ? this.text(unwrap(f)) : '';
        return name === 'require' || name === 'assert';
      })
      .map((c) => callArgs(c)[0])
      .filter((x): x is AstNode => x !== undefined);
  }
}

/** A literal (`0`, `address(0)`, `true`, a hex string), which names no account. */
function isLiteralValue(text: string): boolean {
  return /^(address\((0|0x0+)\)|0x[0-9a-fA-F]*|\d+|true|false)$/.test(text);
}

function isLoopCond(node: CfgNode): boolean {
  const loop = node.loops[node.loops.length - 1];
  if (!loop || !node.ast) return false;
  const cond = field(loop, 'condition');
  return cond === node.ast;
}

/** A local that refers to storage: explicit `storage`, or a struct/array/mapping local before 0.5. */
function isStoragePointer(v: VarInfo, file: SolFile, scope: Scope): boolean {
  if (v.kind !== 'local') return false;
  if (v.location === 'storage') return true;
  if (v.location) return false;
  if (v.typeText === 'var') {
    // `var acc = accounts[msg.sender];` takes the type of a storage element: a pointer when
    // that element is a struct, array or mapping.
    const base = v.initializer ? baseIdentifier(v.initializer) : undefined;
    const sv = base ? scope.stateVars.get(file.text(base)) : undefined;
    if (!sv || !v.initializer) return false;
    const elem = /=>\s*(.+)\)$/.exec(sv.typeText)?.[1] ?? sv.typeText.replace(/\[[^\]]*\]$/, '');
    return (
      unwrap(v.initializer).type !== 'identifier' &&
      !/^(u?int\d*|bool|address|bytes\d+|string)\b/.test(elem.trim())
    );
  }
  if (!file.versionBelow(0, 5)) return false;
  return v.isArray || v.isMapping || /^[A-Z]/.test(v.typeText);
}

/**
 * Whether a hash result is used as a number (cast to an integer, reduced modulo, compared) —
 * directly or through the local it is stored in — rather than as an identifier or a signed digest.
 */
export function usedAsNumber(fa: FileAnalysis, a: FunctionAnalysis, hash: AstNode): boolean {
  // How a value is used where it appears: as a number, as an identifier (a mapping key, an
  // argument, an event field), handed back to the caller, or none of these.
  const use = (n: AstNode): 'number' | 'id' | 'returned' | undefined => {
    const p = n.parent;
    if (!p) return undefined;
    if (
      p.type === 'binary_expression' &&
      p.op &&
      ['%', '==', '!=', '<', '>', '&', '/', '*', '+', '-', '>>', '<<'].includes(p.op)
    )
      return 'number';
    if (p.type === 'call_argument' && p.parent?.type === 'call_expression') {
      const fnName = normText(fa, field(p.parent, 'function') ?? p.parent);
      if (/^u?int\d*$/.test(fnName)) return 'number';
      return use(p) ?? 'id';
    }
    if (p.type === 'type_cast_expression') {
      // `uint256(hash)` reads the 32 bytes as one number: how that number is used decides. A
      // narrower cast (`uint8(hash)`) already draws bits from it.
      const type = p.children[0];
      return type !== undefined && /^u?int(256)?$/.test(fa.text(type)) ? use(p) : 'number';
    }
    if (p.type === 'array_access' && n.field === 'index') return 'id';
    if (p.type === 'return_statement') return 'returned';
    if (p.type === 'parenthesized_expression' || p.type === 'call_argument') return use(p);
    return undefined;
  };
  const uses: Array<'number' | 'id' | 'returned' | undefined> = [use(hash)];
  const node = a.cfg.nodeOf(hash);
  if (node) {
    for (const d of node.defs) {
      const def = a.cfg.defs.find((x) => x.node === node.id && x.name === d.name);
      if (!def) continue;
      // A named return value is handed back to the caller.
      if (a.fn.returns.some((r) => r.name === d.name)) uses.push('returned');
      for (const u of a.cfg.usesOf(def)) {
        if (!u.ast) continue;
        for (const i of descendants(u.ast, 'identifier')) if (fa.text(i) === d.name) uses.push(use(i));
      }
    }
  }
  if (uses.includes('number')) return true;
  // A helper that hands the value back as an integer without using it as an identifier
  // (`random()`): its callers draw from it. A `bytes32` handed back is a block hash for what it is.
  const integer = a.fn.returns.length > 0 && a.fn.returns.every((r) => /^u?int\d*$/.test(r.typeText.trim()));
  return integer && uses.includes('returned') && !uses.includes('id');
}

function normText(fa: FileAnalysis, n: AstNode): string {
  return fa.compact(unwrap(n));
}
