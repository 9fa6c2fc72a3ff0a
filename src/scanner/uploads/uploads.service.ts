import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { CredentialThrottle } from '../../auth/credential-throttle.ts';
import type { SecretBox } from '../../auth/secret-box.ts';
import type { Database } from '../../db/client.ts';
import {
  type ArchiveLimits,
  type VerifiedArchive,
  verifyArchive,
} from '../../engine/sources/archive-verify.ts';
import { AppError, type ErrorCode, isAppError } from '../../errors.ts';
import type { ObjectStore } from '../../integrations/storage/object-store.ts';
import { signUploadUrl, verifyUploadSignature } from '../../integrations/storage/upload-signature.ts';
import { findOrCreateForUpload } from '../../organization/workspaces/workspaces.service.ts';
import { type ArchiveRow, uploadsRepo } from './uploads.repo.ts';
import type {
  CompletedSourceUpload,
  CompleteSourceUploadRequest,
  CreateSourceUploadsRequest,
  ReceivedUpload,
  SourceUploadSessions,
} from './uploads.schemas.ts';

/** Codes of a rejected archive: the session goes back to pending and its object is removed. */
const ARCHIVE_REJECTIONS: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'INVALID_ARCHIVE',
  'ARCHIVE_TOO_LARGE',
  'ARCHIVE_TOO_MANY_ENTRIES',
  'ARCHIVE_EXPANSION_RATIO',
  'UNSAFE_ARCHIVE_PATH',
  'UNSAFE_ARCHIVE_ENTRY',
  'CHECKSUM_MISMATCH',
  'UPLOAD_TOO_LARGE',
]);

/** Dependencies of {@link createUploadsService}. */
export interface UploadsServiceDeps {
  database: Database;
  objectStore: ObjectStore;
  /** The upload-URL signing key is derived from it, so every replica signs and checks alike. */
  secretBox: Pick<SecretBox, 'sign'>;
  log: Logger;
  /** Largest archive a session may declare (`config.uploads.maxBytes`). */
  maxBytes: number;
  /** How long an upload session stays open (`config.uploads.ttlMinutes`). */
  ttlMinutes: number;
  /** `config.publicUrl`; when null, upload URLs are built from the request's own address. */
  publicUrl: string | null;
  /** Forged upload signatures are throttled per address and per upload. */
  throttle: CredentialThrottle;
  /** Overrides of the archive verification limits (the compressed limit is the session's maxBytes). */
  archiveLimits?: Partial<ArchiveLimits>;
}

/**
 * Source uploads: sessions that each take one tar.gz through a signed URL (the embedded store's
 * own `/uploads/…` route, or a presigned S3 PUT), and completion, which verifies the stored
 * archive and turns it into an immutable archive a scan can name.
 *
 * Completion snapshots the upload under a key of its own and verifies the snapshot, so what a
 * scan reads is exactly what was verified, even if the upload URL is used again afterwards
 * (a presigned S3 URL cannot be revoked before it expires).
 */
export function createUploadsService(deps: UploadsServiceDeps) {
  const { database, objectStore, log } = deps;
  const uploadSecret = Buffer.from(deps.secretBox.sign('vigil:upload-url-key'), 'base64url');

  function toCompleted(row: ArchiveRow): CompletedSourceUpload {
    return {
      archiveId: row.id,
      uploadId: row.uploadId,
      workspaceId: row.workspaceId,
      sha256: row.sha256,
      sizeBytes: row.sizeBytes,
      fileCount: row.fileCount,
      expandedBytes: row.expandedBytes,
      createdAt: row.createdAt.toISOString(),
    };
  }

  function checkDeclaredSha(row: ArchiveRow, expected: string | undefined): void {
    if (expected !== undefined && expected.toLowerCase() !== row.sha256) {
      throw new AppError('CHECKSUM_MISMATCH', {
        message: `The archive sha256 is ${row.sha256}, not ${expected.toLowerCase()}.`,
        details: { expected: expected.toLowerCase(), actual: row.sha256 },
      });
    }
  }

  async function deleteQuietly(key: string): Promise<void> {
    // A leftover object is harmless (housekeeping removes it); failing the request for it is not.
    await objectStore.delete(key).catch((err: unknown) => log.warn({ err, key }, 'object delete failed'));
  }

  /**
   * Takes a snapshot of the upload under `archiveKey` (a copy inside the store: a hard link on
   * the file system, a server-side copy on S3), then verifies the snapshot in one streamed pass.
   * What a scan later reads is exactly what was verified, even if the upload URL is used again.
   * Nothing is left under `archiveKey` unless verification passed.
   */
  async function verifyAndCopy(
    uploadKey: string,
    archiveKey: string,
    maxBytes: number,
    expectedSha256: string | undefined,
  ): Promise<VerifiedArchive> {
    const copied = await objectStore.copy(uploadKey, archiveKey);
    try {
      // Replaced by a larger body between the size check and the copy.
      if (copied.sizeBytes > maxBytes) {
        throw new AppError('UPLOAD_TOO_LARGE', {
          message: `The upload is larger than ${maxBytes} bytes.`,
          details: { maxBytes, sizeBytes: copied.sizeBytes },
        });
      }
      return await verifyArchive(await objectStore.getStream(archiveKey), {
        limits: { ...deps.archiveLimits, maxCompressedBytes: maxBytes },
        ...(expectedSha256 === undefined ? {} : { expectedSha256 }),
      });
    } catch (err) {
      await deleteQuietly(archiveKey);
      throw err;
    }
  }

  return {
    /**
     * Creates (or reuses) the workspace and one upload session per declared archive. `requestBaseUrl`
     * is the address the request came to, used for the embedded store's upload URLs when no
     * public URL is configured.
     */
    async createSourceUploads(
      companyId: string,
      input: CreateSourceUploadsRequest,
      requestBaseUrl: string,
    ): Promise<SourceUploadSessions> {
      if ((input.workspaceId === undefined) === (input.workspace === undefined)) {
        throw new AppError('VALIDATION_FAILED', {
          message: 'Give exactly one of workspaceId and workspace.',
          details: { field: 'workspaceId' },
        });
      }
      for (const [i, archive] of input.archives.entries()) {
        if (archive.sizeBytes > deps.maxBytes) {
          throw new AppError('VALIDATION_FAILED', {
            message: `archives/${i}/sizeBytes must be at most ${deps.maxBytes} bytes.`,
            details: { field: `archives/${i}/sizeBytes`, maxBytes: deps.maxBytes },
          });
        }
      }
      // Whole seconds: the signed URL carries its expiry in seconds and must not outlive the session.
      const expiresAt = new Date(Math.floor((Date.now() + deps.ttlMinutes * 60_000) / 1000) * 1000);
      const { workspace, rows } = await database.transaction(async (tx) => {
        const workspace = await findOrCreateForUpload(
          tx,
          companyId,
          input.workspaceId !== undefined
            ? { workspaceId: input.workspaceId }
            : { workspace: input.workspace! },
        );
        const rows = await uploadsRepo(tx.db).insertUploads(
          input.archives.map((archive) => {
            const id = randomUUID();
            return {
              id,
              companyId,
              workspaceId: workspace.id,
              filename: archive.filename,
              declaredSizeBytes: archive.sizeBytes,
              maxBytes: archive.sizeBytes,
              objectKey: `uploads/${companyId}/${id}.tar.gz`,
              expiresAt,
            };
          }),
        );
        return { workspace, rows };
      });
      const baseUrl = deps.publicUrl ?? requestBaseUrl;
      const uploads = [];
      for (const row of rows) {
        const presigned = await objectStore.presignPut(row.objectKey, {
          expiresAt,
          maxBytes: row.maxBytes,
          contentLength: row.maxBytes,
        });
        const url =
          presigned?.url ??
          signUploadUrl({
            baseUrl,
            uploadId: row.id,
            expiresAt,
            maxBytes: row.maxBytes,
            secret: uploadSecret,
          }).url;
        uploads.push({
          uploadId: row.id,
          filename: row.filename,
          uploadUrl: url,
          method: 'PUT' as const,
          headers: presigned?.headers ?? { 'content-type': 'application/gzip' },
          expiresAt: expiresAt.toISOString(),
          maxBytes: row.maxBytes,
        });
      }
      return { workspaceId: workspace.id, uploads };
    },

    /**
     * Takes the body of a PUT to a signed upload URL of the embedded store. The signature is the
     * credential: forged or expired → UPLOAD_URL_INVALID; a completed session → CONFLICT; a body
     * longer than maxBytes → UPLOAD_TOO_LARGE with nothing kept. A later PUT replaces an
     * earlier one until completion.
     */
    async receiveUpload(
      uploadId: string,
      query: { expires?: string; maxBytes?: string; signature?: string },
      body: Readable,
      contentLength: number | undefined,
      address: string,
    ): Promise<ReceivedUpload> {
      const check = await deps.throttle.attempt(
        'upload-signature',
        { address, target: { id: uploadId } },
        async () => {
          const verified = verifyUploadSignature({
            uploadId,
            expires: query.expires,
            maxBytes: query.maxBytes,
            signature: query.signature,
            secret: uploadSecret,
          });
          if (!verified.ok)
            throw new AppError('UPLOAD_URL_INVALID', { details: { reason: verified.reason } });
          return verified;
        },
      );
      const repo = uploadsRepo(database.db);
      const upload = await repo.findUploadById(uploadId);
      if (!upload) throw new AppError('NOT_FOUND', { message: 'Upload not found.', details: { uploadId } });
      if (upload.status === 'completed') {
        throw new AppError('CONFLICT', { message: 'This upload is completed; create a new upload session.' });
      }
      if (upload.status === 'expired' || upload.expiresAt.getTime() <= Date.now()) {
        throw new AppError('UPLOAD_URL_INVALID', { details: { reason: 'expired' } });
      }
      const maxBytes = Math.min(check.maxBytes, upload.maxBytes);
      if (contentLength !== undefined && contentLength > maxBytes) {
        throw new AppError('UPLOAD_TOO_LARGE', {
          message: `The upload is larger than ${maxBytes} bytes.`,
          details: { maxBytes },
        });
      }
      const { sizeBytes } = await objectStore.putStream(upload.objectKey, body, { maxBytes });
      if (!(await repo.markReceived(uploadId, sizeBytes))) {
        // Completed or expired while the body was streaming: the verified archive is a copy of
        // its own, so this late body is simply dropped.
        await deleteQuietly(upload.objectKey);
        const current = await repo.findUploadById(uploadId);
        if (current?.status === 'completed') {
          throw new AppError('CONFLICT', {
            message: 'This upload is completed; create a new upload session.',
          });
        }
        throw new AppError('UPLOAD_URL_INVALID', { details: { reason: 'expired' } });
      }
      return { uploadId, sizeBytes, status: 'received' };
    },

    /**
     * Verifies the uploaded archive and records it. Idempotent: a completed upload returns its
     * archive again (concurrent completions create one archive). Errors: NOT_FOUND (another
     * organization's or no upload), UPLOAD_EXPIRED, UPLOAD_NOT_RECEIVED, UPLOAD_TOO_LARGE, and
     * the archive codes of verifyArchive — after which the stored object is removed and the
     * session is pending again, so a corrected archive can be PUT to the same URL.
     */
    async completeSourceUpload(
      companyId: string,
      uploadId: string,
      input: CompleteSourceUploadRequest,
    ): Promise<CompletedSourceUpload> {
      const repo = uploadsRepo(database.db);
      const upload = await repo.findUpload(companyId, uploadId);
      if (!upload) throw new AppError('NOT_FOUND', { message: 'Upload not found.', details: { uploadId } });
      const existing = async (): Promise<CompletedSourceUpload | undefined> => {
        const row = await repo.findArchiveByUpload(uploadId);
        if (!row) return undefined;
        checkDeclaredSha(row, input.sha256);
        return toCompleted(row);
      };
      if (upload.status === 'completed') {
        const done = await existing();
        if (done) return done;
      }
      if (upload.status === 'expired' || upload.expiresAt.getTime() <= Date.now()) {
        throw new AppError('UPLOAD_EXPIRED', { details: { uploadId } });
      }
      const stored = await objectStore.head(upload.objectKey);
      if (!stored) throw new AppError('UPLOAD_NOT_RECEIVED', { details: { uploadId } });

      const archiveKey = `archives/${companyId}/${randomUUID()}.tar.gz`;
      let verified: VerifiedArchive;
      try {
        if (stored.sizeBytes > upload.maxBytes) {
          throw new AppError('UPLOAD_TOO_LARGE', {
            message: `The upload is larger than ${upload.maxBytes} bytes.`,
            details: { maxBytes: upload.maxBytes, sizeBytes: stored.sizeBytes },
          });
        }
        verified = await verifyAndCopy(upload.objectKey, archiveKey, upload.maxBytes, input.sha256);
      } catch (err) {
        // A concurrent completion may have finished (and removed the upload object) meanwhile.
        const done = await existing().catch(() => undefined);
        if (done) return done;
        if (isAppError(err, 'NOT_FOUND'))
          throw new AppError('UPLOAD_NOT_RECEIVED', { details: { uploadId } });
        if (isAppError(err) && ARCHIVE_REJECTIONS.has(err.code)) {
          await deleteQuietly(upload.objectKey);
          await repo.markPending(uploadId);
        }
        throw err;
      }

      let outcome: { archive: ArchiveRow; created: boolean };
      try {
        outcome = await database.transaction(async (tx) => {
          const txRepo = uploadsRepo(tx.db);
          const locked = await txRepo.lockUpload(companyId, uploadId);
          if (!locked)
            throw new AppError('NOT_FOUND', { message: 'Upload not found.', details: { uploadId } });
          const already = await txRepo.findArchiveByUpload(uploadId);
          if (already) return { archive: already, created: false };
          const archive = await txRepo.insertArchive({
            companyId,
            workspaceId: upload.workspaceId,
            uploadId,
            objectKey: archiveKey,
            sha256: verified.sha256,
            sizeBytes: verified.sizeBytes,
            fileCount: verified.fileCount,
            expandedBytes: verified.expandedBytes,
          });
          if (!archive) {
            const raced = await txRepo.findArchiveByUpload(uploadId);
            if (!raced) throw new Error(`Archive of upload ${uploadId} vanished during completion.`);
            return { archive: raced, created: false };
          }
          await txRepo.markCompleted(uploadId, archive.id);
          return { archive, created: true };
        });
      } catch (err) {
        await deleteQuietly(archiveKey);
        throw err;
      }
      if (outcome.created) {
        await deleteQuietly(upload.objectKey);
      } else {
        await deleteQuietly(archiveKey);
        checkDeclaredSha(outcome.archive, input.sha256);
      }
      return toCompleted(outcome.archive);
    },

    /**
     * Housekeeping, run by a scheduled job: expires unfinished sessions past their expiry and
     * removes their objects; removes upload objects a presigned URL could still have written
     * after completion; deletes archives no scan references once they are older than
     * `archiveRetentionMs`, and expired sessions older than the same retention.
     */
    async sweep(
      options: { now?: Date; archiveRetentionMs?: number; batchSize?: number; orphanGraceMs?: number } = {},
    ): Promise<{
      expiredUploads: number;
      deletedArchives: number;
      deletedSessions: number;
      deletedOrphans: number;
    }> {
      const now = options.now ?? new Date();
      const retentionMs = options.archiveRetentionMs ?? ARCHIVE_RETENTION_MS;
      const batchSize = options.batchSize ?? 500;
      const repo = uploadsRepo(database.db);

      let expiredUploads = 0;
      for (;;) {
        const expired = await repo.expireDue(now, batchSize);
        for (const row of expired) await deleteQuietly(row.objectKey);
        expiredUploads += expired.length;
        if (expired.length < batchSize) break;
      }
      for (const row of await repo.completedExpiredBetween(
        new Date(now.getTime() - LATE_PUT_WINDOW_MS),
        now,
      )) {
        await deleteQuietly(row.objectKey);
      }

      const cutoff = new Date(now.getTime() - retentionMs);
      let deletedArchives = 0;
      for (;;) {
        const candidates = await repo.listUnreferencedArchives(cutoff, batchSize);
        const before = deletedArchives;
        for (const candidate of candidates) {
          // Row first, object second: an archive row never points at a missing object.
          const deleted = await database
            .transaction(async (tx) => uploadsRepo(tx.db).deleteArchiveIfUnreferenced(candidate.id))
            .catch((err: unknown) => {
              log.warn({ err, archiveId: candidate.id }, 'archive kept: referenced meanwhile');
              return false;
            });
          if (deleted) {
            await deleteQuietly(candidate.objectKey);
            deletedArchives += 1;
          }
        }
        // A full batch of archives that were all kept would come back again: stop there.
        if (candidates.length < batchSize || deletedArchives === before) break;
      }
      const deletedSessions = await repo.deleteExpiredBefore(cutoff);

      // Objects no row names: what a process killed between writing an object and committing
      // its row leaves (a completion's archive copy, an upload of a session never committed).
      // Past the grace period no completion or upload can still be about to record them.
      const orphanCutoff = now.getTime() - (options.orphanGraceMs ?? ORPHAN_GRACE_MS);
      let deletedOrphans = 0;
      for (const [prefix, known] of [
        ['archives', (keys: string[]) => repo.knownArchiveKeys(keys)],
        ['uploads', (keys: string[]) => repo.knownUploadKeys(keys)],
      ] as const) {
        let batch: string[] = [];
        const flush = async () => {
          const recorded = await known(batch);
          for (const key of batch) {
            if (recorded.has(key)) continue;
            await deleteQuietly(key);
            deletedOrphans += 1;
          }
          batch = [];
        };
        for await (const object of objectStore.list(prefix)) {
          if (object.modifiedAt.getTime() > orphanCutoff) continue;
          batch.push(object.key);
          if (batch.length >= batchSize) await flush();
        }
        await flush();
      }
      return { expiredUploads, deletedArchives, deletedSessions, deletedOrphans };
    },
  };
}

/** Completed archives no scan references are kept this long (7 days) for scans still to come. */
export const ARCHIVE_RETENTION_MS = 7 * 24 * 3600 * 1000;

/**
 * Objects without a row are removed once older than this (1 hour): far longer than a completion
 * takes between writing its archive copy and committing the archive row.
 */
export const ORPHAN_GRACE_MS = 3600 * 1000;

/**
 * How far back the sweep looks for completed sessions whose URL just expired. The sweep runs
 * every 5 minutes; an hour tolerates missed runs without revisiting old sessions forever.
 */
const LATE_PUT_WINDOW_MS = 3600 * 1000;

export type UploadsService = ReturnType<typeof createUploadsService>;
