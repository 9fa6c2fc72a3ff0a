/** Compiler and language version (SWC-102, 103, 111): floating or outdated pragmas, deprecated constructs. */
import { walk } from '../ast.ts';
import type { AstNode } from '../parser.ts';
import { defineRule } from './rule.ts';

const DEPRECATED: Array<{ test: (t: string, n: AstNode) => boolean; what: string; use: string }> = [
  { test: (t, n) => n.type === 'identifier' && t === 'throw', what: '`throw`', use: '`revert()`' },
  { test: (t, n) => n.type === 'identifier' && t === 'suicide', what: '`suicide`', use: '`selfdestruct`' },
  { test: (t, n) => n.type === 'identifier' && t === 'sha3', what: '`sha3`', use: '`keccak256`' },
  {
    test: (t, n) => n.type === 'member_expression' && t === 'block.blockhash',
    what: '`block.blockhash`',
    use: '`blockhash`',
  },
  {
    test: (t, n) => n.type === 'member_expression' && t === 'msg.gas',
    what: '`msg.gas`',
    use: '`gasleft()`',
  },
  {
    test: (t, n) => n.type === 'member_expression' && /\.callcode$/.test(t),
    what: '`callcode`',
    use: '`delegatecall`',
  },
];

export const deprecatedConstruct = defineRule(
  {
    id: 'sol.deprecated.construct',
    title: 'Deprecated Solidity construct',
    description:
      'The code uses a construct that newer compilers removed; it signals an old, unmaintained compiler version.',
    remediation: 'Replace it with its current equivalent and compile with a recent Solidity version.',
    severity: 'informational',
    confidence: 'high',
    category: 'other',
    swc: 'SWC-111',
    cwe: 'CWE-477',
    scanType: 'lite',
  },
  (ctx, meta) => {
    const { fa } = ctx;
    const seenLines = new Set<number>();
    const src = ctx.file.source;
    if (!/\b(throw|suicide|sha3|blockhash|gas|callcode)\b/.test(src)) return;
    walk(ctx.file.root, (n) => {
      if (n.type !== 'identifier' && n.type !== 'member_expression') return undefined;
      if (n.field === 'property' || n.field === 'name') return undefined;
      const len = n.end - n.start;
      if (n.type === 'identifier' && len !== 3 && len !== 4 && len !== 5 && len !== 7) return undefined;
      const raw = src.slice(n.start, n.end);
      if (n.type === 'member_expression' && !/(blockhash|gas|callcode)$/.test(raw)) return undefined;
      const t = raw.replace(/\s+/g, '');
      const hit = DEPRECATED.find((d) => d.test(t, n));
      if (!hit || seenLines.has(n.line)) return undefined;
      seenLines.add(n.line);
      ctx.report(meta, fa.statementOf(n), { message: `${hit.what} is deprecated; use ${hit.use}.` });
      return false;
    });
  },
);

export const floatingPragma = defineRule(
  {
    id: 'sol.pragma.floating',
    title: 'Floating compiler pragma',
    description:
      'The pragma admits several compiler versions, so the deployed bytecode may come from a compiler other than the one tested.',
    remediation: 'Pin the exact compiler version (`pragma solidity 0.8.24;`).',
    severity: 'informational',
    confidence: 'high',
    category: 'other',
    swc: 'SWC-103',
    cwe: 'CWE-664',
    scanType: 'lite',
  },
  (ctx, meta) => {
    const p = ctx.file.pragma;
    if (!p?.floating) return;
    const node = ctx.file.root.children.find((c) => c.type === 'pragma_directive' && c.line === p.line);
    if (node) ctx.report(meta, node, { message: `\`${p.text}\` admits more than one compiler version.` });
  },
);

export const outdatedPragma = defineRule(
  {
    id: 'sol.pragma.outdated',
    title: 'Outdated compiler version',
    description:
      'The code targets a Solidity version older than 0.8, without checked arithmetic and with known compiler bugs fixed since.',
    remediation: 'Port the code to a recent 0.8.x compiler.',
    severity: 'informational',
    confidence: 'high',
    category: 'other',
    swc: 'SWC-102',
    cwe: 'CWE-937',
    scanType: 'lite',
  },
  (ctx, meta) => {
    const p = ctx.file.pragma;
    if (!p?.minVersion || !ctx.file.versionBelow(0, 8)) return;
    const node = ctx.file.root.children.find((c) => c.type === 'pragma_directive' && c.line === p.line);
    if (node)
      ctx.report(meta, node, { message: `\`${p.text}\` targets Solidity ${p.minVersion.join('.')}.` });
  },
);
