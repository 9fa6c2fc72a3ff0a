import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../test/helpers/app.ts';

const root = path.resolve(import.meta.dirname, '../..');
/**
 * Sections whose blocks start a server, run the whole suite or need a real source host: read, not
 * run, by this test (the source-host flow runs against fakes in src/platform/sourcehost/).
 */
const NOT_RUN = ['Start here', 'Demo', 'Development', 'Scanning on every push'];

let url: string;
let work: string;
let readme: string;

/** The ```sh blocks of the README by section (## heading). */
function shellBlocks(text: string): Array<{ section: string; code: string }> {
  const blocks: Array<{ section: string; code: string }> = [];
  let section = '';
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('## ')) section = line.slice(3).trim();
    if (line.trim() === '```sh') {
      const code: string[] = [];
      for (i++; i < lines.length && lines[i]!.trim() !== '```'; i++) code.push(lines[i]!);
      blocks.push({ section, code: code.join('\n') });
    }
  }
  return blocks;
}

const t = sharedTestApp({ worker: true });
beforeAll(async () => {
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  readme = await readFile(path.join(root, 'README.md'), 'utf8');
  // A checkout-like folder: `npx vigil` finds the command in node_modules/.bin, examples/ beside it.
  work = await mkdtemp(path.join(os.tmpdir(), 'vigil-readme-'));
  await mkdir(path.join(work, 'node_modules', '.bin'), { recursive: true });
  await symlink(path.join(root, 'bin', 'vigil.js'), path.join(work, 'node_modules', '.bin', 'vigil'));
  await symlink(path.join(root, 'examples'), path.join(work, 'examples'));
  await writeFile(path.join(work, 'package.json'), '{"name":"readme-check","private":true}\n');
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('README', () => {
  it('runs the command-line and CI blocks as written against a fresh server', async () => {
    const blocks = shellBlocks(readme);
    expect([...new Set(blocks.map((b) => b.section))].sort()).toEqual(
      [...NOT_RUN, 'First steps with the command line', 'Scanning in CI'].sort(),
    );
    const script = blocks
      .filter((b) => !NOT_RUN.includes(b.section))
      .map((b) => b.code)
      .join('\n');
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        'bash',
        ['-euo', 'pipefail', '-c', script],
        {
          cwd: work,
          env: {
            PATH: process.env.PATH ?? '',
            HOME: work,
            VIGIL_URL: url,
            VIGIL_TOKEN: t.adminToken,
            VIGIL_CONFIG_DIR: path.join(work, 'config'),
            npm_config_offline: 'true',
            npm_config_update_notifier: 'false',
          },
          timeout: 300_000,
        },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('acme-labs');
    expect(result.stdout).toMatch(/purchased 20, used 0/);
    expect(result.stdout).toMatch(/exit 1: findings at or above High/);
    expect((await stat(path.join(work, 'config', 'config.json'))).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(path.join(work, 'vigil.sarif'), 'utf8')).version).toBe('2.1.0');
    expect(result.stderr).not.toMatch(/^\s+at /m);
  }, 400_000);

  it('uses a company handle of its own (the Demo takes acme)', () => {
    const handles = [...readme.matchAll(/--handle (\S+)/g)].map((m) => m[1]);
    expect(handles).not.toContain('acme');
  });

  it('lists every top-level command of `vigil --help` in its command table, each command once', async () => {
    const help = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [path.join(root, 'bin', 'vigil.js'), '--help'], (error, stdout) =>
        error ? reject(error) : resolve(stdout),
      ),
    );
    const listed = help.slice(help.indexOf('Commands:'));
    const commands = [...listed.matchAll(/^ {2}([a-z][\w-]*)/gm)]
      .map((m) => m[1]!)
      .filter((c) => c !== 'help');
    expect(commands).toContain('start');
    // A row names its command by the words before the first argument, option or choice.
    const rows = [...readme.matchAll(/^\| `vigil ([^`]+)` \|/gm)].map((m) => {
      const words = m[1]!.split(' ');
      const firstArgument = words.findIndex((w) => !/^[a-z][\w-]*$/.test(w));
      return words.slice(0, firstArgument === -1 ? words.length : firstArgument).join(' ');
    });
    const duplicates = rows.filter((r, i) => rows.indexOf(r) !== i);
    expect(duplicates, 'commands listed twice in the README table').toEqual([]);
    const tops = new Set(rows.map((r) => r.split(' ')[0]));
    expect(
      commands.filter((c) => !tops.has(c)),
      'commands missing from the README table',
    ).toEqual([]);
  });

  it('has no table row outside a table', () => {
    const lines = readme.split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i]!.startsWith('|') || lines[i - 1]?.startsWith('|')) continue;
      // The first line of a table: a header, then the separator row.
      expect(lines[i + 1], `line ${i + 1}: ${lines[i]}`).toMatch(/^\|(-+\|)+$/);
    }
  });
});
