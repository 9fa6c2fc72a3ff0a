import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAdrs, renderIndex } from '../../scripts/adr-index.ts';
import { renderDoc } from '../../scripts/performance-doc.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'vigil-docs-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('docs/performance.md generator', () => {
  it('renders a bench it does not know, and a known bench whose JSON changed shape, generically', async () => {
    const results = path.join(dir, 'results');
    await rm(results, { recursive: true, force: true });
    await mkdir(results);
    await writeFile(
      path.join(results, 'brand-new.json'),
      JSON.stringify({
        date: '2026-11-27T10:00:00Z',
        rounds: 3,
        operations: [{ name: 'read', p99Ms: 12.5 }],
      }),
    );
    await writeFile(
      path.join(results, 'api.json'),
      JSON.stringify({ date: '2026-11-27T10:00:00Z', total: 7 }),
    );
    const doc = renderDoc(results);
    expect(doc).toContain('## brand-new');
    expect(doc).toMatch(/\| read \| 12\.5 \|/);
    expect(doc).toMatch(/## API throughput[\s\S]*\| total \| 7 \|/);
    expect(doc).toMatch(/\| \[Console\]\(#console\) \| `npm run bench:console` \| not run yet \|/);
  });

  it('is what the committed results give', async () => {
    const root = path.resolve(import.meta.dirname, '../..');
    expect(await readFile(path.join(root, 'docs/performance.md'), 'utf8')).toBe(
      renderDoc(path.join(root, 'bench/results')),
    );
  });
});

describe('docs/adr/README.md index', () => {
  it('lists every ADR, and reports a duplicate number, a missing status and a broken link', async () => {
    const adr = path.join(dir, 'adr');
    await mkdir(adr, { recursive: true });
    await writeFile(path.join(adr, '0001-one.md'), '# 0001 — One\n\n## Status\n\nAccepted.\n');
    await writeFile(path.join(adr, '0001-again.md'), '# 0001 — Again\n\nSee [two](0002-two.md).\n');
    const problems: string[] = [];
    const entries = readAdrs(adr, problems);
    expect(entries.map((e) => e.file)).toEqual(['0001-again.md', '0001-one.md']);
    expect(problems.join('\n')).toMatch(/number 0001 is also/);
    expect(problems.join('\n')).toMatch(/0001-again\.md: no "## Status" section/);
    expect(problems.join('\n')).toMatch(/link to 0002-two\.md, which does not exist/);
    expect(renderIndex(entries)).toContain('| [0001](0001-one.md) | One | Accepted |');
  });

  it('is current for the committed ADRs', async () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const problems: string[] = [];
    const index = renderIndex(readAdrs(path.join(root, 'docs/adr'), problems));
    expect(await readFile(path.join(root, 'docs/adr/README.md'), 'utf8')).toBe(index);
  });
});
