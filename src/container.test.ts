import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';
import { resolveSecretKey } from './container.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('resolveSecretKey on the embedded default', () => {
  it('gives every concurrent caller the same complete key and leaves only secret.key behind', async () => {
    for (let round = 0; round < 50; round += 1) {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'vigil-key-'));
      dirs.push(dir);
      // A data folder not made yet, as on a first start: every caller finds no key.
      const config = loadConfig({ VIGIL_DATA_DIR: path.join(dir, 'data') });
      // Callers start a few event-loop turns apart, as processes starting together do, so that some
      // read while another is creating the file.
      const keys = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          for (let turn = 0; turn < i % 5; turn += 1) await new Promise((r) => setImmediate(r));
          return resolveSecretKey(config);
        }),
      );
      const distinct = new Set(keys.map((k) => k.toString('hex')));
      expect(distinct.size).toBe(1);
      expect(keys[0]!.length).toBe(32);
      const file = path.join(dir, 'data', 'secret.key');
      expect((await readFile(file, 'utf8')).trim()).toBe([...distinct][0]);
      expect(await readdir(path.join(dir, 'data'))).toEqual(['secret.key']);
    }
  });

  it('requires VIGIL_SECRET_KEY with DATABASE_URL', async () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://127.0.0.1:1/x' });
    await expect(resolveSecretKey(config)).rejects.toThrow(/VIGIL_SECRET_KEY is required/);
  });
});
