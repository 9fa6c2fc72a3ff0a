import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { validateAdf } from '../../../test/fakes/tracker-b-server.ts';
import {
  buildFindingLabel,
  convertMarkdownToAdf,
  mapSeverityToPriority,
  renderTicketContent,
} from './ticket-content.ts';
import type { TicketFindingContent } from './tracker.types.ts';

const finding: TicketFindingContent = {
  id: '3f0c8a52-7d1e-4b8f-9a61-0c2d5e7f9b13',
  title: 'Reentrancy in\nVault.withdraw',
  description: [
    '## Impact',
    'The `withdraw` function sends ether **before** updating the balance.',
    'See [SWC-107](https://swcregistry.io/docs/SWC-107).',
    '',
    '```solidity',
    '(bool ok,) = msg.sender.call{value: amount}("");',
    '```',
    '',
    '- an attacker re-enters',
    '- the vault is drained',
    '',
    '1. update the balance',
    '2. then send',
  ].join('\n'),
  severity: 'critical',
  location: { file: 'contracts/Vault.sol', startLine: 42, endLine: 42 },
  identifiers: [
    { type: 'cwe', name: 'CWE-841', value: '841' },
    { type: 'swc', name: 'SWC-107', value: 'SWC-107' },
  ],
  url: 'https://vigil.example.test/findings/3f0c8a52',
};

/** Every text node in the document. */
function collectTexts(node: unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(node)) {
    for (const n of node) collectTexts(n, out);
  } else if (typeof node === 'object' && node !== null) {
    const record = node as Record<string, unknown>;
    if (record.type === 'text') out.push(record);
    collectTexts(record.content, out);
  }
  return out;
}

describe('renderTicketContent', () => {
  it('titles the ticket with the severity on one line', () => {
    expect(renderTicketContent(finding).title).toBe('[Critical] Reentrancy in Vault.withdraw');
  });

  it('caps the title at 255 characters', () => {
    const title = renderTicketContent({ ...finding, title: 'x'.repeat(400) }).title;
    expect(title).toHaveLength(255);
    expect(title.endsWith('…')).toBe(true);
  });

  it('writes Markdown with the text, the location, the identifiers and a link back', () => {
    const { markdown } = renderTicketContent(finding);
    expect(markdown).toContain('**Severity:** Critical');
    expect(markdown).toContain('sends ether **before** updating');
    expect(markdown).toContain('**Location:** `contracts/Vault.sol:42`');
    expect(markdown).toContain('- CWE-841 (cwe: 841)');
    expect(markdown).toContain('- SWC-107 (swc)');
    expect(markdown).toContain(`[View this finding in Vigil](${finding.url})`);
  });

  it('builds an Atlassian Document the provider accepts, with no empty text node', () => {
    const { adf } = renderTicketContent(finding);
    expect(validateAdf(adf)).toBeNull();
    const types = adf.content.map((b) => b.type);
    expect(types).toEqual(
      expect.arrayContaining(['heading', 'paragraph', 'codeBlock', 'bulletList', 'orderedList']),
    );
    for (const node of collectTexts(adf)) expect((node as { text: string }).text.length).toBeGreaterThan(0);
    expect(adf.content).toContainEqual({
      type: 'codeBlock',
      attrs: { language: 'solidity' },
      content: [{ type: 'text', text: '(bool ok,) = msg.sender.call{value: amount}("");' }],
    });
    expect(adf.content).toContainEqual({
      type: 'paragraph',
      content: [
        {
          type: 'text',
          text: 'View this finding in Vigil',
          marks: [{ type: 'link', attrs: { href: finding.url } }],
        },
      ],
    });
  });

  it('renders a finding without description, location or identifiers', () => {
    const bare = {
      ...finding,
      description: null,
      location: undefined,
      identifiers: [],
    } as TicketFindingContent;
    const content = renderTicketContent(bare);
    expect(validateAdf(content.adf)).toBeNull();
    expect(JSON.stringify(content.adf)).toContain('No description.');
    expect(content.markdown).toContain('_No description._');
    expect(content.markdown).not.toContain('Location');
  });

  it('writes nothing empty for blank lines, empty code fences and empty list items', () => {
    const blocks = convertMarkdownToAdf('\n\n```\n```\n\n- \n-  x\n\n**\n');
    expect(validateAdf({ type: 'doc', version: 1, content: blocks })).toBeNull();
  });
});

describe('buildFindingLabel', () => {
  it('is the first 16 hex digits of the sha256 of the finding id, without spaces', () => {
    const expected = `vigil-finding-${createHash('sha256').update(finding.id).digest('hex').slice(0, 16)}`;
    expect(buildFindingLabel(finding.id)).toBe(expected);
    expect(buildFindingLabel(finding.id)).toMatch(/^vigil-finding-[0-9a-f]{16}$/);
  });
});

describe('mapSeverityToPriority', () => {
  it.each([
    ['Critical', 1],
    ['high', 2],
    ['MEDIUM', 3],
    ['low', 4],
    ['informational', 0],
  ] as const)('maps %s to %i', (severity, priority) => {
    expect(mapSeverityToPriority(severity)).toBe(priority);
  });
});
