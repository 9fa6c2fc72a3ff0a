import { execFile } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rename, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const exec = promisify(execFile);
let checkout: string;

/** `vigil <args>` of the copy; exit code, stdout and stderr (a failure is returned, not thrown). */
async function vigil(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return exec(process.execPath, [path.join(checkout, 'bin/vigil.js'), ...args], { cwd: checkout }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      stdout: e.stdout,
      stderr: e.stderr,
    }),
  );
}

async function currentBuild(): Promise<string> {
  return (
    JSON.parse(await readFile(path.join(checkout, 'dist/server/build.json'), 'utf8')) as { dir: string }
  ).dir;
}

const mainTs = () => path.join(checkout, 'src/main.ts');

// A copy of the checkout (sources, build script, binary; node_modules linked) that the tests may
// edit and build without touching the real one.
beforeAll(async () => {
  checkout = await mkdtemp(path.join(os.tmpdir(), 'vigil-build-'));
  for (const part of ['src', 'scripts', 'bin', 'examples', 'package.json'])
    await cp(path.join(root, part), path.join(checkout, part), { recursive: true });
  await symlink(path.join(root, 'node_modules'), path.join(checkout, 'node_modules'));
  await exec(process.execPath, [path.join(checkout, 'scripts/build.mjs')], { cwd: checkout });
}, 120_000);

afterAll(async () => {
  if (checkout) await rm(checkout, { recursive: true, force: true });
});

describe('the compiled build (dist/server)', () => {
  it('runs the current build as it is, also after a copy that lost modification times', async () => {
    const before = await currentBuild();
    const future = new Date(Date.now() + 60_000);
    await utimes(mainTs(), future, future);
    const help = await vigil('--help');
    expect(help).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('Vigil security review platform server'),
    });
    expect(await currentBuild()).toBe(before);
    expect((await readdir(path.join(checkout, 'dist/server'))).filter((f) => f.startsWith('build-'))).toEqual(
      [before],
    );
  }, 60_000);

  it('rebuilds before running when a source changed, so what runs is what src/ says', async () => {
    const before = await currentBuild();
    const source = await readFile(mainTs(), 'utf8');
    await writeFile(mainTs(), source.replace('Vigil security review platform server', 'Vigil, edited'));
    const help = await vigil('--help');
    expect(help).toMatchObject({ code: 0, stdout: expect.stringContaining('Vigil, edited') });
    expect(await currentBuild()).not.toBe(before);
    // The build it replaced stays for processes started from it.
    expect(await readdir(path.join(checkout, 'dist/server'))).toContain(before);
    await writeFile(mainTs(), source);
  }, 60_000);

  it('refuses sources that do not compile with the compiler messages, and exits 1', async () => {
    const source = await readFile(mainTs(), 'utf8');
    await writeFile(mainTs(), `${source}\nexport const broken = ;\n`);
    const run = await vigil('--help');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('src/main.ts');
    expect(run.stderr).toContain('vigil: src/ does not compile');
    await writeFile(mainTs(), source);
  }, 60_000);

  it('runs the sources through tsx when dist/ cannot be written, saying so', async () => {
    const source = await readFile(mainTs(), 'utf8');
    await writeFile(mainTs(), source.replace('Vigil security review platform server', 'Vigil, unwritable'));
    // A file where the build folder should be: nothing can be written under it (also as root).
    const server = path.join(checkout, 'dist/server');
    await rename(server, `${server}.aside`);
    await writeFile(server, '');
    try {
      const run = await vigil('--help');
      expect(run).toMatchObject({ code: 0, stdout: expect.stringContaining('Vigil, unwritable') });
      expect(run.stderr).toContain('cannot build dist/server');
      expect(run.stderr).toContain('running the sources through tsx');
    } finally {
      await rm(server);
      await rename(`${server}.aside`, server);
      await writeFile(mainTs(), source);
    }
  }, 60_000);
});
