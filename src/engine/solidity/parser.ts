/**
 * Solidity parsing with tree-sitter compiled to WASM (chosen by measurement: see bench/engine.ts,
 * ~50x faster than the ANTLR parser and linear in file size). The tree is converted once into a
 * plain JavaScript AST so that rules never cross the WASM boundary, and the native tree is freed
 * right away (bounded memory).
 */
import { createRequire } from 'node:module';
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

let parserPromise: Promise<Parser> | undefined;

/** Loads the WASM runtime and the Solidity grammar once per process. */
export function loadSolidityParser(): Promise<Parser> {
  parserPromise ??= (async () => {
    await Parser.init();
    const require = createRequire(import.meta.url);
    const language = await Language.load(require.resolve('tree-sitter-solidity/tree-sitter-solidity.wasm'));
    const parser = new Parser();
    parser.setLanguage(language);
    return parser;
  })();
  return parserPromise;
}

/** Parses Solidity source into the plain AST; syntax errors are collected, never thrown. */
export async function parseSolidity(source: string): Promise<ParsedSource> {
  const parser = await loadSolidityParser();
  const tree = parser.parse(source);
  if (!tree) throw new Error('tree-sitter returned no tree');
  try {
    const errors: ParseError[] = [];
    const cursor = tree.walk();
    const root = convert(cursor, null, errors);
    cursor.delete();
    return { root, source, errors };
  } finally {
    tree.delete();
  }
}

function convert(cursor: ReturnType<import('web-tree-sitter').Tree['walk']>, parent: AstNode | null, errors: ParseError[]): AstNode {
  const node: AstNode = {
    type: cursor.nodeType,
    field: cursor.currentFieldName,
    start: cursor.startIndex,
    end: cursor.endIndex,
    line: cursor.startPosition.row + 1,
    endLine: cursor.endPosition.row + 1,
    children: [],
    parent,
  };
  if (node.type === 'ERROR') errors.push({ line: node.line, kind: 'error' });
  if (cursor.gotoFirstChild()) {
    do {
      if (cursor.nodeIsMissing) errors.push({ line: cursor.startPosition.row + 1, kind: 'missing' });
      if (cursor.nodeIsNamed || cursor.nodeType === 'ERROR') {
        if (cursor.nodeType === 'comment') continue;
        let child = convert(cursor, node, errors);
        // Collapse `expression`/`statement` wrappers: keep the wrapper's field on the child.
        while (WRAPPERS.has(child.type) && child.children.length === 1) {
          const inner = child.children[0]!;
          inner.field = child.field;
          inner.parent = node;
          child = inner;
        }
        node.children.push(child);
      } else if (OPERATOR_NODES.has(node.type) && node.op === undefined && !PUNCTUATION.has(cursor.nodeType)) {
        node.op = cursor.nodeType;
      }
    } while (cursor.gotoNextSibling());
    cursor.gotoParent();
  }
  return reassociate(node);
}

/** Postfix expressions and the child that holds what they apply to. */
const POSTFIX_BASE: Record<string, string> = {
  array_access: 'base',
  slice_access: 'base',
  member_expression: 'object',
  call_expression: 'function',
};
const OPERATOR_TYPES = new Set(['binary_expression', 'unary_expression', 'ternary_expression', 'update_expression']);

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
 * mistake; rotate the postfix onto the operator's last operand: `a + (b[i])`.
 */
function reassociate(x: AstNode): AstNode {
  const baseField = POSTFIX_BASE[x.type];
  if (!baseField) return x;
  const bi = x.children.findIndex((c) => c.field === baseField);
  const base = x.children[bi];
  if (!base || !OPERATOR_TYPES.has(base.type)) return x;
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
