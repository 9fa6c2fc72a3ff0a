import { execFile } from 'node:child_process';
import { chmod, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../test/helpers/app.ts';
import { buildCompany, buildServiceKey, grantCredits } from '../../test/helpers/factories.ts';

const root = path.resolve(import.meta.dirname, '../..');
let url: string;
let work: string;
let bin: string;
let yamlBlocks: string[];

/** The ```yaml blocks of docs/ci.md, in order (GitHub Actions, then GitLab CI). */
async function recipes(): Promise<string[]> {
  const text = await readFile(path.join(root, 'docs/ci.md'), 'utf8');
  return [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** The `vigil scan …` line of a recipe, as written. */
function scanLine(block: string): string {
  const line = block.split('\n').find((l) => /\bvigil scan .*--output/.test(l));
  if (!line) throw new Error('no vigil scan line in the recipe');
  return line.replace(/^\s*(-\s+)?(run:\s+)?/, '').trim();
}

function runInCheckout(command: string, cwd: string, env: Record<string, string>) {
  return new Promise<{ code: number; stderr: string }>((resolve) => {
    execFile(
      'bash',
      ['-c', command],
      { cwd, env: { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: work, ...env }, timeout: 180_000 },
      (error, _stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stderr }),
    );
  });
}

const t = sharedTestApp({ worker: true });
beforeAll(async () => {
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  work = await mkdtemp(path.join(os.tmpdir(), 'vigil-ci-'));
  // `vigil` on the PATH, as `npm install --global` puts it there.
  bin = path.join(work, 'bin');
  await cp(path.join(root, 'bin'), bin, { recursive: true });
  await writeFile(
    path.join(bin, 'vigil'),
    `#!/bin/sh\nexec "${process.execPath}" "${root}/bin/vigil.js" "$@"\n`,
  );
  await chmod(path.join(bin, 'vigil'), 0o755);
  yamlBlocks = await recipes();
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function checkout(name: string): Promise<string> {
  const dir = path.join(work, name);
  await cp(path.join(root, 'examples/sample-project'), dir, { recursive: true });
  return dir;
}

async function ciEnv() {
  const company = await buildCompany(t);
  const key = await buildServiceKey(t, { companyId: company.id, scopes: ['scans:create', 'scans:read'] });
  await grantCredits(t, company.id, 10);
  return {
    VIGIL_URL: url,
    VIGIL_API_KEY: key.key,
    CI: 'true',
    VIGIL_CONFIG_DIR: path.join(work, company.id),
  };
}

describe('docs/ci.md', () => {
  it('GitHub Actions: the scan step writes the SARIF file the upload step reads, and fails the job on High', async () => {
    const block = yamlBlocks[0]!;
    expect(block).toMatch(/security-events: write/);
    expect(block).toMatch(/if: success\(\) \|\| failure\(\)/);
    const line = scanLine(block);
    const output = /--output (\S+)/.exec(line)?.[1];
    expect(block).toContain(`sarif_file: ${output}`);

    const dir = await checkout('github');
    const result = await runInCheckout(line, dir, await ciEnv());
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).not.toMatch(/\r/); // plain lines in CI logs, no progress bar
    const sarif = JSON.parse(await readFile(path.join(dir, output!), 'utf8'));
    expect(sarif.version).toBe('2.1.0');
    const run = sarif.runs[0];
    expect(run.results.length).toBeGreaterThan(0);
    for (const r of run.results) {
      const uri = r.locations[0].physicalLocation.artifactLocation.uri as string;
      expect(uri.startsWith('/')).toBe(false);
      expect(r.locations[0].physicalLocation.region.startLine).toBeGreaterThan(0);
    }
  });

  it('GitLab CI: the scan writes the SAST report named in artifacts:reports:sast, and fails the job on High', async () => {
    const block = yamlBlocks[1]!;
    expect(block).toMatch(/when: always/);
    const line = scanLine(block);
    const output = /--output (\S+)/.exec(line)?.[1];
    expect(block).toContain(`sast: ${output}`);

    const dir = await checkout('gitlab');
    const result = await runInCheckout(line, dir, await ciEnv());
    expect(result.code, result.stderr).toBe(1);
    const report = JSON.parse(await readFile(path.join(dir, output!), 'utf8'));
    expect(report.version).toMatch(/^15\./);
    expect(report.vulnerabilities.length).toBeGreaterThan(0);
    expect(report.vulnerabilities.some((v: { severity: string }) => v.severity === 'High')).toBe(true);
  });
});
