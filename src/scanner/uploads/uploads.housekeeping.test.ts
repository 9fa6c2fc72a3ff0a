import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildTarGz } from '../../../test/fixtures/archives.ts';
import { sharedTestApp } from '../../../test/helpers/app.ts';
import { buildCompany, buildServiceKey } from '../../../test/helpers/factories.ts';
import {
  completeUpload,
  createUploadSessions,
  putUpload,
  uploadArchive,
} from '../../../test/helpers/upload-helpers.ts';
import { archives, scanArchives, scans, sourceUploads } from '../../db/schema/index.ts';
import { uploadsHousekeepingJob } from './uploads.jobs.ts';
import { ARCHIVE_RETENTION_MS, ORPHAN_GRACE_MS } from './uploads.service.ts';

let companyId: string;
let key: string;
const t = sharedTestApp();
beforeAll(async () => {
  companyId = (await buildCompany(t)).id;
  key = (await buildServiceKey(t, { companyId, scopes: ['scans:create'] })).key;
});

describe('upload housekeeping', () => {
  it('is scheduled every 5 minutes', () => {
    expect(uploadsHousekeepingJob.schedule).toBe('*/5 * * * *');
  });

  it('expires unfinished sessions past their expiry and removes their objects', async () => {
    const archive = buildTarGz([{ name: 'a.sol', content: 'contract A {}' }]);
    const created = await createUploadSessions(t, key, {
      workspace: { name: 'hk' },
      archives: [
        { filename: 'a.tar.gz', sizeBytes: archive.length },
        { filename: 'b.tar.gz', sizeBytes: archive.length },
      ],
    });
    const [received, untouched] = created.body.uploads;
    expect((await putUpload(t, received!, archive)).statusCode).toBe(200);
    const { db } = t.container.database;
    const [row] = await db.select().from(sourceUploads).where(eq(sourceUploads.id, received!.uploadId));
    expect(await t.container.objectStore.head(row!.objectKey)).not.toBeNull();

    const uploads = t.container.services.uploads;
    const early = await uploads.sweep();
    expect(early.expiredUploads).toBe(0);

    const later = new Date(Date.parse(received!.expiresAt) + 1000);
    const result = await uploads.sweep({ now: later });
    expect(result.expiredUploads).toBeGreaterThanOrEqual(2);
    const rows = await db
      .select()
      .from(sourceUploads)
      .where(eq(sourceUploads.workspaceId, created.body.workspaceId));
    expect(rows.map((r) => r.status)).toEqual(['expired', 'expired']);
    expect(await t.container.objectStore.head(row!.objectKey)).toBeNull();
    const late = await completeUpload(t, key, untouched!.uploadId);
    expect(late.statusCode).toBe(410);
    expect(late.body.code).toBe('UPLOAD_EXPIRED');
    // A second run finds nothing more to do.
    expect((await uploads.sweep({ now: later })).expiredUploads).toBe(0);
  });

  it('deletes archives no scan references after the retention and keeps referenced ones', async () => {
    const kept = await uploadArchive(t, key, buildTarGz([{ name: 'kept.sol', content: 'contract K {}' }]), {
      workspace: { name: 'retention' },
    });
    const dropped = await uploadArchive(
      t,
      key,
      buildTarGz([{ name: 'drop.sol', content: 'contract D {}' }]),
      {
        workspace: { name: 'retention' },
      },
    );
    const { db } = t.container.database;
    const [scan] = await db
      .insert(scans)
      .values({ companyId, workspaceId: kept.workspaceId, type: 'standard', sources: [], cost: 2 })
      .returning();
    await db.insert(scanArchives).values({ scanId: scan!.id, archiveId: kept.archiveId, position: 0 });
    const objectKeyOf = async (id: string) =>
      (await db.select().from(archives).where(eq(archives.id, id)))[0]?.objectKey;
    const droppedKey = (await objectKeyOf(dropped.archiveId))!;

    const uploads = t.container.services.uploads;
    expect((await uploads.sweep()).deletedArchives).toBe(0);
    const result = await uploads.sweep({ now: new Date(Date.now() + ARCHIVE_RETENTION_MS + 60_000) });
    expect(result.deletedArchives).toBeGreaterThanOrEqual(1);
    expect(await objectKeyOf(dropped.archiveId)).toBeUndefined();
    expect(await t.container.objectStore.head(droppedKey)).toBeNull();
    expect(await objectKeyOf(kept.archiveId)).toBeDefined();
    expect(await t.container.objectStore.head((await objectKeyOf(kept.archiveId))!)).not.toBeNull();
    const gone = await completeUpload(t, key, dropped.uploadId);
    expect(gone.statusCode).toBe(404);
  });

  it('removes objects no row names once past the grace period, and nothing a row names', async () => {
    const uploaded = await uploadArchive(t, key, buildTarGz([{ name: 'o.sol', content: 'contract O {}' }]), {
      workspace: { name: 'orphans' },
    });
    const { db } = t.container.database;
    const [row] = await db.select().from(archives).where(eq(archives.id, uploaded.archiveId));
    const store = t.container.objectStore;
    // What a completion killed after its copy, and an upload killed before its session, leave.
    const orphanArchive = `archives/${companyId}/${randomUUID()}.tar.gz`;
    const orphanUpload = `uploads/${companyId}/${randomUUID()}.tar.gz`;
    for (const k of [orphanArchive, orphanUpload])
      await store.putStream(k, Readable.from([Buffer.from('bytes')]), { maxBytes: 10 });

    const uploads = t.container.services.uploads;
    expect((await uploads.sweep()).deletedOrphans).toBe(0);
    expect(await store.head(orphanArchive)).not.toBeNull();

    const result = await uploads.sweep({ now: new Date(Date.now() + ORPHAN_GRACE_MS + 60_000) });
    expect(result.deletedOrphans).toBeGreaterThanOrEqual(2);
    expect(await store.head(orphanArchive)).toBeNull();
    expect(await store.head(orphanUpload)).toBeNull();
    expect(await store.head(row!.objectKey)).not.toBeNull();
  });
});
