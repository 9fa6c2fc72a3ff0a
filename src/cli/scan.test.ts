import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/helpers/app.ts';
import { buildCompany, buildServiceKey, grantCredits } from '../../test/helpers/factories.ts';
import { packDirectory, runScanCommand } from './scan.ts';

const sample = path.resolve(import.meta.dirname, '../../examples/sample-project');
let t: TestApp;
let url: string;
let work: string;

beforeAll(async () => {
  t = await createTestApp({ worker: true });
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  work = await mkdtemp(path.join(os.tmpdir(), 'vigil-scan-cli-'));
});
afterAll(async () => {
  await t.close();
  await rm(work, { recursive: true, force: true });
});

describe('vigil scan', () => {
  it('uploads a directory, scans it, writes the report and fails on high findings', async () => {
    const company = await buildCompany(t);
    const key = await buildServiceKey(t, company.id);
    await grantCredits(t, company.id, 4);
    const output = path.join(work, 'report.json');
    const code = await runScanCommand(
      sample,
      { url, key: key.key, type: 'standard', format: 'sast', output, failOn: 'High', timeout: '120' },
      {},
    );
    expect(code).toBe(1);
    const report = JSON.parse(await readFile(output, 'utf8'));
    expect(report.vulnerabilities.length).toBeGreaterThan(0);
    expect(report.vulnerabilities.some((v: { severity: string }) => v.severity === 'High')).toBe(true);
    const lenient = await runScanCommand(
      sample,
      {
        url,
        key: key.key,
        type: 'standard',
        format: 'sarif',
        output: path.join(work, 'r.sarif'),
        failOn: 'never',
        timeout: '120',
      },
      {},
    );
    expect(lenient).toBe(0);
    expect(JSON.parse(await readFile(path.join(work, 'r.sarif'), 'utf8')).version).toBe('2.1.0');
  });

  it('says what to do when the key is missing or the server is unreachable', async () => {
    await expect(
      runScanCommand(sample, { type: 'standard', format: 'sast', failOn: 'High', timeout: '5' }, {}),
    ).rejects.toThrow(/VIGIL_API_KEY/);
    await expect(
      runScanCommand(
        sample,
        {
          url: 'http://127.0.0.1:9',
          key: 'vgl_sk_x',
          type: 'standard',
          format: 'sast',
          failOn: 'High',
          timeout: '5',
        },
        {},
      ),
    ).rejects.toThrow(/Cannot reach/);
  });

  it('packs regular files and skips dependency folders', async () => {
    const dir = await mkdtemp(path.join(work, 'src-'));
    await writeFile(path.join(dir, 'A.sol'), 'contract A {}');
    await rm(path.join(dir, 'node_modules'), { recursive: true, force: true });
    const { mkdir } = await import('node:fs/promises');
    await mkdir(path.join(dir, 'node_modules', 'x'), { recursive: true });
    await writeFile(path.join(dir, 'node_modules', 'x', 'B.sol'), 'contract B {}');
    const { files } = await packDirectory(dir, path.join(work, 'a.tar.gz'));
    expect(files).toBe(1);
  });
});
