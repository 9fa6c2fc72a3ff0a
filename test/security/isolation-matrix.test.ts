/**
 * The isolation matrix, generated from openapi.json: every operation has an entry saying how it is
 * isolated; an operation added without an entry fails the suite. Operations scoped by a company in
 * their path are called with another company's manager credentials (→ 404, or 403 for platform
 * admin operations) and with a member of the company who lacks the manager role (→ 403 where the
 * entry says so), with a minimal valid body built from the operation's own schema.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { buildCompanyWithManager, buildUser, type TestUser } from '../helpers/factories.ts';

type Schema = Record<string, unknown>;
interface Spec {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        parameters?: Array<{ name: string; in: string }>;
        requestBody?: { content?: Record<string, { schema?: Schema }> };
      }
    >
  >;
  components?: { schemas?: Record<string, Schema> };
}

/**
 * How each operation is isolated. `company`: generated cross-company calls below (`member` is the
 * answer for a member without the manager role). `public`: no tenant data. `module`: isolation of
 * a resource below the company (repository, finding, report, scan, upload, user…), tested in the
 * module's own access tests (named), not generated here yet.
 */
type Entry =
  | { kind: 'company'; other: 403 | 404; member?: 200 | 201 | 204 | 403; body?: Record<string, unknown> }
  | { kind: 'public' }
  | { kind: 'module'; test: string };

const MATRIX: Record<string, Entry> = {
  getHealth: { kind: 'public' },
  adminCreateCompany: { kind: 'module', test: 'src/platform/companies/companies.test.ts' },
  getReadiness: { kind: 'public' },
  adminGrantCredits: { kind: 'company', other: 403, member: 403 },
  createServiceKey: { kind: 'company', other: 404, member: 403 },
  listServiceKeys: { kind: 'company', other: 404, member: 403 },
  revokeServiceKey: { kind: 'company', other: 404, member: 403 },
  putIntegration: { kind: 'company', other: 404, member: 403 },
  deleteIntegration: { kind: 'company', other: 404, member: 403 },
  listIntegrations: { kind: 'company', other: 404, member: 403 },
  getCompany: { kind: 'company', other: 404 },
  updateCompany: { kind: 'company', other: 404, member: 403, body: { name: 'Renamed' } },
  listCompanyUsers: { kind: 'company', other: 404 },
  inviteCompanyUser: { kind: 'company', other: 404, member: 403 },
  joinCompany: { kind: 'company', other: 404 },
  disableCompanyUser: { kind: 'company', other: 404, member: 403 },
  reenableCompanyUser: { kind: 'company', other: 404, member: 403 },
  changeCompanyRole: { kind: 'company', other: 404, member: 403 },
  getCompanyAuditLog: { kind: 'company', other: 404, member: 403 },
  listSsoEnforcementRules: { kind: 'company', other: 404 },
  createSsoEnforcementRule: { kind: 'company', other: 404, member: 403, body: { domain: 'example.com' } },
  deleteSsoEnforcementRule: { kind: 'company', other: 404, member: 403 },
  listCompanyRepositories: { kind: 'company', other: 404 },
  createRepository: { kind: 'company', other: 404, member: 403 },
  putCompanyNotificationWebhook: {
    kind: 'company',
    other: 404,
    member: 403,
    body: { url: 'https://hooks.example.com/vigil' },
  },
  deleteCompanyNotificationWebhook: { kind: 'company', other: 404, member: 403 },
  listSourcehostDeliveries: { kind: 'company', other: 404, member: 403 },
  redeliverSourcehostDelivery: { kind: 'company', other: 404, member: 403 },
  listSourcehostRepositories: { kind: 'company', other: 404, member: 403 },
  linkSourcehostRepository: { kind: 'company', other: 404, member: 403, body: {} },
  unlinkSourcehostRepository: { kind: 'company', other: 404, member: 403 },
  // Resources below the company: their cross-company and role cases are in these modules' tests.
  adminCreateUser: { kind: 'module', test: 'test/foundation/credentials.test.ts' },
  adminCreateUserToken: { kind: 'module', test: 'test/foundation/credentials.test.ts' },
  adminRevokeUserToken: { kind: 'module', test: 'test/foundation/credentials.test.ts' },
  getCreditBalances: { kind: 'module', test: 'src/scanner/credits/' },
  createSourceUploads: { kind: 'module', test: 'src/scanner/uploads/' },
  completeSourceUpload: { kind: 'module', test: 'src/scanner/uploads/' },
  putSourceUpload: { kind: 'module', test: 'src/scanner/uploads/' },
  createScan: { kind: 'module', test: 'src/scanner/scans/' },
  getScan: { kind: 'module', test: 'src/scanner/scans/' },
  cancelScan: { kind: 'module', test: 'src/scanner/scans/' },
  getScanFindings: { kind: 'module', test: 'src/scanner/scans/' },
  getScanThreatModel: { kind: 'module', test: 'src/scanner/scans/' },
  listAllFindings: { kind: 'module', test: 'src/platform/findings/' },
  createFinding: { kind: 'module', test: 'src/platform/findings/' },
  getFinding: { kind: 'module', test: 'src/platform/findings/' },
  changeFindingStatus: { kind: 'module', test: 'src/platform/findings/' },
  changeFindingSeverity: { kind: 'module', test: 'src/platform/findings/' },
  assignFinding: { kind: 'module', test: 'src/platform/findings/' },
  updateFindingLabels: { kind: 'module', test: 'src/platform/labels/' },
  markFindingDuplicate: { kind: 'module', test: 'src/platform/findings/' },
  markFindingRead: { kind: 'module', test: 'src/platform/findings/' },
  listLabels: { kind: 'module', test: 'src/platform/labels/' },
  createLabel: { kind: 'module', test: 'src/platform/labels/' },
  updateLabel: { kind: 'module', test: 'src/platform/labels/' },
  deleteLabel: { kind: 'module', test: 'src/platform/labels/' },
  createFindingView: { kind: 'module', test: 'src/platform/views/' },
  getAuditorProfile: { kind: 'module', test: 'src/platform/users/' },
  updateAuditorProfile: { kind: 'module', test: 'src/platform/users/' },
  awardBadge: { kind: 'module', test: 'src/platform/users/' },
  getRepository: { kind: 'module', test: 'src/platform/repositories/' },
  updateRepository: { kind: 'module', test: 'src/platform/repositories/' },
  finishRepository: { kind: 'module', test: 'src/platform/repositories/' },
  getRepositoryLog: { kind: 'module', test: 'src/platform/repositories/' },
  listRepositoryMembers: { kind: 'module', test: 'src/platform/repositories/' },
  putRepositoryMember: { kind: 'module', test: 'src/platform/repositories/' },
  removeRepositoryMember: { kind: 'module', test: 'src/platform/repositories/' },
  joinRepository: { kind: 'module', test: 'src/platform/repositories/' },
  listReports: { kind: 'module', test: 'src/platform/reports/' },
  createReport: { kind: 'module', test: 'src/platform/reports/' },
  getReport: { kind: 'module', test: 'src/platform/reports/' },
  updateReport: { kind: 'module', test: 'src/platform/reports/' },
  publishReport: { kind: 'module', test: 'src/platform/reports/' },
  listGuilds: { kind: 'module', test: 'src/platform/reports/reports.test.ts' },
  createGuild: { kind: 'module', test: 'src/platform/reports/reports.test.ts' },
  getFindingTickets: { kind: 'module', test: 'src/scanner/tickets/' },
  linkFindingTicket: { kind: 'module', test: 'src/scanner/tickets/' },
  sendFindingToIssueTracker: { kind: 'module', test: 'src/scanner/tickets/' },
  adminListCompanies: { kind: 'module', test: 'src/platform/admin/admin-companies.test.ts' },
  openSession: { kind: 'module', test: 'src/platform/session/session.routes.test.ts' },
  getSession: { kind: 'module', test: 'src/platform/session/session.routes.test.ts' },
  closeSession: { kind: 'module', test: 'src/platform/session/session.routes.test.ts' },
  listScans: { kind: 'module', test: 'src/scanner/scans/scans.list.test.ts' },
  addFindingComment: { kind: 'module', test: 'src/platform/comments/' },
  listFindingComments: { kind: 'module', test: 'src/platform/comments/' },
  editFindingComment: { kind: 'module', test: 'src/platform/comments/' },
  deleteFindingComment: { kind: 'module', test: 'src/platform/comments/' },
  listNotifications: { kind: 'module', test: 'src/platform/notifications/' },
  markNotificationRead: { kind: 'module', test: 'src/platform/notifications/' },
  markAllNotificationsRead: { kind: 'module', test: 'src/platform/notifications/' },
  listFindingViews: { kind: 'module', test: 'src/platform/views/' },
  receiveSourcehostWebhook: { kind: 'module', test: 'src/platform/sourcehost/sourcehost.test.ts' },
  getLeaderboard: { kind: 'module', test: 'src/platform/leaderboard/leaderboard.test.ts' },
  askAi: { kind: 'module', test: 'src/platform/ai/ai.leak.test.ts' },
  getAiStatus: { kind: 'module', test: 'src/platform/ai/ai.routes.test.ts' },
  getAiConversation: { kind: 'module', test: 'src/platform/ai/ai.routes.test.ts' },
};

const spec = JSON.parse(readFileSync('openapi.json', 'utf8')) as Spec;
const operations = Object.entries(spec.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
);

function resolve(schema: Schema | undefined): Schema {
  const ref = schema?.$ref as string | undefined;
  return ref ? (spec.components?.schemas?.[ref.split('/').pop() ?? ''] ?? {}) : (schema ?? {});
}

/** A minimal value that passes the schema (required fields only). */
function exampleOf(raw: Schema | undefined): unknown {
  const schema = resolve(raw);
  if (schema.anyOf) return exampleOf((schema.anyOf as Schema[])[0]);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (schema.enum) return (schema.enum as unknown[])[0];
  if (schema.const !== undefined) return schema.const;
  if (type === 'object') {
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    return Object.fromEntries(((schema.required ?? []) as string[]).map((k) => [k, exampleOf(props[k])]));
  }
  if (type === 'array') return [];
  if (type === 'integer' || type === 'number') return (schema.minimum as number | undefined) ?? 1;
  if (type === 'boolean') return true;
  if (schema.format === 'uuid') return randomUUID();
  if (schema.format === 'email') return 'someone@example.com';
  if (schema.format === 'uri') return 'https://example.com';
  if (schema.format === 'date-time') return '2026-01-01T00:00:00Z';
  return 'x'.repeat(Math.max(1, (schema.minLength as number | undefined) ?? 1));
}

let t: TestApp;
let target: Awaited<ReturnType<typeof buildCompanyWithManager>>;
let stranger: TestUser;
let member: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  target = await buildCompanyWithManager(t);
  stranger = (await buildCompanyWithManager(t)).manager;
  member = await buildUser(t, { companyId: target.company.id, companyRole: 'member' });
});
afterAll(async () => {
  await t?.close();
});

describe('isolation matrix from openapi.json', () => {
  it('has an entry for every operation of openapi.json, and no stale entry', () => {
    const ids = new Set(operations.map((o) => o.op.operationId));
    expect(operations.map((o) => o.op.operationId).filter((id) => MATRIX[id] === undefined)).toEqual([]);
    expect(Object.keys(MATRIX).filter((id) => !ids.has(id))).toEqual([]);
    const companyScoped = operations.filter((o) => /\{company_?[iI]d\}/.test(o.path));
    expect(
      companyScoped.filter((o) => MATRIX[o.op.operationId]?.kind !== 'company').map((o) => o.op.operationId),
    ).toEqual([]);
  });

  for (const { path, method, op } of operations) {
    const entry = MATRIX[op.operationId];
    if (entry?.kind !== 'company') continue;
    it(`${op.operationId}: another company's manager → ${entry.other}${entry.member ? `, a member → ${entry.member}` : ''}`, async () => {
      const url = path
        .replace(/\{company_?[iI]d\}/, target.company.id)
        .replace('{provider}', 'sourcehost')
        .replace(/\{[^}]+\}/g, () => randomUUID());
      const body = op.requestBody?.content?.['application/json']?.schema;
      const send = (token: string) =>
        t.app.inject({
          method: method as 'GET',
          url,
          headers: { authorization: `Bearer ${token}` },
          ...(body ? { payload: entry.body ?? (exampleOf(body) as Record<string, unknown>) } : {}),
        });
      const other = await send(stranger.token);
      expect(other.statusCode, other.body).toBe(entry.other);
      expect(other.json()).toHaveProperty('msg');
      if (entry.member === 403) {
        const res = await send(member.token);
        expect(res.statusCode, res.body).toBe(403);
      }
    });
  }
});
