/** Small helpers over the plain AST of `parser.ts`. */
import type { AstNode } from './parser.ts';

export type { AstNode } from './parser.ts';

// The helpers below are the rules' innermost loops, run mostly before the JIT optimises them (a
// scan is one short process): plain indexed loops, no callback per child.

/** The first child held under `field`. */
export function field(node: AstNode, name: string): AstNode | undefined {
  const children = node.children;
  for (let i = 0; i < children.length; i++) if (children[i]!.field === name) return children[i];
  return undefined;
}

/** Every child held under `field`. */
export function fields(node: AstNode, name: string): AstNode[] {
  const out: AstNode[] = [];
  const children = node.children;
  for (let i = 0; i < children.length; i++) if (children[i]!.field === name) out.push(children[i]!);
  return out;
}

export function childOfType(node: AstNode, type: string): AstNode | undefined {
  const children = node.children;
  for (let i = 0; i < children.length; i++) if (children[i]!.type === type) return children[i];
  return undefined;
}

export function childrenOfType(node: AstNode, type: string): AstNode[] {
  const out: AstNode[] = [];
  const children = node.children;
  for (let i = 0; i < children.length; i++) if (children[i]!.type === type) out.push(children[i]!);
  return out;
}

/** Pre-order walk; return `false` from the visitor to skip a node's children. */
export function walk(node: AstNode, visit: (n: AstNode) => unknown): void {
  if (visit(node) === false) return;
  const children = node.children;
  for (let i = 0; i < children.length; i++) walk(children[i]!, visit);
}

/** Every descendant (and the node itself) of one of the given types. */
export function descendants(node: AstNode, ...types: string[]): AstNode[] {
  const out: AstNode[] = [];
  walk(node, (n) => {
    if (types.includes(n.type)) out.push(n);
  });
  return out;
}

/** Strips parentheses: `((x))` → `x`. */
export function unwrap(node: AstNode): AstNode {
  let n = node;
  while ((n.type === 'parenthesized_expression' || n.type === 'expression') && n.children.length === 1) {
    n = n.children[0]!;
  }
  return n;
}

/** The nearest ancestor (not the node itself) of one of the given types. */
export function ancestor(node: AstNode, ...types: string[]): AstNode | undefined {
  let p = node.parent;
  while (p) {
    if (types.includes(p.type)) return p;
    p = p.parent;
  }
  return undefined;
}

/** Call arguments as expressions (struct-style arguments yield their values). */
export function callArgs(call: AstNode): AstNode[] {
  const out: AstNode[] = [];
  for (const c of call.children) {
    if (c.type !== 'call_argument') continue;
    const inner = c.children[0];
    if (!inner) continue;
    if (inner.type === 'call_struct_argument') {
      const v = field(inner, 'value');
      if (v) out.push(v);
    } else out.push(inner);
  }
  return out;
}

/** `uint128(x)`, `address(x)`, `payable(x)`: a call that converts a value keeps it. */
export function isTypeConversion(call: AstNode, text: (n: AstNode) => string): boolean {
  const f = field(call, 'function');
  if (!f) return false;
  return /^(u?int\d*|address|payable|bytes\d*|bool)$/.test(text(unwrap(f)).replace(/\s+/g, ''));
}
