import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { api, apiOk, sharedTestApp } from '../../../test/helpers/app.ts';
import { itEnforcesUserAuth } from '../../../test/helpers/auth-cases.ts';
import {
  buildCompanyWorld,
  buildFinding,
  buildMember,
  buildRepository,
  buildUser,
} from '../../../test/helpers/factories.ts';
import { findings } from '../../db/schema/index.ts';
import type { CompanyDashboard } from './dashboard.schemas.ts';
import { weekStartOf } from './dashboard.service.ts';

const t = sharedTestApp();
const DAY = 86_400_000;
const HOUR = 3_600_000;

const dashboardOf = (companyId: string, token: string, query = '') =>
  apiOk<CompanyDashboard>(t, 'GET', `/api/v0/companies/${companyId}/dashboard${query}`, token);

describe('GET /api/v0/companies/{company_id}/dashboard', () => {
  it('counts open findings by status and severity, new and fixed per week, the median time to fix and per repository', async () => {
    const org = await buildCompanyWorld(t);
    const alpha = await buildRepository(t, { companyId: org.company.id, name: 'alpha' });
    const beta = await buildRepository(t, { companyId: org.company.id, name: 'beta' });
    const empty = await buildRepository(t, { companyId: org.company.id, name: 'gamma' });
    const now = Date.now();
    const at = (daysAgo: number) => new Date(now - daysAgo * DAY);
    // alpha: two open (new high, confirmed critical), one fixed in 10 hours, one rejected.
    await buildFinding(t, { repositoryId: alpha.id, status: 'new', severity: 'high', createdAt: at(1) });
    await buildFinding(t, {
      repositoryId: alpha.id,
      status: 'confirmed',
      severity: 'critical',
      createdAt: at(9),
    });
    await buildFinding(t, {
      repositoryId: alpha.id,
      status: 'fixed',
      severity: 'high',
      createdAt: at(20),
      fixedAt: new Date(at(20).getTime() + 10 * HOUR),
    });
    await buildFinding(t, { repositoryId: alpha.id, status: 'rejected', severity: 'low', createdAt: at(2) });
    // beta: one acknowledged medium, two fixed (30 and 50 hours), one fixed long ago (outside 12 weeks).
    await buildFinding(t, {
      repositoryId: beta.id,
      status: 'acknowledged',
      severity: 'medium',
      createdAt: at(3),
    });
    await buildFinding(t, {
      repositoryId: beta.id,
      status: 'fixed',
      severity: 'medium',
      createdAt: at(15),
      fixedAt: new Date(at(15).getTime() + 30 * HOUR),
    });
    await buildFinding(t, {
      repositoryId: beta.id,
      status: 'fixed',
      severity: 'critical',
      createdAt: at(8),
      fixedAt: new Date(at(8).getTime() + 50 * HOUR),
    });
    await buildFinding(t, {
      repositoryId: beta.id,
      status: 'fixed',
      severity: 'low',
      createdAt: at(200),
      fixedAt: new Date(at(200).getTime() + 1000 * HOUR),
    });
    // Not counted: an unpublished finding, a scanner draft of the company, another company's finding.
    await buildFinding(t, { repositoryId: alpha.id, status: 'new', severity: 'high', published: false });
    await buildFinding(t, {
      repositoryId: null,
      companyId: org.company.id,
      published: false,
      severity: 'high',
    });
    await buildFinding(t, { status: 'new', severity: 'critical' });

    const d = await dashboardOf(org.company.id, org.member.token);
    expect(d.companyId).toBe(org.company.id);
    expect(d.totals).toEqual({ findings: 8, open: 3, fixed: 4 });
    const count = (status: string, severity: string) =>
      d.byStatusAndSeverity.find((c) => c.status === status && c.severity === severity)?.count ?? 0;
    expect(count('new', 'high')).toBe(1);
    expect(count('confirmed', 'critical')).toBe(1);
    expect(count('acknowledged', 'medium')).toBe(1);
    expect(count('fixed', 'high')).toBe(1);
    expect(count('rejected', 'low')).toBe(1);
    expect(d.byStatusAndSeverity.reduce((n, c) => n + c.count, 0)).toBe(8);
    expect(d.openStatuses).toEqual(['new', 'in_review', 'disputed', 'confirmed', 'acknowledged']);

    // Median of 10, 30, 50 and 1000 hours: (30 + 50) / 2.
    expect(d.timeToFix.fixedCount).toBe(4);
    expect(d.timeToFix.medianSeconds).toBeCloseTo(40 * 3600, 0);

    // Twelve weeks, oldest first, the current week last; each finding in the week of its time.
    expect(d.weekly).toHaveLength(12);
    expect(d.weekly.at(-1)!.weekStart).toBe(weekStartOf(new Date(now)).toISOString());
    const expected = new Map(d.weekly.map((w) => [w.weekStart, { new: 0, fixed: 0 }]));
    for (const daysAgo of [1, 9, 20, 2, 3, 15, 8]) {
      const week = expected.get(weekStartOf(at(daysAgo)).toISOString());
      if (week) week.new += 1;
    }
    for (const fixed of [
      at(20).getTime() + 10 * HOUR,
      at(15).getTime() + 30 * HOUR,
      at(8).getTime() + 50 * HOUR,
    ]) {
      const week = expected.get(weekStartOf(new Date(fixed)).toISOString());
      if (week) week.fixed += 1;
    }
    expect(d.weekly.map((w) => ({ new: w.new, fixed: w.fixed }))).toEqual([...expected.values()]);
    expect(d.weekly.reduce((n, w) => n + w.new, 0)).toBe(7);
    expect(d.weekly.reduce((n, w) => n + w.fixed, 0)).toBe(3);

    expect(d.repositories).toEqual([
      { id: alpha.id, name: 'alpha', total: 4, open: 2, fixed: 1 },
      { id: beta.id, name: 'beta', total: 4, open: 1, fixed: 3 },
      { id: empty.id, name: 'gamma', total: 0, open: 0, fixed: 0 },
    ]);

    const four = await dashboardOf(org.company.id, org.manager.token, '?weeks=4');
    expect(four.weekly).toHaveLength(4);
    expect(four.weekly.at(-1)).toEqual(d.weekly.at(-1));
  });

  it('keeps fixedAt on every status write: set on becoming fixed, cleared on leaving it', async () => {
    const org = await buildCompanyWorld(t);
    const repo = await buildRepository(t, { companyId: org.company.id });
    const judge = await buildMember(t, { repositoryId: repo.id, role: 'judge' });
    const f = await buildFinding(t, { repositoryId: repo.id, status: 'confirmed', severity: 'high' });
    expect(f.fixedAt).toBeNull();
    const status = (s: string) =>
      apiOk(t, 'PUT', `/api/v0/repositories/${repo.id}/findings/${f.number}/status`, judge.token, {
        status: s,
        // Reopening a fixed finding needs a reason (ADR 0033).
        reason: 'Seen again.',
      });
    const fixedAt = async () =>
      (await t.container.database.db.select().from(findings).where(eq(findings.id, f.id)))[0]!.fixedAt;
    await status('fixed');
    const first = await fixedAt();
    expect(first).toBeInstanceOf(Date);
    expect(Math.abs(first!.getTime() - Date.now())).toBeLessThan(60_000);
    await t.container.database.db.update(findings).set({ title: 'renamed' }).where(eq(findings.id, f.id));
    expect(await fixedAt()).toEqual(first);
    await status('confirmed');
    expect(await fixedAt()).toBeNull();
    const d = await dashboardOf(org.company.id, org.manager.token);
    expect(d.timeToFix).toEqual({ fixedCount: 0, medianSeconds: null });
  });

  it('answers 404 to users outside the company, reviewers of its repositories included, and 400 to a bad weeks', async () => {
    const org = await buildCompanyWorld(t);
    const repo = await buildRepository(t, { companyId: org.company.id });
    const reviewer = await buildMember(t, { repositoryId: repo.id, role: 'reviewer' });
    const outsider = await buildUser(t);
    for (const token of [reviewer.token, outsider.token]) {
      const res = await api(t, 'GET', `/api/v0/companies/${org.company.id}/dashboard`, token);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ msg: expect.any(String) });
    }
    const reader = await buildUser(t, { permissions: ['read_all_companies'] });
    expect((await dashboardOf(org.company.id, reader.token)).companyId).toBe(org.company.id);
    for (const weeks of ['0', '105', 'x']) {
      const res = await api(
        t,
        'GET',
        `/api/v0/companies/${org.company.id}/dashboard?weeks=${weeks}`,
        org.manager.token,
      );
      expect(res.statusCode).toBe(400);
    }
  });

  itEnforcesUserAuth(() => t, {
    method: 'GET',
    request: async (app, companyId) => {
      const member = await buildUser(app, { companyId, companyRole: 'member' });
      return { url: `/api/v0/companies/${companyId}/dashboard`, token: member.token };
    },
  });
});
