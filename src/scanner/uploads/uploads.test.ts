import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  buildManyEntriesTarGz,
  buildTar,
  buildTarGz,
  corruptHeaderChecksum,
  createGzipBomb,
  hostileEntryCases,
} from '../../../test/fixtures/archives.ts';
import { createTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { itEnforcesServiceAuth } from '../../../test/helpers/auth-cases.ts';
import { buildCompany, buildServiceKey } from '../../../test/helpers/factories.ts';
import {
  completeUpload,
  createUploadSessions,
  putUpload,
  sha256Hex,
  type TestUploadSession,
} from '../../../test/helpers/upload-helpers.ts';
import { archives, sourceUploads } from '../../db/schema/index.ts';

interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;

const MAX_UPLOAD_BYTES = 8 * 1024 * 1024;
const GOOD_ENTRIES = [
  { name: 'src/', type: 'directory' as const },
  { name: 'src/Vault.sol', content: 'contract Vault { function f() external {} }\n' },
  { name: 'src/Token.sol', content: 'contract Token {}\n' },
  { name: 'README.md', content: '# demo\n' },
];

/** Two archives of exactly the same length with different content (stored, not compressed). */
function sameLengthPair(): [Buffer, Buffer] {
  const a = gzipSync(buildTar([{ name: 'a.sol', content: 'A'.repeat(64) }]), { level: 0 });
  const b = gzipSync(buildTar([{ name: 'a.sol', content: 'B'.repeat(64) }]), { level: 0 });
  return [a, b];
}

function streamToBuffer(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/**
 * The whole upload flow, run once per object store: the embedded file system store (its own
 * signed `/uploads/…` route) and the S3 store (presigned PUT URLs) against s3rver.
 */
function describeUploadFlow(flavour: 'fs' | 's3', storeUrl: () => Promise<string | undefined>) {
  describe(`source uploads (${flavour} store)`, () => {
    let t: TestApp;
    let companyId: string;
    let key: string;

    beforeAll(async () => {
      const url = await storeUrl();
      t = await createTestApp({
        env: {
          VIGIL_UPLOAD_MAX_BYTES: String(MAX_UPLOAD_BYTES),
          VIGIL_OUTBOUND_ALLOW: '127.0.0.1/32',
          ...(url ? { VIGIL_OBJECT_STORE: url } : {}),
        },
      });
      companyId = (await buildCompany(t)).id;
      key = (await buildServiceKey(t, { companyId, scopes: ['scans:create'] })).key;
    }, 60_000);
    afterAll(async () => {
      await t?.close();
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    async function openSession(
      sizeBytes: number,
      extra: Record<string, unknown> = {},
    ): Promise<TestUploadSession> {
      const created = await createUploadSessions(t, key, {
        workspace: { name: `ws-${flavour}`, prefix: 'contracts' },
        archives: [{ filename: 'src.tar.gz', sizeBytes }],
        ...extra,
      });
      expect(created.statusCode, JSON.stringify(created.body)).toBe(200);
      return created.body.uploads[0]!;
    }

    async function uploadRow(uploadId: string) {
      const [row] = await t.container.database.db
        .select()
        .from(sourceUploads)
        .where(eq(sourceUploads.id, uploadId));
      return row!;
    }

    async function expectRejected(archive: Buffer, code: string, sha256?: string) {
      const session = await openSession(archive.length);
      expect((await putUpload(t, session, archive)).statusCode).toBe(200);
      const res = await completeUpload(t, key, session.uploadId, sha256 ? { sha256 } : {});
      expect(res.statusCode, JSON.stringify(res.body)).toBe(400);
      expect(res.body.code).toBe(code);
      // Nothing half-made: no archive, the object is gone, the session takes a new PUT.
      const rows = await t.container.database.db
        .select()
        .from(archives)
        .where(eq(archives.uploadId, session.uploadId));
      expect(rows).toHaveLength(0);
      const row = await uploadRow(session.uploadId);
      expect(row.status).toBe('pending');
      expect(await t.container.objectStore.head(row.objectKey)).toBeNull();
      return res.body;
    }

    it('creates a workspace and sessions, takes the PUT and completes with the verified archive', async () => {
      const archive = buildTarGz(GOOD_ENTRIES);
      const created = await createUploadSessions(t, key, {
        workspace: { name: 'happy', prefix: '/contracts/' },
        archives: [
          { filename: 'a.tar.gz', sizeBytes: archive.length },
          { filename: 'b.tar.gz', sizeBytes: 1000 },
        ],
      });
      expect(created.statusCode).toBe(200);
      expect(created.body.uploads).toHaveLength(2);
      const session = created.body.uploads[0]!;
      expect(session).toMatchObject({ method: 'PUT', maxBytes: archive.length, filename: 'a.tar.gz' });
      expect(Date.parse(session.expiresAt)).toBeGreaterThan(Date.now());
      // No public URL configured: the upload URL points at the address the request came to.
      if (flavour === 'fs')
        expect(session.uploadUrl).toMatch(
          new RegExp(`^http://localhost(:80)?/uploads/${session.uploadId}\\?`),
        );
      else expect(session.uploadUrl).toContain('X-Amz-Signature=');

      const again = await createUploadSessions(t, key, {
        workspace: { name: 'happy', prefix: 'contracts' },
        archives: [{ filename: 'c.tar.gz', sizeBytes: 10 }],
      });
      expect(again.body.workspaceId).toBe(created.body.workspaceId);
      const byId = await createUploadSessions(t, key, {
        workspaceId: created.body.workspaceId,
        archives: [{ filename: 'd.tar.gz', sizeBytes: 10 }],
      });
      expect(byId.body.workspaceId).toBe(created.body.workspaceId);

      expect((await putUpload(t, session, archive)).statusCode).toBe(200);
      const done = await completeUpload(t, key, session.uploadId, {
        sha256: sha256Hex(archive).toUpperCase(),
      });
      expect(done.statusCode, JSON.stringify(done.body)).toBe(200);
      expect(done.body).toMatchObject({
        uploadId: session.uploadId,
        workspaceId: created.body.workspaceId,
        sha256: sha256Hex(archive),
        sizeBytes: archive.length,
        fileCount: 3,
      });
      expect(done.body.expandedBytes).toBeGreaterThan(archive.length);
      const [row] = await t.container.database.db
        .select()
        .from(archives)
        .where(eq(archives.id, done.body.archiveId));
      expect(sha256Hex(await streamToBuffer(await t.container.objectStore.getStream(row!.objectKey)))).toBe(
        sha256Hex(archive),
      );
      expect(await t.container.objectStore.head((await uploadRow(session.uploadId)).objectKey)).toBeNull();
    });

    it('returns the same archive for a repeated completion and one archive for concurrent completions', async () => {
      const archive = buildTarGz(GOOD_ENTRIES);
      const session = await openSession(archive.length);
      expect((await putUpload(t, session, archive)).statusCode).toBe(200);
      const results = await Promise.all([1, 2, 3].map(() => completeUpload(t, key, session.uploadId)));
      for (const res of results) expect(res.statusCode, JSON.stringify(res.body)).toBe(200);
      expect(new Set(results.map((r) => r.body.archiveId)).size).toBe(1);
      const repeat = await completeUpload(t, key, session.uploadId, { sha256: sha256Hex(archive) });
      expect(repeat.body.archiveId).toBe(results[0]!.body.archiveId);
      const rows = await t.container.database.db
        .select()
        .from(archives)
        .where(eq(archives.uploadId, session.uploadId));
      expect(rows).toHaveLength(1);
      const wrong = await completeUpload(t, key, session.uploadId, { sha256: 'a'.repeat(64) });
      expect(wrong.statusCode).toBe(400);
      expect(wrong.body.code).toBe('CHECKSUM_MISMATCH');
    });

    it('answers 409 UPLOAD_NOT_RECEIVED for a completion before any PUT', async () => {
      const session = await openSession(100);
      const res = await completeUpload(t, key, session.uploadId);
      expect(res.statusCode).toBe(409);
      expect(res.body.code).toBe('UPLOAD_NOT_RECEIVED');
    });

    it('completes without a request body', async () => {
      const archive = buildTarGz(GOOD_ENTRIES);
      const session = await openSession(archive.length);
      expect((await putUpload(t, session, archive)).statusCode).toBe(200);
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/scanner/v1/source-uploads/${session.uploadId}/complete`,
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ sha256: sha256Hex(archive) });
    });

    it('lets a second PUT replace the first until completion, and never changes a completed archive', async () => {
      const [first, second] = sameLengthPair();
      const session = await openSession(first.length);
      expect((await putUpload(t, session, first)).statusCode).toBe(200);
      expect((await putUpload(t, session, second)).statusCode).toBe(200);
      const done = await completeUpload(t, key, session.uploadId);
      expect(done.body.sha256).toBe(sha256Hex(second));

      const late = await putUpload(t, session, first);
      if (flavour === 'fs') {
        expect(late.statusCode).toBe(409);
        expect(JSON.parse(late.body).code).toBe('CONFLICT');
      }
      // A presigned S3 URL cannot be revoked: the late body lands on the upload key, never on
      // the archive, which is a verified copy of its own.
      const again = await completeUpload(t, key, session.uploadId);
      expect(again.body).toMatchObject({ archiveId: done.body.archiveId, sha256: sha256Hex(second) });
      const [row] = await t.container.database.db
        .select()
        .from(archives)
        .where(eq(archives.id, done.body.archiveId));
      expect(sha256Hex(await streamToBuffer(await t.container.objectStore.getStream(row!.objectKey)))).toBe(
        sha256Hex(second),
      );
    });

    describe('refuses hostile archives with a specific 400 and keeps nothing', () => {
      for (const hostile of hostileEntryCases()) {
        it(`${hostile.title} → ${hostile.code}`, async () => {
          const body = await expectRejected(buildTarGz(hostile.entries), hostile.code);
          expect(String(body.error)).toContain(hostile.entry);
        });
      }

      it('a truncated gzip → INVALID_ARCHIVE', async () => {
        const archive = buildTarGz(GOOD_ENTRIES);
        await expectRejected(archive.subarray(0, archive.length - 20), 'INVALID_ARCHIVE');
      });

      it('a file that is not gzip → INVALID_ARCHIVE', async () => {
        await expectRejected(Buffer.from('PK\u0003\u0004 this is a zip, not a tar.gz'), 'INVALID_ARCHIVE');
      });

      it('a bad tar header checksum → INVALID_ARCHIVE', async () => {
        await expectRejected(gzipSync(corruptHeaderChecksum(buildTar(GOOD_ENTRIES))), 'INVALID_ARCHIVE');
      });

      it('a wrong declared sha256 → CHECKSUM_MISMATCH', async () => {
        const body = await expectRejected(buildTarGz(GOOD_ENTRIES), 'CHECKSUM_MISMATCH', 'b'.repeat(64));
        expect(body.expected).toBe('b'.repeat(64));
      });

      it('a gzip bomb of zero blocks → ARCHIVE_EXPANSION_RATIO, stopped early', async () => {
        const bomb = createGzipBomb({ expandedMiB: 4096, layout: 'zero-blocks' });
        const archive = await streamToBuffer(bomb.stream);
        const body = await expectRejected(archive, 'ARCHIVE_EXPANSION_RATIO');
        // Stopped just past the ratio floor (64 MiB), far from the 4 GiB it expands to.
        expect(Number(body.expandedBytes)).toBeLessThan(128 * 1024 * 1024);
      });

      it('a bomb whose one file declares 4 GiB → ARCHIVE_TOO_LARGE from the header', async () => {
        const bomb = createGzipBomb({ expandedMiB: 4096, layout: 'one-file' });
        const body = await expectRejected(await streamToBuffer(bomb.stream), 'ARCHIVE_TOO_LARGE');
        expect(Number(body.expandedBytes)).toBeLessThan(1024 * 1024);
      });

      it('too many entries → ARCHIVE_TOO_MANY_ENTRIES, stopped at the limit', async () => {
        const body = await expectRejected(await buildManyEntriesTarGz(100_050), 'ARCHIVE_TOO_MANY_ENTRIES');
        expect(body.max).toBe(100_000);
      }, 30_000);

      it('accepts a corrected PUT to the same URL after a rejection', async () => {
        // Same length, so that it also fits a presigned URL bound to one exact length.
        const bad = gzipSync(buildTar([{ name: '../x', content: 'x' }]), { level: 0 });
        const good = gzipSync(buildTar([{ name: 'a/x', content: 'x' }]), { level: 0 });
        expect(good.length).toBe(bad.length);
        const session = await openSession(bad.length);
        expect((await putUpload(t, session, bad)).statusCode).toBe(200);
        expect((await completeUpload(t, key, session.uploadId)).body.code).toBe('UNSAFE_ARCHIVE_PATH');
        expect((await putUpload(t, session, good)).statusCode).toBe(200);
        const done = await completeUpload(t, key, session.uploadId);
        expect(done.statusCode).toBe(200);
        expect(done.body.sha256).toBe(sha256Hex(good));
      });
    });

    it('refuses a body over maxBytes with 413 and keeps nothing', async () => {
      const archive = buildTarGz(GOOD_ENTRIES);
      const session = await openSession(archive.length - 10);
      const row = await uploadRow(session.uploadId);
      if (flavour === 'fs') {
        const put = await putUpload(t, session, archive);
        expect(put.statusCode).toBe(413);
        expect(JSON.parse(put.body).code).toBe('UPLOAD_TOO_LARGE');
        expect(await t.container.objectStore.head(row.objectKey)).toBeNull();
        expect(row.status).toBe('pending');
      } else {
        // S3 refuses a body whose length differs from the signed one; s3rver does not check
        // signatures, so the size is enforced again at completion.
        const put = await fetch(session.uploadUrl, { method: 'PUT', body: archive });
        expect(put.status).toBe(200);
        const res = await completeUpload(t, key, session.uploadId);
        expect(res.statusCode).toBe(413);
        expect(res.body.code).toBe('UPLOAD_TOO_LARGE');
        expect(await t.container.objectStore.head(row.objectKey)).toBeNull();
      }
    });

    it('refuses a declared size above the configured limit, and more than 20 archives', async () => {
      const tooBig = await createUploadSessions(t, key, {
        workspace: { name: 'big' },
        archives: [{ filename: 'a.tar.gz', sizeBytes: MAX_UPLOAD_BYTES + 1 }],
      });
      expect(tooBig.statusCode).toBe(400);
      expect(tooBig.body.code).toBe('VALIDATION_FAILED');
      const tooMany = await createUploadSessions(t, key, {
        workspace: { name: 'many' },
        archives: Array.from({ length: 21 }, (_, i) => ({ filename: `${i}.tar.gz`, sizeBytes: 10 })),
      });
      expect(tooMany.statusCode).toBe(400);
      const both = await createUploadSessions(t, key, {
        workspace: { name: 'x' },
        workspaceId: '00000000-0000-4000-8000-000000000000',
        archives: [{ filename: 'a', sizeBytes: 1 }],
      });
      expect(both.statusCode).toBe(400);
      const badPrefix = await createUploadSessions(t, key, {
        workspace: { name: 'x', prefix: '../up' },
        archives: [{ filename: 'a', sizeBytes: 1 }],
      });
      expect(badPrefix.statusCode).toBe(400);
    });

    it('answers 403 for a forged upload URL', async () => {
      const archive = buildTarGz(GOOD_ENTRIES);
      const session = await openSession(archive.length);
      const url = new URL(session.uploadUrl);
      if (flavour === 'fs') {
        url.searchParams.set('maxBytes', String(session.maxBytes * 2));
        const res = await putUpload(t, { ...session, uploadUrl: url.toString() }, archive);
        expect(res.statusCode).toBe(403);
        expect(JSON.parse(res.body)).toMatchObject({ code: 'UPLOAD_URL_INVALID', reason: 'forged' });
        const other = new URL(session.uploadUrl);
        other.searchParams.set('signature', 'A'.repeat(43));
        expect((await putUpload(t, { ...session, uploadUrl: other.toString() }, archive)).statusCode).toBe(
          403,
        );
      } else {
        // s3rver checks the access key and the expiry, not v4 signatures: forge the credential.
        url.searchParams.set(
          'X-Amz-Credential',
          (url.searchParams.get('X-Amz-Credential') ?? '').replace(/^[^/]+/, 'FORGED'),
        );
        expect((await putUpload(t, { ...session, uploadUrl: url.toString() }, archive)).statusCode).toBe(403);
      }
      expect(await t.container.objectStore.head((await uploadRow(session.uploadId)).objectKey)).toBeNull();
    });

    it('answers 403 for an expired upload URL and 410 UPLOAD_EXPIRED for a late completion', async () => {
      const archive = buildTarGz(GOOD_ENTRIES);
      const session = await openSession(archive.length);
      vi.useFakeTimers({ toFake: ['Date'], now: Date.parse(session.expiresAt) + 1000 });
      const put = await putUpload(t, session, archive);
      expect(put.statusCode).toBe(403);
      if (flavour === 'fs')
        expect(JSON.parse(put.body)).toMatchObject({ code: 'UPLOAD_URL_INVALID', reason: 'expired' });
      const res = await completeUpload(t, key, session.uploadId);
      expect(res.statusCode).toBe(410);
      expect(res.body.code).toBe('UPLOAD_EXPIRED');
    });

    it("answers 404 for another organization's upload and workspace", async () => {
      const archive = buildTarGz(GOOD_ENTRIES);
      const created = await createUploadSessions(t, key, {
        workspace: { name: 'mine' },
        archives: [{ filename: 'a.tar.gz', sizeBytes: archive.length }],
      });
      const session = created.body.uploads[0]!;
      expect((await putUpload(t, session, archive)).statusCode).toBe(200);
      const intruder = await buildCompany(t);
      const intruderKey = (await buildServiceKey(t, { companyId: intruder.id, scopes: ['scans:create'] }))
        .key;
      const complete = await completeUpload(t, intruderKey, session.uploadId);
      expect(complete.statusCode).toBe(404);
      const sessions = await createUploadSessions(t, intruderKey, {
        workspaceId: created.body.workspaceId,
        archives: [{ filename: 'a.tar.gz', sizeBytes: 10 }],
      });
      expect(sessions.statusCode).toBe(404);
      expect(sessions.body.code).toBe('NOT_FOUND');
      expect((await completeUpload(t, key, session.uploadId)).statusCode).toBe(200);
    });

    if (flavour === 'fs') {
      it('takes gzip, x-gzip, octet-stream and no content type; refuses others with 415', async () => {
        const archive = buildTarGz(GOOD_ENTRIES);
        for (const type of [
          'application/gzip',
          'application/x-gzip',
          'application/octet-stream',
          undefined,
        ]) {
          const session = await openSession(archive.length);
          const url = new URL(session.uploadUrl);
          const res = await t.app.inject({
            method: 'PUT',
            url: `${url.pathname}${url.search}`,
            headers: type ? { 'content-type': type } : {},
            payload: archive,
          });
          expect(res.statusCode, `${type}: ${res.body}`).toBe(200);
        }
        const session = await openSession(archive.length);
        const res = await putUpload(t, session, archive, { 'content-type': 'application/json' });
        expect(res.statusCode).toBe(415);
      });

      it('streams a real HTTP PUT and answers 413 to an oversized streamed body', async () => {
        await t.app.listen({ port: 0, host: '127.0.0.1' });
        const address = t.app.server.address();
        const port = typeof address === 'object' && address ? address.port : 0;
        const archive = buildTarGz(GOOD_ENTRIES);
        const session = await openSession(archive.length);
        const local = new URL(session.uploadUrl);
        const target = `http://127.0.0.1:${port}${local.pathname}${local.search}`;
        const ok = await fetch(target, {
          method: 'PUT',
          headers: { 'content-type': 'application/gzip' },
          body: new ReadableStream({
            start(controller) {
              controller.enqueue(archive.subarray(0, 10));
              controller.enqueue(archive.subarray(10));
              controller.close();
            },
          }),
          duplex: 'half',
        } as RequestInit);
        expect(ok.status).toBe(200);
        expect(await ok.json()).toMatchObject({ sizeBytes: archive.length, status: 'received' });

        // Several megabytes in 64 KiB chunks: a store that loses backpressure or its file handle
        // shows up here, not with a few hundred bytes.
        const large = gzipSync(
          buildTar([{ name: 'big.sol', content: randomBytes(6 * 1024 * 1024).toString('hex') }]),
          {
            level: 1,
          },
        );
        const largeSession = await openSession(large.length);
        const largeUrl = new URL(largeSession.uploadUrl);
        let offset = 0;
        const streamed = await fetch(`http://127.0.0.1:${port}${largeUrl.pathname}${largeUrl.search}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/gzip' },
          body: new ReadableStream({
            pull(controller) {
              if (offset >= large.length) return controller.close();
              controller.enqueue(large.subarray(offset, offset + 64 * 1024));
              offset += 64 * 1024;
            },
          }),
          duplex: 'half',
          signal: AbortSignal.timeout(20_000),
        } as RequestInit);
        expect(streamed.status).toBe(200);
        expect((await completeUpload(t, key, largeSession.uploadId)).body.sha256).toBe(sha256Hex(large));

        const big = await openSession(1024);
        const bigUrl = new URL(big.uploadUrl);
        let sent = 0;
        const tooLarge = await fetch(`http://127.0.0.1:${port}${bigUrl.pathname}${bigUrl.search}`, {
          method: 'PUT',
          body: new ReadableStream({
            pull(controller) {
              if (sent >= 4 * 1024 * 1024) return controller.close();
              sent += 64 * 1024;
              controller.enqueue(new Uint8Array(64 * 1024));
            },
          }),
          duplex: 'half',
        } as RequestInit).catch((err: unknown) => err);
        if (tooLarge instanceof Response) expect(tooLarge.status).toBe(413);
        expect(await t.container.objectStore.head((await uploadRow(big.uploadId)).objectKey)).toBeNull();
      });

      describe('createSourceUploads auth', () => {
        itEnforcesServiceAuth(() => t, {
          method: 'POST',
          scope: 'scans:create',
          crossTenant: false,
          request: async () => ({
            url: '/api/scanner/v1/source-uploads',
            payload: { workspace: { name: 'auth' }, archives: [{ filename: 'a.tar.gz', sizeBytes: 10 }] },
          }),
        });
      });

      describe('completeSourceUpload auth', () => {
        itEnforcesServiceAuth(() => t, {
          method: 'POST',
          scope: 'scans:create',
          request: async (app, owner) => {
            const ownerKey = (await buildServiceKey(app, { companyId: owner, scopes: ['scans:create'] })).key;
            const created = await createUploadSessions(app, ownerKey, {
              workspace: { name: 'auth' },
              archives: [{ filename: 'a.tar.gz', sizeBytes: 10 }],
            });
            return {
              url: `/api/scanner/v1/source-uploads/${created.body.uploads[0]!.uploadId}/complete`,
              payload: {},
            };
          },
        });
      });
    }
  });
}

describeUploadFlow('fs', async () => undefined);

let s3rver: S3rverInstance | undefined;
let s3rverDir: string | undefined;
describeUploadFlow('s3', async () => {
  s3rverDir = await mkdtemp(join(tmpdir(), 'vigil-s3rver-'));
  s3rver = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: s3rverDir,
    configureBuckets: [{ name: 'vigil-uploads', configs: [] }],
  });
  const { port } = await s3rver.run();
  // Static credentials in the store URL: s3rver's default account.
  return `s3://S3RVER:S3RVER@vigil-uploads?endpoint=http://127.0.0.1:${port}&forcePathStyle=true&region=us-east-1`;
});
afterAll(async () => {
  await s3rver?.close();
  if (s3rverDir) await rm(s3rverDir, { recursive: true, force: true });
});

describe('upload URLs with VIGIL_PUBLIC_URL', () => {
  it('builds the embedded store’s upload URL on the public URL, and the route takes it', async () => {
    const t = await createTestApp({ env: { VIGIL_PUBLIC_URL: 'https://vigil.example.com' } });
    try {
      const company = await buildCompany(t);
      const key = (await buildServiceKey(t, { companyId: company.id, scopes: ['scans:create'] })).key;
      const archive = buildTarGz(GOOD_ENTRIES);
      const created = await createUploadSessions(t, key, {
        workspace: { name: 'public' },
        archives: [{ filename: 'a.tar.gz', sizeBytes: archive.length }],
      });
      const session = created.body.uploads[0]!;
      expect(session.uploadUrl.startsWith(`https://vigil.example.com/uploads/${session.uploadId}?`)).toBe(
        true,
      );
      expect((await putUpload(t, session, archive)).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
