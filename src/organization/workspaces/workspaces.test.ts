import { describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import { buildCompany } from '../../../test/helpers/factories.ts';
import { isAppError } from '../../errors.ts';
import {
  createLinked,
  findOrCreateForUpload,
  getWorkspace,
  listActiveLinked,
  normalizePrefix,
  parseRepository,
} from './workspaces.service.ts';

const t = sharedTestApp();

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isAppError(err) ? err.code : 'OTHER';
  }
  return undefined;
}

describe('normalizePrefix', () => {
  it('normalizes to a POSIX path without leading or trailing slashes', () => {
    expect(normalizePrefix(undefined)).toBe('');
    expect(normalizePrefix('/')).toBe('');
    expect(normalizePrefix('./')).toBe('');
    expect(normalizePrefix('/src//contracts/')).toBe('src/contracts');
    expect(normalizePrefix('a/./b')).toBe('a/b');
  });

  it('refuses paths that leave the tree', () => {
    expect(codeOf(() => normalizePrefix('../x'))).toBe('VALIDATION_FAILED');
    expect(codeOf(() => normalizePrefix('a/../../b'))).toBe('VALIDATION_FAILED');
    expect(codeOf(() => normalizePrefix('a\\b'))).toBe('VALIDATION_FAILED');
    expect(codeOf(() => normalizePrefix('C:/x'))).toBe('VALIDATION_FAILED');
  });
});

describe('parseRepository', () => {
  it('accepts owner/name only', () => {
    expect(parseRepository('acme/vault').fullName).toBe('acme/vault');
    expect(parseRepository('acme/vault.git').fullName).toBe('acme/vault');
    for (const bad of ['https://gitlab.com/a/b', 'a/b/c', 'gitlab:a/b', 'acme', '/a', 'a/', '../b']) {
      expect(
        codeOf(() => parseRepository(bad)),
        bad,
      ).toBe('UNSUPPORTED_REPOSITORY_TYPE');
    }
  });
});

describe('workspaces service', () => {
  it('reuses an active workspace with the same name and prefix, else creates one', async () => {
    const company = await buildCompany(t);
    const { database } = t.container;
    const a = await database.transaction((tx) =>
      findOrCreateForUpload(tx, company.id, { workspace: { name: 'app', prefix: '/contracts/' } }),
    );
    const b = await database.transaction((tx) =>
      findOrCreateForUpload(tx, company.id, { workspace: { name: 'app', prefix: 'contracts' } }),
    );
    const c = await database.transaction((tx) =>
      findOrCreateForUpload(tx, company.id, { workspace: { name: 'app' } }),
    );
    expect(b.id).toBe(a.id);
    expect(a.prefix).toBe('contracts');
    expect(c.id).not.toBe(a.id);
    const byId = await database.transaction((tx) =>
      findOrCreateForUpload(tx, company.id, { workspaceId: a.id }),
    );
    expect(byId.id).toBe(a.id);
  });

  it('creates one workspace under concurrent requests for the same name', async () => {
    const company = await buildCompany(t);
    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        t.container.database.transaction((tx) =>
          findOrCreateForUpload(tx, company.id, { workspace: { name: 'same', prefix: 'p' } }),
        ),
      ),
    );
    expect(new Set(results.map((w) => w.id)).size).toBe(1);
  });

  it("answers NOT_FOUND for another organization's workspace", async () => {
    const owner = await buildCompany(t);
    const other = await buildCompany(t);
    const { database } = t.container;
    const ws = await database.transaction((tx) =>
      findOrCreateForUpload(tx, owner.id, { workspace: { name: 'x' } }),
    );
    await expect(getWorkspace(database.db, other.id, ws.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(
      database.transaction((tx) => findOrCreateForUpload(tx, other.id, { workspaceId: ws.id })),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await getWorkspace(database.db, owner.id, ws.id)).name).toBe('x');
  });

  it('creates linked workspaces once per repository and prefix and lists them', async () => {
    const company = await buildCompany(t);
    const { database } = t.container;
    const [one, two] = await Promise.all([
      database.transaction((tx) =>
        createLinked(tx, company.id, { repository: 'acme/vault', prefix: 'core' }),
      ),
      database.transaction((tx) =>
        createLinked(tx, company.id, { repository: 'acme/vault', prefix: '/core/' }),
      ),
    ]);
    expect(one.id).toBe(two.id);
    expect(one.name).toBe('acme/vault:core');
    const root = await database.transaction((tx) =>
      createLinked(tx, company.id, { repository: 'acme/vault' }),
    );
    expect(root.name).toBe('acme/vault');
    expect(await listActiveLinked(database.db, company.id, 'acme/vault')).toHaveLength(2);
    expect(await listActiveLinked(database.db, company.id, 'acme/vault', 'core')).toEqual([
      { id: one.id, prefix: 'core', name: 'acme/vault:core' },
    ]);
    expect(await listActiveLinked(database.db, (await buildCompany(t)).id, 'acme/vault')).toEqual([]);
  });
});
