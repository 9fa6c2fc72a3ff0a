import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildTarGz } from '../fixtures/archives.ts';
import { sharedTestApp } from '../helpers/app.ts';
import { REENTRANT_BANK, waitForScan } from '../helpers/scan-helpers.ts';

// The same sequence as docs/scanner-quickstart.md, step by step over HTTP.
const t = sharedTestApp({ worker: true });

describe('the scanner quickstart', () => {
  it('uploads an archive, starts a standard scan, polls it and reads its findings', async () => {
    const admin = { authorization: `Bearer ${t.adminToken}` };
    // 0. An organization, a service key and credits (platform admin).
    const company = await t.app.inject({
      method: 'POST',
      url: '/api/v0/admin/companies',
      headers: admin,
      payload: { name: 'Acme', handle: 'acme' },
    });
    expect(company.statusCode, company.body).toBeLessThan(300);
    const companyId = company.json().id as string;
    const serviceKey = await t.app.inject({
      method: 'POST',
      url: `/api/v0/companies/${companyId}/service-keys`,
      headers: admin,
      payload: { name: 'ci' },
    });
    expect(serviceKey.statusCode, serviceKey.body).toBeLessThan(300);
    const key = { authorization: `Bearer ${serviceKey.json().key}` };
    const grant = await t.app.inject({
      method: 'POST',
      url: `/api/v0/admin/companies/${companyId}/credits`,
      headers: admin,
      payload: { amount: 10 },
    });
    expect(grant.statusCode, grant.body).toBeLessThan(300);

    // 1. Create an upload session.
    const archive = buildTarGz([{ name: 'contracts/Bank.sol', content: REENTRANT_BANK }]);
    const sha256 = createHash('sha256').update(archive).digest('hex');
    const sessions = await t.app.inject({
      method: 'POST',
      url: '/api/scanner/v1/source-uploads',
      headers: key,
      payload: {
        workspace: { name: 'vault' },
        archives: [{ filename: 'src.tar.gz', sizeBytes: archive.length }],
      },
    });
    expect(sessions.statusCode, sessions.body).toBe(200);
    const upload = sessions.json().uploads[0];
    expect(upload.method).toBe('PUT');

    // 2. PUT the archive to the upload URL.
    const url = new URL(upload.uploadUrl);
    const put = await t.app.inject({
      method: 'PUT',
      url: `${url.pathname}${url.search}`,
      headers: { ...upload.headers, 'content-type': 'application/gzip' },
      payload: archive,
    });
    expect(put.statusCode, put.body).toBeLessThan(300);

    // 3. Complete the upload.
    const completed = await t.app.inject({
      method: 'POST',
      url: `/api/scanner/v1/source-uploads/${upload.uploadId}/complete`,
      headers: key,
      payload: { sha256 },
    });
    expect(completed.statusCode, completed.body).toBe(200);
    expect(completed.json().sha256).toBe(sha256);

    // 4. Create the scan.
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/scanner/v1/scans',
      headers: { ...key, 'idempotency-key': 'quickstart-1' },
      payload: {
        type: 'standard',
        scanSources: [{ kind: 'local', archiveId: completed.json().archiveId, sha256 }],
      },
    });
    expect(created.statusCode, created.body).toBe(202);
    expect(created.json()).toMatchObject({
      status: 'preparing',
      type: 'standard',
      workspaceId: sessions.json().workspaceId,
    });

    // 5. Poll until it is final.
    const scan = await waitForScan(t, serviceKey.json().key, created.json().id, (s) =>
      ['completed', 'failed', 'cancelled'].includes(s.status),
    );
    expect(scan.status).toBe('completed');

    // 6. Read the findings (GitLab SAST) and the SARIF form.
    const report = await t.app.inject({
      method: 'GET',
      url: `/api/scanner/v1/scans/${scan.id}/findings`,
      headers: key,
    });
    expect(report.statusCode).toBe(200);
    expect(report.json().vulnerabilities.length).toBe(scan.findingsCount);
    expect(scan.findingsCount).toBeGreaterThan(0);
    const sarif = await t.app.inject({
      method: 'GET',
      url: `/api/scanner/v1/scans/${scan.id}/findings?format=sarif`,
      headers: key,
    });
    expect(sarif.json().version).toBe('2.1.0');
  }, 60_000);
});
