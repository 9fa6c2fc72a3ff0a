/**
 * What a ticket made from a finding says: the title with its severity, a Markdown description
 * (tracker_a) and the same content as an Atlassian Document (tracker_b), plus the deterministic
 * label that lets tracker_b find a ticket whose create response was lost.
 */
import { createHash } from 'node:crypto';
import type { TicketFindingContent } from './tracker.types.ts';

/** An ADF inline mark. */
export type AdfMark = { type: 'strong' } | { type: 'code' } | { type: 'link'; attrs: { href: string } };

/** An ADF inline node; a text node never has empty text. */
export type AdfInline = { type: 'text'; text: string; marks?: AdfMark[] } | { type: 'hardBreak' };

/** The ADF block nodes this module writes. */
export type AdfBlock =
  | { type: 'paragraph'; content: AdfInline[] }
  | { type: 'heading'; attrs: { level: number }; content: AdfInline[] }
  | { type: 'bulletList'; content: AdfListItem[] }
  | { type: 'orderedList'; content: AdfListItem[] }
  | { type: 'codeBlock'; attrs?: { language: string }; content?: Array<{ type: 'text'; text: string }> };

/** An ADF list item. */
export interface AdfListItem {
  type: 'listItem';
  content: AdfBlock[];
}

/** An Atlassian Document, version 1. */
export interface AdfDocument {
  type: 'doc';
  version: 1;
  content: AdfBlock[];
}

/** A finding rendered for both trackers. */
export interface TicketContent {
  /** `[High] Reentrancy in Vault.withdraw`, one line, at most 255 characters. */
  readonly title: string;
  /** The description for tracker_a. */
  readonly markdown: string;
  /** The description for tracker_b. */
  readonly adf: AdfDocument;
}

const TITLE_MAX = 255;
const LABEL_PREFIX = 'vigil-finding-';

/** `high` → `High`, `CRITICAL` → `Critical`; an empty severity reads `Unrated`. */
export function formatSeverity(severity: string): string {
  const s = severity.trim().toLowerCase();
  if (s.length === 0) return 'Unrated';
  return s[0]!.toUpperCase() + s.slice(1);
}

/**
 * The label tracker_b issues carry so that an issue whose create answer was lost can be found by
 * a JQL search: derived from the finding id alone, so every attempt for a finding uses the same one.
 */
export function buildFindingLabel(findingId: string): string {
  return LABEL_PREFIX + createHash('sha256').update(findingId).digest('hex').slice(0, 16);
}

/** The tracker_a priority matching a severity: critical 1 (urgent) … low 4, anything else 0 (none). */
export function mapSeverityToPriority(severity: string): 0 | 1 | 2 | 3 | 4 {
  switch (severity.trim().toLowerCase()) {
    case 'critical':
      return 1;
    case 'high':
      return 2;
    case 'medium':
      return 3;
    case 'low':
      return 4;
    default:
      return 0;
  }
}

/** Renders a finding as a ticket title, a Markdown description and an Atlassian Document. */
export function renderTicketContent(finding: TicketFindingContent): TicketContent {
  return { title: buildTitle(finding), markdown: buildMarkdown(finding), adf: buildAdf(finding) };
}

function buildTitle(finding: TicketFindingContent): string {
  // Summaries are single-line and length-limited at both providers.
  const title = `[${formatSeverity(finding.severity)}] ${finding.title.replace(/\s+/g, ' ').trim()}`;
  return title.length > TITLE_MAX ? `${title.slice(0, TITLE_MAX - 1)}…` : title;
}

function formatLocation(location: NonNullable<TicketFindingContent['location']>): string {
  const lines =
    location.startLine === location.endLine
      ? `${location.startLine}`
      : `${location.startLine}-${location.endLine}`;
  return `${location.file}:${lines}`;
}

function formatIdentifierDetail(identifier: TicketFindingContent['identifiers'][number]): string {
  return identifier.value === identifier.name || identifier.value === ''
    ? ` (${identifier.type})`
    : ` (${identifier.type}: ${identifier.value})`;
}

function buildMarkdown(finding: TicketFindingContent): string {
  const parts: string[] = [`**Severity:** ${formatSeverity(finding.severity)}`];
  const description = finding.description?.trim() ?? '';
  parts.push(description.length > 0 ? description : '_No description._');
  if (finding.location) parts.push(`**Location:** \`${formatLocation(finding.location)}\``);
  if (finding.identifiers.length > 0) {
    const items = finding.identifiers.map((id) => `- ${id.name}${formatIdentifierDetail(id)}`);
    parts.push(`**Identifiers**\n\n${items.join('\n')}`);
  }
  parts.push(`[View this finding in Vigil](${finding.url})`);
  return `${parts.join('\n\n')}\n`;
}

function text(value: string, marks?: AdfMark[]): AdfInline[] {
  // ADF rejects empty text nodes, so an empty string produces no node at all.
  if (value.length === 0) return [];
  return marks ? [{ type: 'text', text: value, marks }] : [{ type: 'text', text: value }];
}

function heading(title: string): AdfBlock {
  return { type: 'heading', attrs: { level: 3 }, content: text(title) };
}

function buildAdf(finding: TicketFindingContent): AdfDocument {
  const content: AdfBlock[] = [
    {
      type: 'paragraph',
      content: [...text('Severity: ', [{ type: 'strong' }]), ...text(formatSeverity(finding.severity))],
    },
    heading('Description'),
  ];
  const description = convertMarkdownToAdf(finding.description ?? '');
  const placeholder: AdfBlock = { type: 'paragraph', content: text('No description.') };
  content.push(...(description.length > 0 ? description : [placeholder]));
  if (finding.location) {
    content.push(heading('Location'), {
      type: 'paragraph',
      content: text(formatLocation(finding.location), [{ type: 'code' }]),
    });
  }
  if (finding.identifiers.length > 0) {
    content.push(heading('Identifiers'), {
      type: 'bulletList',
      content: finding.identifiers.map((id) => ({
        type: 'listItem',
        content: [{ type: 'paragraph', content: [...text(id.name), ...text(formatIdentifierDetail(id))] }],
      })),
    });
  }
  content.push({
    type: 'paragraph',
    content: text('View this finding in Vigil', [{ type: 'link', attrs: { href: finding.url } }]),
  });
  return { type: 'doc', version: 1, content: content.filter(hasContent) };
}

function hasContent(block: AdfBlock): boolean {
  if (block.type === 'codeBlock') return true;
  return block.content.length > 0;
}

const INLINE_PATTERN = /`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\((https?:\/\/[^)\s]+)\)/g;

/** Inline Markdown (code spans, bold, http(s) links) as ADF inline nodes. */
function convertInline(line: string): AdfInline[] {
  const out: AdfInline[] = [];
  let last = 0;
  for (const match of line.matchAll(INLINE_PATTERN)) {
    const index = match.index ?? 0;
    out.push(...text(line.slice(last, index)));
    if (match[1] !== undefined) out.push(...text(match[1], [{ type: 'code' }]));
    else if (match[2] !== undefined) out.push(...text(match[2], [{ type: 'strong' }]));
    else if (match[3] !== undefined && match[4] !== undefined) {
      out.push(...text(match[3], [{ type: 'link', attrs: { href: match[4] } }]));
    }
    last = index + match[0].length;
  }
  out.push(...text(line.slice(last)));
  return out;
}

const FENCE = /^\s*```\s*([\w+#.-]*)\s*$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const ORDERED = /^\s*\d+[.)]\s+(.*)$/;
const HEADING = /^(#{1,6})\s+(.*)$/;

/**
 * Converts the Markdown of a finding description to ADF blocks: paragraphs, headings, bullet and
 * ordered lists, fenced code blocks and inline code, bold and links. Anything else stays text.
 */
export function convertMarkdownToAdf(markdown: string): AdfBlock[] {
  const blocks: AdfBlock[] = [];
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  let paragraph: string[] = [];
  let list: { type: 'bulletList' | 'orderedList'; items: string[] } | null = null;

  const flushParagraph = (): void => {
    const inline = convertInline(paragraph.join(' ').trim());
    if (inline.length > 0) blocks.push({ type: 'paragraph', content: inline });
    paragraph = [];
  };
  const flushList = (): void => {
    if (list) {
      const items: AdfListItem[] = list.items
        .map((item) => convertInline(item.trim()))
        .filter((inline) => inline.length > 0)
        .map((inline) => ({ type: 'listItem', content: [{ type: 'paragraph', content: inline }] }));
      if (items.length > 0) blocks.push({ type: list.type, content: items });
    }
    list = null;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE.exec(line);
    if (fence) {
      flushParagraph();
      flushList();
      const code: string[] = [];
      i++;
      while (i < lines.length && !/^\s*```\s*$/.test(lines[i]!)) code.push(lines[i++]!);
      const body = code.join('\n');
      const language = fence[1] ?? '';
      blocks.push({
        type: 'codeBlock',
        ...(language.length > 0 ? { attrs: { language } } : {}),
        ...(body.length > 0 ? { content: [{ type: 'text', text: body }] } : {}),
      });
      continue;
    }
    if (line.trim().length === 0) {
      flushParagraph();
      flushList();
      continue;
    }
    const headingMatch = HEADING.exec(line);
    if (headingMatch) {
      flushParagraph();
      flushList();
      const inline = convertInline(headingMatch[2]!.trim());
      // Our own section headings are level 3; the description's sit below them.
      const level = Math.min(6, headingMatch[1]!.length + 3);
      if (inline.length > 0) blocks.push({ type: 'heading', attrs: { level }, content: inline });
      continue;
    }
    const bullet = BULLET.exec(line);
    const ordered = bullet ? null : ORDERED.exec(line);
    const item = bullet ?? ordered;
    if (item) {
      flushParagraph();
      const type = bullet ? 'bulletList' : 'orderedList';
      if (list && list.type !== type) flushList();
      if (!list) list = { type, items: [] };
      list.items.push(item[1]!);
      continue;
    }
    if (list && /^\s+\S/.test(line)) {
      // An indented line continues the previous list item.
      const current: { items: string[] } = list;
      current.items[current.items.length - 1] += ` ${line.trim()}`;
      continue;
    }
    flushList();
    paragraph.push(line.trim());
  }
  flushParagraph();
  flushList();
  return blocks;
}
