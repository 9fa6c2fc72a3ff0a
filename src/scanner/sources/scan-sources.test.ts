import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGitServer, startFakeGitServer } from '../../../test/fakes/git-server.ts';
import { buildTarGz } from '../../../test/fixtures/archives.ts';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import { buildCompany, buildServiceKey } from '../../../test/helpers/factories.ts';
import { type TestCompletedUpload, uploadArchive } from '../../../test/helpers/upload-helpers.ts';
import type { SourceTree } from '../../engine/sources/tree.ts';
import { openScanSources, type ScanSourceInput, validateLocalSources } from './scan-sources.ts';

const TOKEN = 'sourcehost-token-123';
let git: FakeGitServer;
let commit: string;
let companyId: string;
let core: TestCompletedUpload;
let lib: TestCompletedUpload;

const t = sharedTestApp({ env: { VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32' } });
beforeAll(async () => {
  git = await startFakeGitServer({ token: TOKEN });
  ({ commit } = await git.createRepository('acme/vault', {
    'contracts/Vault.sol': 'contract Vault {}\n',
    'docs/README.md': '# docs\n',
  }));
  companyId = (await buildCompany(t)).id;
  const key = (await buildServiceKey(t, { companyId, scopes: ['scans:create'] })).key;
  core = await uploadArchive(
    t,
    key,
    buildTarGz([
      { name: 'contracts/A.sol', content: 'contract A {}' },
      { name: 'contracts/Shared.sol', content: 'first' },
      { name: 'README.md', content: 'outside the prefix' },
    ]),
  );
  lib = await uploadArchive(
    t,
    key,
    buildTarGz([
      { name: 'Shared.sol', content: 'second' },
      { name: 'B.sol', content: 'contract B {}' },
    ]),
  );
});
afterAll(async () => {
  await git?.close();
});

function deps() {
  return {
    database: t.container.database,
    objectStore: t.container.objectStore,
    integrations: t.container.services.integrations,
    outbound: t.container.outbound,
    log: pino({ level: 'silent' }),
  };
}

async function listing(tree: SourceTree): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  try {
    for (const entry of await tree.list()) out[entry.path] = (await tree.read(entry.path)).toString();
  } finally {
    await tree.close();
  }
  return out;
}

describe('openScanSources', () => {
  it('reads several archives, each at its mount path, limited to the prefix, later files winning', async () => {
    const sources: ScanSourceInput[] = [
      { kind: 'local', archiveId: core.archiveId, sha256: core.sha256 },
      { kind: 'local', archiveId: lib.archiveId, sha256: lib.sha256, path: '/contracts/' },
    ];
    const files = await listing(await openScanSources(deps(), { companyId, prefix: 'contracts', sources }));
    expect(files).toEqual({
      'contracts/A.sol': 'contract A {}',
      'contracts/B.sol': 'contract B {}',
      'contracts/Shared.sol': 'second',
    });
  });

  it("refuses another organization's archive, an unknown one and a different sha256 as ARCHIVE_NOT_FOUND", async () => {
    const other = (await buildCompany(t)).id;
    const { db } = t.container.database;
    await expect(
      validateLocalSources(db, other, [{ kind: 'local', archiveId: core.archiveId, sha256: core.sha256 }]),
    ).rejects.toMatchObject({ code: 'ARCHIVE_NOT_FOUND', status: 404 });
    await expect(
      validateLocalSources(db, companyId, [
        { kind: 'local', archiveId: core.archiveId, sha256: 'c'.repeat(64) },
      ]),
    ).rejects.toMatchObject({ code: 'ARCHIVE_NOT_FOUND' });
    await expect(
      validateLocalSources(db, companyId, [
        { kind: 'local', archiveId: '00000000-0000-4000-8000-000000000000', sha256: core.sha256 },
      ]),
    ).rejects.toMatchObject({ code: 'ARCHIVE_NOT_FOUND' });
    const ok = await validateLocalSources(db, companyId, [
      { kind: 'local', archiveId: lib.archiveId, sha256: lib.sha256.toUpperCase(), path: 'a/./b/' },
    ]);
    expect(ok).toEqual([
      expect.objectContaining({ archiveId: lib.archiveId, workspaceId: lib.workspaceId, mountPath: 'a/b' }),
    ]);
    await expect(
      validateLocalSources(db, companyId, [
        { kind: 'local', archiveId: lib.archiveId, sha256: lib.sha256, path: '../x' },
      ]),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it('refuses a mix of local and sourcehost sources and no sources', async () => {
    await expect(
      openScanSources(deps(), {
        companyId,
        prefix: '',
        sources: [
          { kind: 'local', archiveId: core.archiveId, sha256: core.sha256 },
          { kind: 'sourcehost', repository: 'acme/vault', commit },
        ],
      }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(openScanSources(deps(), { companyId, prefix: '', sources: [] })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
  });

  it('reads a sourcehost commit through the connected integration, and needs one', async () => {
    const company = (await buildCompany(t)).id;
    const source: ScanSourceInput = { kind: 'sourcehost', repository: 'acme/vault', commit };
    await expect(
      openScanSources(deps(), { companyId: company, prefix: '', sources: [source] }),
    ).rejects.toMatchObject({
      code: 'INTEGRATION_NOT_CONNECTED',
    });
    const res = await t.app.inject({
      method: 'PUT',
      url: `/api/v0/companies/${company}/integrations/sourcehost`,
      headers: { authorization: `Bearer ${t.adminToken}` },
      payload: { credentials: { token: TOKEN }, settings: { baseUrl: git.baseUrl } },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    const files = await listing(
      await openScanSources(deps(), { companyId: company, prefix: 'contracts', sources: [source] }),
    );
    expect(files).toEqual({ 'contracts/Vault.sol': 'contract Vault {}\n' });
    await expect(
      openScanSources(deps(), {
        companyId: company,
        prefix: '',
        sources: [{ kind: 'sourcehost', repository: 'acme/vault', commit: 'f'.repeat(40) }],
      }),
    ).rejects.toMatchObject({ code: 'SOURCEHOST_ERROR' });
  }, 30_000);
});
