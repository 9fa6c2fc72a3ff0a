import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';

/** One upload session as createSourceUploads returns it. */
export interface TestUploadSession {
  uploadId: string;
  filename: string;
  uploadUrl: string;
  method: 'PUT';
  headers: Record<string, string>;
  expiresAt: string;
  maxBytes: number;
}

/** A completed upload: what a local `scanSources` entry needs. */
export interface TestCompletedUpload {
  archiveId: string;
  uploadId: string;
  workspaceId: string;
  sha256: string;
  sizeBytes: number;
  fileCount: number;
  expandedBytes: number;
}

/** Lowercase hex SHA-256 of a buffer. */
export function sha256Hex(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** POST /source-uploads; returns the status and the parsed body. */
export async function createUploadSessions(
  t: TestApp,
  key: string,
  body: Record<string, unknown>,
): Promise<{
  statusCode: number;
  body: { workspaceId: string; uploads: TestUploadSession[]; code?: string };
}> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/scanner/v1/source-uploads',
    headers: { authorization: `Bearer ${key}` },
    payload: body,
  });
  return { statusCode: res.statusCode, body: res.json() };
}

/**
 * PUTs a body to an upload URL: through `inject` when it is this app's own `/uploads/…` route,
 * else over the network (a presigned object store URL). Returns the status and the raw body.
 */
export async function putUpload(
  t: TestApp,
  session: Pick<TestUploadSession, 'uploadUrl' | 'headers'>,
  body: Buffer,
  headers: Record<string, string> = {},
): Promise<{ statusCode: number; body: string }> {
  const url = new URL(session.uploadUrl);
  if (url.pathname.startsWith('/uploads/')) {
    const res = await t.app.inject({
      method: 'PUT',
      url: `${url.pathname}${url.search}`,
      headers: { ...session.headers, ...headers },
      payload: body,
    });
    return { statusCode: res.statusCode, body: res.body };
  }
  const res = await fetch(url, { method: 'PUT', headers: { ...session.headers, ...headers }, body });
  return { statusCode: res.status, body: await res.text() };
}

/** POST /source-uploads/{uploadId}/complete. */
export async function completeUpload(
  t: TestApp,
  key: string,
  uploadId: string,
  body: { sha256?: string } = {},
): Promise<{ statusCode: number; body: TestCompletedUpload & { code?: string; [field: string]: unknown } }> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/scanner/v1/source-uploads/${uploadId}/complete`,
    headers: { authorization: `Bearer ${key}` },
    payload: body,
  });
  return { statusCode: res.statusCode, body: res.json() };
}

/**
 * Creates a session, uploads `archive` and completes it, asserting success; for tests of other
 * modules that need a completed archive (a local scan source).
 */
export async function uploadArchive(
  t: TestApp,
  key: string,
  archive: Buffer,
  target: { workspaceId: string } | { workspace: { name: string; prefix?: string } } = {
    workspace: { name: 'uploads' },
  },
): Promise<TestCompletedUpload> {
  const created = await createUploadSessions(t, key, {
    ...target,
    archives: [{ filename: 'source.tar.gz', sizeBytes: archive.length }],
  });
  expect(created.statusCode, JSON.stringify(created.body)).toBe(200);
  const session = created.body.uploads[0]!;
  const put = await putUpload(t, session, archive);
  expect(put.statusCode, put.body).toBe(200);
  const completed = await completeUpload(t, key, session.uploadId, { sha256: sha256Hex(archive) });
  expect(completed.statusCode, JSON.stringify(completed.body)).toBe(200);
  return completed.body;
}
