import { describe, expect, it } from 'vitest';
import { api, apiOk, sharedTestApp } from '../../../test/helpers/app.ts';
import { buildCompanyWorld, buildFinding, buildRepository } from '../../../test/helpers/factories.ts';

const t = sharedTestApp();

interface ReportBody {
  id: string;
  findings: Array<{ id: string; number: number; severity: string; status: string }>;
  findingStats: Array<{ severity: string; totalCount: number; fixedCount: number }>;
  publishedAt: string | null;
  isPrivate: boolean;
}

/** A finished repository with three reportable findings and one rejected finding. */
async function world() {
  const org = await buildCompanyWorld(t);
  const repo = await buildRepository(t, { companyId: org.company.id });
  const base = { repositoryId: repo.id };
  const critical = await buildFinding(t, { ...base, severity: 'critical', status: 'confirmed' });
  const high = await buildFinding(t, { ...base, severity: 'high', status: 'fixed' });
  const low = await buildFinding(t, { ...base, severity: 'low', status: 'acknowledged' });
  const rejected = await buildFinding(t, { ...base, severity: 'medium', status: 'rejected' });
  await apiOk(t, 'POST', `/api/v0/repositories/${repo.id}/finish`, org.manager.token);
  return { ...org, repo, critical, high, low, rejected };
}

describe('choosing the findings of a report (findingIds)', () => {
  it('lists only the chosen findings, with statistics over them, and every reportable one when unset', async () => {
    const w = await world();
    const all = await apiOk<ReportBody>(t, 'POST', '/api/v0/reports', w.manager.token, {
      repositoryId: w.repo.id,
    });
    expect(all.findings.map((f) => f.id)).toEqual([w.critical.id, w.high.id, w.low.id]);
    const chosen = await apiOk<ReportBody>(t, 'POST', '/api/v0/reports', w.manager.token, {
      repositoryId: w.repo.id,
      findingIds: [w.low.id, w.high.id],
    });
    expect(chosen.findings.map((f) => [f.id, f.severity, f.status])).toEqual([
      [w.high.id, 'high', 'fixed'],
      [w.low.id, 'low', 'acknowledged'],
    ]);
    const stat = (s: string) => chosen.findingStats.find((x) => x.severity === s);
    expect(stat('high')).toEqual({ severity: 'high', totalCount: 1, fixedCount: 1 });
    expect(stat('low')).toEqual({ severity: 'low', totalCount: 1, fixedCount: 0 });
    expect(stat('critical')).toEqual({ severity: 'critical', totalCount: 0, fixedCount: 0 });
  });

  it('takes the snapshot again when an update chooses other findings', async () => {
    const w = await world();
    const report = await apiOk<ReportBody>(t, 'POST', '/api/v0/reports', w.manager.token, {
      repositoryId: w.repo.id,
      findingIds: [w.critical.id],
    });
    const updated = await apiOk<ReportBody>(t, 'PATCH', `/api/v0/reports/${report.id}`, w.manager.token, {
      findingIds: [w.critical.id, w.low.id],
    });
    expect(updated.findings.map((f) => f.id)).toEqual([w.critical.id, w.low.id]);
    const read = await apiOk<ReportBody>(t, 'GET', `/api/v0/reports/${report.id}`, w.member.token);
    expect(read.findings.map((f) => f.id)).toEqual([w.critical.id, w.low.id]);
  });

  it('answers 400 naming the ids that are not reportable findings of the repository, and writes nothing', async () => {
    const w = await world();
    const other = await buildFinding(t, { severity: 'high', status: 'confirmed' });
    for (const findingIds of [[w.rejected.id], [w.critical.id, other.id]]) {
      const res = await api(t, 'POST', '/api/v0/reports', w.manager.token, {
        repositoryId: w.repo.id,
        findingIds,
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().msg).toMatch(/confirmed, acknowledged or fixed/);
    }
    const report = await apiOk<ReportBody>(t, 'POST', '/api/v0/reports', w.manager.token, {
      repositoryId: w.repo.id,
    });
    const res = await api(t, 'PATCH', `/api/v0/reports/${report.id}`, w.manager.token, {
      findingIds: [w.rejected.id],
      projectTitle: 'Changed',
    });
    expect(res.statusCode).toBe(400);
    const read = await apiOk<ReportBody & { projectTitle: string }>(
      t,
      'GET',
      `/api/v0/reports/${report.id}`,
      w.manager.token,
    );
    expect(read.findings).toHaveLength(3);
    expect(read.projectTitle).not.toBe('Changed');
  });

  it('is refused to company members (403) and to other companies (404)', async () => {
    const w = await world();
    const member = await api(t, 'POST', '/api/v0/reports', w.member.token, {
      repositoryId: w.repo.id,
      findingIds: [w.critical.id],
    });
    expect(member.statusCode).toBe(403);
    const stranger = await buildCompanyWorld(t);
    const res = await api(t, 'POST', '/api/v0/reports', stranger.manager.token, {
      repositoryId: w.repo.id,
      findingIds: [w.critical.id],
    });
    expect(res.statusCode).toBe(404);
  });
});
