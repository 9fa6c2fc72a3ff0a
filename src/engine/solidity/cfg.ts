/**
 * A per-function control-flow graph over statements, with reaching definitions of local
 * variables and the def-use chains derived from them. Conditions of `if`/loops are nodes of
 * their own, so that "reachable after" and "guarded by" questions follow real control flow.
 */
import { field, fields, isTypeConversion, unwrap, walk } from './ast.ts';
import type { AstNode } from './parser.ts';

export type CfgNodeKind = 'entry' | 'exit' | 'stmt' | 'cond' | 'placeholder';

export interface CfgNode {
  id: number;
  kind: CfgNodeKind;
  /** The statement (for `stmt`) or the condition expression (for `cond`). */
  ast?: AstNode;
  succ: number[];
  pred: number[];
  /** Loop statements enclosing the node, innermost last. */
  loops: AstNode[];
  /** Local definitions made at this node: variable name → right-hand side (undefined: default value). */
  defs: Array<{ name: string; rhs: AstNode | undefined; target: AstNode }>;
  /** Local variable names read at this node. */
  uses: Set<string>;
}

export interface Def {
  node: number;
  name: string;
  rhs: AstNode | undefined;
}

const NO_BUDGET = { checkDeadline(): void {} };

export class Cfg {
  readonly nodes: CfgNode[] = [];
  readonly entry: number;
  readonly exit: number;
  private reachCache = new Map<number, Set<number>>();
  /** Reaching definitions at the entry of each node: `words` words of bits per node (bit i: `defs[i]`). */
  private reachingIn = new Uint32Array(0);
  private words = 0;
  /** The definitions of each name, as a mask over `defs` (`words` words). */
  private defsByName = new Map<string, Uint32Array>();
  readonly defs: Def[] = [];

  constructor(
    body: AstNode | undefined,
    private readonly text: (n: AstNode) => string,
    private readonly isLocal: (name: string) => boolean,
    /** Parameters are defined at the entry. */
    params: string[],
    /** Checked in the fixpoint iterations and per query (the file's budget, see deadline.ts). */
    private readonly budget: { checkDeadline(): void } = NO_BUDGET,
  ) {
    this.entry = this.add('entry');
    this.exit = this.add('exit');
    const entryNode = this.nodes[this.entry]!;
    for (const p of params.filter(Boolean))
      entryNode.defs.push({ name: p, rhs: undefined, target: body ?? ({} as AstNode) });
    const ctx: BuildContext = { loops: [], breaks: [], continues: [] };
    const ends = body ? this.buildStatement(body, [this.entry], ctx) : [this.entry];
    for (const e of ends) this.link(e, this.exit);
    this.computeReachingDefinitions();
  }

  /** Node ids reachable from `from` through at least one edge. */
  reachableFrom(from: number): Set<number> {
    const cached = this.reachCache.get(from);
    if (cached) return cached;
    this.budget.checkDeadline();
    const seen = new Set<number>();
    const stack = [...this.nodes[from]!.succ];
    while (stack.length) {
      const n = stack.pop()!;
      if (seen.has(n)) continue;
      seen.add(n);
      stack.push(...this.nodes[n]!.succ);
    }
    this.reachCache.set(from, seen);
    return seen;
  }

  /**
   * Whether control can leave the function normally (a `return` or the end of the body) after
   * node `from`, rather than only through `revert`/`throw`: what a node does is undone otherwise.
   */
  returnsNormallyAfter(from: number): boolean {
    const reach = this.reachableFrom(from);
    return this.nodes[this.exit]!.pred.some((p) => (p === from || reach.has(p)) && !this.aborts(p));
  }

  private aborts(id: number): boolean {
    const ast = this.nodes[id]!.ast;
    if (!ast) return false;
    if (ast.type === 'revert_statement') return true;
    if (ast.type !== 'expression_statement') return false;
    const e = ast.children[0] ? unwrap(ast.children[0]) : undefined;
    if (!e) return false;
    if (e.type === 'identifier') return this.text(e) === 'throw';
    if (e.type !== 'call_expression') return false;
    const f = field(e, 'function');
    return f !== undefined && this.text(unwrap(f)) === 'revert';
  }

  /** The node whose AST contains `ast` (the innermost statement or condition). */
  nodeOf(ast: AstNode): CfgNode | undefined {
    if (!this.byAst) {
      this.byAst = new Map();
      for (const n of this.nodes) if (n.ast) this.byAst.set(n.ast, n);
    }
    for (let p: AstNode | null = ast; p; p = p.parent) {
      const n = this.byAst.get(p);
      if (n) return n;
    }
    return undefined;
  }
  private byAst: Map<AstNode, CfgNode> | undefined;

  /** Definitions of `name` that reach node `id`. */
  reachingDefs(id: number, name: string): Def[] {
    const out: Def[] = [];
    for (const d of this.reachingAt(id)) {
      const def = this.defs[d]!;
      if (def.name === name) out.push(def);
    }
    return out;
  }

  /** Nodes that use the definition (def-use chain). */
  usesOf(def: Def): CfgNode[] {
    this.budget.checkDeadline();
    const idx = this.defs.indexOf(def);
    if (idx < 0) return [];
    return this.nodes.filter((n) => n.uses.has(def.name) && this.reaches(n.id, idx));
  }

  /**
   * Local variables whose value may derive from a source, following def-use chains to a fixed
   * point. Returns the tainted definitions; `isTaintedExpr` answers for any expression at a node.
   */
  taint(
    isSource: (expr: AstNode) => boolean,
    options: {
      valuesOnly?: boolean;
      /** The result of a function call does not derive from its arguments (type conversions do). */
      notThroughCalls?: boolean;
    } = {},
  ): Taint {
    const tainted = new Set<number>();
    const exprTainted = (expr: AstNode, at: number): boolean => {
      if (isSource(expr)) return true;
      let hit = false;
      walk(expr, (x) => {
        // With `valuesOnly`, the keys of `m[k]` do not make its value derive from `k`.
        if (hit || (options.valuesOnly && x.field === 'index')) return false;
        if (options.notThroughCalls && x.type === 'call_expression' && !isTypeConversion(x, this.text))
          return false;
        if (x.type === 'identifier' && x.field !== 'property') {
          const name = this.text(x);
          if (this.isLocal(name) && this.reachingDefIdx(at, name).some((d) => tainted.has(d))) hit = true;
        }
        return undefined;
      });
      return hit;
    };
    // A worklist: a definition is looked at again only when a definition of a name its value
    // reads became tainted (iterating every definition until nothing changes took a round per
    // link of a chain: cubic in a loop that passes a value through many locals).
    const readers = new Map<string, number[]>();
    for (const [i, d] of this.defs.entries()) {
      if (!d.rhs) continue;
      walk(d.rhs, (x) => {
        if (x.type === 'identifier' && x.field !== 'property') {
          const name = this.text(x);
          const list = readers.get(name);
          if (!list) readers.set(name, [i]);
          else if (list[list.length - 1] !== i) list.push(i);
        }
        return undefined;
      });
    }
    const work: number[] = [];
    for (let i = this.defs.length - 1; i >= 0; i--) work.push(i);
    while (work.length) {
      this.budget.checkDeadline();
      const i = work.pop()!;
      const d = this.defs[i]!;
      if (tainted.has(i) || !d.rhs || !exprTainted(d.rhs, d.node)) continue;
      tainted.add(i);
      for (const r of readers.get(d.name) ?? []) if (!tainted.has(r)) work.push(r);
    }
    return { tainted, isTaintedExpr: exprTainted };
  }

  private reachingDefIdx(id: number, name: string): number[] {
    const mask = this.defsByName.get(name);
    return mask ? [...this.reachingAt(id, mask)] : [];
  }

  private add(kind: CfgNodeKind, ast?: AstNode, loops: AstNode[] = []): number {
    const id = this.nodes.length;
    const node: CfgNode = { id, kind, succ: [], pred: [], loops: [...loops], defs: [], uses: new Set() };
    if (ast) node.ast = ast;
    this.nodes.push(node);
    if (ast && (kind === 'stmt' || kind === 'cond')) this.collectDefsUses(node, ast);
    return id;
  }

  private link(from: number, to: number): void {
    const f = this.nodes[from]!;
    if (!f.succ.includes(to)) {
      f.succ.push(to);
      this.nodes[to]!.pred.push(from);
    }
  }

  private linkAll(froms: number[], to: number): void {
    for (const f of froms) this.link(f, to);
  }

  private simple(ast: AstNode, preds: number[], ctx: BuildContext, kind: CfgNodeKind = 'stmt'): number {
    const id = this.add(kind, ast, ctx.loops);
    this.linkAll(preds, id);
    return id;
  }

  /** Builds the statement; returns the nodes that fall through to what follows. */
  private buildStatement(s: AstNode, preds: number[], ctx: BuildContext): number[] {
    switch (s.type) {
      case 'function_body':
      case 'block_statement': {
        let cur = preds;
        for (const c of s.children) {
          if (c.type === 'unchecked') continue;
          cur = this.buildStatement(c, cur, ctx);
        }
        return cur;
      }
      case 'if_statement': {
        const cond = field(s, 'condition');
        const c = cond ? this.simple(cond, preds, ctx, 'cond') : preds[0]!;
        const [thenS, elseS] = fields(s, 'body');
        const out = thenS ? this.buildStatement(thenS, [c], ctx) : [c];
        const elseOut = elseS ? this.buildStatement(elseS, [c], ctx) : [c];
        return [...out, ...elseOut];
      }
      case 'while_statement':
      case 'for_statement': {
        let cur = preds;
        const init = field(s, 'initial');
        if (init && init.type !== ';') cur = [this.simple(init, cur, ctx)];
        const condField = field(s, 'condition');
        const cond = condField && condField.type !== ';' ? condField : undefined;
        const loopCtx = { ...ctx, loops: [...ctx.loops, s] };
        const c = cond ? this.simple(cond, cur, loopCtx, 'cond') : this.add('cond', undefined, loopCtx.loops);
        if (!cond) this.linkAll(cur, c);
        const inner: BuildContext = { loops: [...ctx.loops, s], breaks: [], continues: [] };
        const body = field(s, 'body');
        let bodyOut = body ? this.buildStatement(body, [c], inner) : [c];
        const update = field(s, 'update');
        bodyOut = [...bodyOut, ...inner.continues];
        if (update) bodyOut = [this.simple(update, bodyOut, inner)];
        this.linkAll(bodyOut, c);
        return cond ? [c, ...inner.breaks] : inner.breaks;
      }
      case 'do_while_statement': {
        const inner: BuildContext = { loops: [...ctx.loops, s], breaks: [], continues: [] };
        const start = this.add('stmt', undefined, inner.loops);
        this.linkAll(preds, start);
        const body = field(s, 'body');
        const bodyOut = body ? this.buildStatement(body, [start], inner) : [start];
        const cond = field(s, 'condition');
        const c = cond ? this.simple(cond, [...bodyOut, ...inner.continues], inner, 'cond') : start;
        this.link(c, start);
        return [c, ...inner.breaks];
      }
      case 'return_statement':
      case 'revert_statement': {
        const id = this.simple(s, preds, ctx);
        this.link(id, this.exit);
        return [];
      }
      case 'break_statement': {
        const id = this.simple(s, preds, ctx);
        ctx.breaks.push(id);
        return [];
      }
      case 'continue_statement': {
        const id = this.simple(s, preds, ctx);
        ctx.continues.push(id);
        return [];
      }
      case 'try_statement': {
        const attempt = field(s, 'attempt');
        const a = this.simple(attempt ?? s, preds, ctx);
        const out: number[] = [];
        for (const c of s.children) {
          if (c.type === 'block_statement') out.push(...this.buildStatement(c, [a], ctx));
          if (c.type === 'catch_clause') {
            const b = field(c, 'body');
            out.push(...(b ? this.buildStatement(b, [a], ctx) : [a]));
          }
        }
        return out;
      }
      case 'expression_statement': {
        const e = s.children[0] ? unwrap(s.children[0]) : undefined;
        if (e && e.type === 'identifier' && this.text(e) === '_') {
          return [this.simple(s, preds, ctx, 'placeholder')];
        }
        const id = this.simple(s, preds, ctx);
        if (e && isTerminating(e, this.text)) {
          this.link(id, this.exit);
          return [];
        }
        return [id];
      }
      default:
        return [this.simple(s, preds, ctx)];
    }
  }

  private collectDefsUses(node: CfgNode, ast: AstNode): void {
    const defTargets = new Set<AstNode>();
    walk(ast, (x) => {
      if (x.type === 'variable_declaration_statement') {
        const value = field(x, 'value');
        for (const d of x.children) {
          const decls = d.type === 'variable_declaration_tuple' ? d.children : [d];
          for (const v of decls) {
            const nameNode =
              v.type === 'variable_declaration' ? field(v, 'name') : v.type === 'identifier' ? v : undefined;
            if (nameNode && v !== value) {
              node.defs.push({ name: this.text(nameNode), rhs: value, target: nameNode });
              defTargets.add(nameNode);
            }
          }
        }
      } else if (x.type === 'assignment_expression' || x.type === 'augmented_assignment_expression') {
        const left = field(x, 'left');
        const right = field(x, 'right');
        if (left) {
          const targets =
            unwrap(left).type === 'tuple_expression' ? unwrap(left).children.map(unwrap) : [unwrap(left)];
          for (const t of targets) {
            if (t.type === 'identifier' && this.isLocal(this.text(t))) {
              // `x += y` both reads and writes x; the new value derives from both.
              node.defs.push({
                name: this.text(t),
                rhs: x.type === 'assignment_expression' ? right : x,
                target: t,
              });
              if (x.type === 'assignment_expression') defTargets.add(t);
            }
          }
        }
      } else if (x.type === 'update_expression') {
        const a = field(x, 'argument');
        const t = a ? unwrap(a) : undefined;
        if (t && t.type === 'identifier' && this.isLocal(this.text(t)))
          node.defs.push({ name: this.text(t), rhs: x, target: t });
      }
      return undefined;
    });
    walk(ast, (x) => {
      if (x.type === 'identifier' && x.field !== 'property' && !defTargets.has(x)) {
        const name = this.text(x);
        if (this.isLocal(name)) node.uses.add(name);
      }
      return undefined;
    });
  }

  /**
   * Reaching definitions as bit sets (one bit per definition, 32 to a word): the classic
   * iteration to a fixed point, without a `Set` per node and round (which most of the time went to
   * allocating and collecting).
   */
  private computeReachingDefinitions(): void {
    const n = this.nodes.length;
    const gen: Array<number[]> = [];
    for (const node of this.nodes) {
      gen[node.id] = [];
      for (const d of node.defs) {
        gen[node.id]!.push(this.defs.length);
        this.defs.push({ node: node.id, name: d.name, rhs: d.rhs });
      }
    }
    const words = (this.defs.length + 31) >>> 5;
    this.words = words;
    // The definitions of each name; a node kills every definition of the names it defines.
    const byName = this.defsByName;
    for (const [i, d] of this.defs.entries()) {
      let mask = byName.get(d.name);
      if (!mask) {
        mask = new Uint32Array(words);
        byName.set(d.name, mask);
      }
      mask[i >>> 5]! |= 1 << (i & 31);
    }
    const keep = new Uint32Array(n * words).fill(0xffffffff);
    const genBits = new Uint32Array(n * words);
    for (const node of this.nodes) {
      const base = node.id * words;
      for (const d of node.defs) {
        const mask = byName.get(d.name)!;
        for (let w = 0; w < words; w++) keep[base + w]! &= ~mask[w]!;
      }
      for (const i of gen[node.id]!) genBits[base + (i >>> 5)]! |= 1 << (i & 31);
    }
    const inBits = new Uint32Array(n * words);
    const outBits = new Uint32Array(n * words);
    let changed = true;
    while (changed) {
      changed = false;
      for (const node of this.nodes) {
        this.budget.checkDeadline();
        const base = node.id * words;
        for (let w = 0; w < words; w++) {
          let x = 0;
          for (const p of node.pred) x |= outBits[p * words + w]!;
          inBits[base + w] = x;
          // `>>> 0`: bitwise operators yield signed 32-bit integers, the array holds unsigned ones;
          // without it a set bit 31 never compares equal and the iteration never ends.
          const out = ((x & keep[base + w]!) | genBits[base + w]!) >>> 0;
          if (out !== outBits[base + w]) {
            outBits[base + w] = out;
            changed = true;
          }
        }
      }
    }
    this.reachingIn = inBits;
  }

  /** Whether definition `d` reaches the entry of node `id`. */
  private reaches(id: number, d: number): boolean {
    if (!(id >= 0 && id < this.nodes.length)) return false;
    return (this.reachingIn[id * this.words + (d >>> 5)]! & (1 << (d & 31))) !== 0;
  }

  /**
   * Indices of the definitions reaching the entry of node `id`, in ascending order; with `mask`
   * (a name's definitions), only those of the mask.
   */
  private *reachingAt(id: number, mask?: Uint32Array): Generator<number> {
    if (!(id >= 0 && id < this.nodes.length)) return;
    const base = id * this.words;
    for (let w = 0; w < this.words; w++) {
      let x = mask ? this.reachingIn[base + w]! & mask[w]! : this.reachingIn[base + w]!;
      while (x !== 0) {
        const bit = 31 - Math.clz32(x & -x);
        yield (w << 5) | bit;
        x &= x - 1;
      }
    }
  }
}

interface BuildContext {
  loops: AstNode[];
  breaks: number[];
  continues: number[];
}

/** `throw`, `revert(…)`, `selfdestruct(…)`: control does not continue. */
function isTerminating(e: AstNode, text: (n: AstNode) => string): boolean {
  if (e.type === 'identifier') return text(e) === 'throw';
  if (e.type === 'call_expression') {
    const f = field(e, 'function');
    const name = f ? text(unwrap(f)) : '';
    return name === 'revert' || name === 'selfdestruct' || name === 'suicide';
  }
  return false;
}

/** The result of a def-use taint propagation. */
export interface Taint {
  /** Indices (into `Cfg.defs`) of definitions whose value derives from the source. */
  tainted: Set<number>;
  /** Whether an expression evaluated at a node derives from the source. */
  isTaintedExpr(expr: AstNode, at: number): boolean;
}
