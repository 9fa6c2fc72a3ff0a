import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { and, eq, ne, sql } from 'drizzle-orm';
import pino from 'pino';
import type { ServiceActor, UserActor } from '../auth/actor.ts';
import { authRepo } from '../auth/auth.repo.ts';
import { type Config, publicBaseUrl } from '../config.ts';
import { type Container, type ContainerOptions, createContainer, createLogger } from '../container.ts';
import { companies, findings, users } from '../db/schema/index.ts';
import { AppError } from '../errors.ts';
import { formatTable } from './http-client.ts';
import { packDirectory } from './scan-sources.ts';
import {
  DAY_MS,
  DemoCast,
  type DemoCompany,
  PEOPLE,
  type PersonKey,
  seedCompanyAndPeople,
  TOKEN_DAYS,
} from './seed-cast.ts';
import { fileFindings, judgeFindings, seedComments } from './seed-findings.ts';
import {
  type DemoRepositories,
  publishAuditReport,
  seedLabels,
  seedRepositories,
} from './seed-repositories.ts';

/** The bundled project the demo scans (`examples/sample-project`). */
export const SAMPLE_PROJECT_DIR = fileURLToPath(new URL('../../examples/sample-project/', import.meta.url));

/** How long the demo waits for its scan before giving up. */
const SCAN_TIMEOUT_MS = 120_000;

/** One demo user as printed: who they are, what they are, and a token to act as them. */
export interface DemoUser {
  userId: string;
  username: string;
  name: string;
  roles: string;
  token: string;
}

/** What `vigil seed demo` created, for the summary (tokens and the service key appear only here). */
export interface DemoSummary {
  /** The bootstrap admin's token when the seed generated it, null when it existed or was given. */
  adminToken: string | null;
  /** Whether the seed created the platform admin (the instance had never been started). */
  adminCreated: boolean;
  company: { id: string; name: string; handle: string };
  users: DemoUser[];
  repositories: Array<{ id: string; name: string; access: string; findings: number }>;
  findingsByStatus: Record<string, number>;
  comments: number;
  report: { id: string; title: string; publishedAt: string | null };
  scan: { id: string; status: string; findingsCount: number; workspaceId: string };
  serviceKey: { id: string; key: string; prefix: string; scopes: string[] };
  creditsLeft: number;
}

/** Options of {@link runSeedDemo}. */
export interface RunSeedDemoOptions {
  /** Where the summary goes (stdout for the command). */
  out: (text: string) => void;
  /** Passed to the container: a database the caller already opened, a logger. */
  container?: ContainerOptions;
}

/** Throws CONFLICT unless the database holds nothing beyond the bootstrap admin. */
async function requireEmptyInstance(container: Container): Promise<void> {
  const db = container.database.db;
  const [companyCount] = await db.select({ n: sql<number>`count(*)::int` }).from(companies);
  const [userCount] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(users)
    .where(ne(users.username, 'admin'));
  if ((companyCount?.n ?? 0) > 0 || (userCount?.n ?? 0) > 0) {
    throw new AppError('CONFLICT', {
      message:
        'The demo fills an empty instance only, and this one already has companies or users. Point DATABASE_URL (or VIGIL_DATA_DIR) at an empty database.',
    });
  }
}

/** The platform admin `admin` as an actor, read from the database. */
async function loadAdminActor(container: Container): Promise<UserActor> {
  const db = container.database.db;
  const [admin] = await db.select().from(users).where(eq(users.username, 'admin'));
  if (!admin) throw new AppError('CONFLICT', { message: 'The platform admin "admin" does not exist.' });
  const permissions = await authRepo(db).findPermissions(admin.id);
  if (!permissions.includes('admin')) {
    throw new AppError('CONFLICT', { message: 'The user "admin" is not a platform admin.' });
  }
  return {
    kind: 'user',
    credentialId: 'cli:seed',
    userId: admin.id,
    username: admin.username,
    companies: new Map(),
    permissions: new Set(permissions),
  };
}

/** Packs a directory into a tar.gz as `vigil scan` packs one, in memory (the sample project is a few kilobytes). */
export async function packSampleProject(root: string = SAMPLE_PROJECT_DIR): Promise<Buffer> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'vigil-seed-'));
  try {
    const target = path.join(work, 'sample-project.tar.gz');
    await packDirectory(root, target);
    return await readFile(target);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * The demo itself: every step through the services, as the users who would take it. Each step
 * lives beside the data it writes (seed-cast.ts, seed-repositories.ts, seed-findings.ts).
 */
async function seedDemo(
  container: Container,
  bootstrap: Pick<DemoSummary, 'adminToken' | 'adminCreated'>,
): Promise<DemoSummary> {
  const { services } = container;
  const now = Date.now();
  const admin = await loadAdminActor(container);
  const cast = new DemoCast(container, admin, new Date(now + TOKEN_DAYS * DAY_MS));

  const { company, manager } = await seedCompanyAndPeople(cast);
  const repositories = await seedRepositories(cast, manager, company.id, now);
  const labels = await seedLabels(cast, repositories);
  const filed = await fileFindings(cast, repositories, labels);
  await judgeFindings(cast, repositories, labels, filed);
  const comments = await seedComments(cast, repositories, filed);
  const report = await publishAuditReport(cast, manager, repositories.audit);

  // The scanner: a service key, credits, and a real scan of the bundled sample project.
  const serviceKey = await services.serviceKeys.createKey(manager, company.id, { name: 'ci' });
  await services.admin.grantCredits(admin, company.id, 20, 'demo credits');
  const keyActor = await services.auth.authenticateServiceKey(serviceKey.key);
  const scan = await scanSampleProject(container, keyActor);

  return {
    ...bootstrap,
    ...(await summarize(cast, company, repositories)),
    comments,
    report: { id: report.id, title: report.projectTitle, publishedAt: report.publishedAt },
    scan,
    serviceKey: {
      id: serviceKey.id,
      key: serviceKey.key,
      prefix: serviceKey.prefix,
      scopes: [...serviceKey.scopes],
    },
  };
}

/** What the summary says of the people, repositories, findings and credits the demo made. */
async function summarize(
  cast: DemoCast,
  company: DemoCompany,
  { bounty, audit }: DemoRepositories,
): Promise<Pick<DemoSummary, 'company' | 'users' | 'repositories' | 'findingsByStatus' | 'creditsLeft'>> {
  const { services } = cast.container;
  const db = cast.container.database.db;
  const byStatus: Record<string, number> = {};
  const statusRows = await db
    .select({ status: findings.status, n: sql<number>`count(*)::int` })
    .from(findings)
    .where(and(eq(findings.companyId, company.id), sql`${findings.repositoryId} is not null`))
    .groupBy(findings.status);
  for (const row of statusRows) byStatus[row.status] = row.n;
  const repoCounts = await db
    .select({ repositoryId: findings.repositoryId, n: sql<number>`count(*)::int` })
    .from(findings)
    .where(eq(findings.companyId, company.id))
    .groupBy(findings.repositoryId);
  const countOf = (id: string) => repoCounts.find((r) => r.repositoryId === id)?.n ?? 0;
  const balances = await services.credits.getBalances(company.id);

  const order: PersonKey[] = [
    'dana',
    'li',
    'marcus',
    'sofia',
    'hannah',
    'elena',
    'raj',
    'kai',
    'amara',
    'tomas',
  ];
  // Every person gets a token, also those the demo never acted as.
  for (const who of order) await cast.actorOf(who);
  return {
    company: { id: company.id, name: company.name, handle: company.handle },
    users: order.map((who) => ({
      userId: cast.ids[who],
      username: PEOPLE[who].username,
      name: PEOPLE[who].name,
      roles: cast.rolesOf(who),
      token: cast.tokens[who],
    })),
    repositories: [
      { id: bounty.id, name: bounty.name, access: 'public bounty', findings: countOf(bounty.id) },
      { id: audit.id, name: audit.name, access: 'private audit, finished', findings: countOf(audit.id) },
    ],
    findingsByStatus: byStatus,
    creditsLeft: balances.remaining,
  };
}

/**
 * Uploads the sample project as the scanner API would take it (session, PUT, completion),
 * creates a standard scan and waits for the worker to complete it.
 */
async function scanSampleProject(container: Container, actor: ServiceActor): Promise<DemoSummary['scan']> {
  const { services, config } = container;
  const archive = await packSampleProject();
  const sha256 = createHash('sha256').update(archive).digest('hex');
  const baseUrl = publicBaseUrl(config);
  const sessions = await services.uploads.createSourceUploads(
    actor.organizationId,
    {
      workspace: { name: 'acme-vault' },
      archives: [{ filename: 'sample-project.tar.gz', sizeBytes: archive.length }],
    },
    baseUrl,
  );
  const upload = sessions.uploads[0]!;
  const url = new URL(upload.uploadUrl);
  const signature = url.searchParams.get('signature');
  if (url.pathname.endsWith(`/uploads/${upload.uploadId}`) && signature !== null) {
    // The embedded store's signed URL: taken in-process, exactly as its PUT route takes it.
    await services.uploads.receiveUpload(
      upload.uploadId,
      {
        expires: url.searchParams.get('expires') ?? undefined,
        maxBytes: url.searchParams.get('maxBytes') ?? undefined,
        signature,
      },
      Readable.from([archive]),
      archive.length,
      'seed',
    );
  } else {
    // A presigned object-store URL: PUT the archive there like any client would.
    const response = await fetch(upload.uploadUrl, {
      method: 'PUT',
      headers: upload.headers,
      body: archive,
    });
    if (!response.ok) {
      throw new AppError('SERVICE_UNAVAILABLE', {
        message: `The object store refused the sample project upload (${response.status}).`,
      });
    }
  }
  const completed = await services.uploads.completeSourceUpload(actor.organizationId, upload.uploadId, {
    sha256,
  });
  const created = await services.scans.createScan(actor, `seed-demo-${randomUUID()}`, {
    type: 'standard',
    scanSources: [{ kind: 'local', archiveId: completed.archiveId, sha256 }],
  });
  const deadline = Date.now() + SCAN_TIMEOUT_MS;
  for (;;) {
    const scan = await services.scans.getScan(actor, created.body.id);
    if (scan.status === 'completed') {
      return {
        id: scan.id,
        status: scan.status,
        findingsCount: scan.findingsCount,
        workspaceId: scan.workspaceId,
      };
    }
    if (scan.status === 'failed' || scan.status === 'cancelled') {
      throw new AppError('CONFLICT', {
        message: `The demo scan ${scan.id} ended ${scan.status}${scan.error ? `: ${scan.error.message}` : ''}.`,
      });
    }
    if (Date.now() > deadline) {
      throw new AppError('SERVICE_UNAVAILABLE', {
        message: `The demo scan ${scan.id} did not complete within ${SCAN_TIMEOUT_MS / 1000} s (status ${scan.status}). Is the job queue working?`,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** The summary a person reads after the seed: ids, tokens, the service key, and what to try next. */
export function formatDemoSummary(summary: DemoSummary, baseUrl: string): string {
  const lines: string[] = [];
  if (summary.adminCreated) {
    lines.push(
      'Created the platform admin "admin".',
      summary.adminToken
        ? `Its API token (shown once, store it now): ${summary.adminToken}`
        : 'Its API token is the one given in VIGIL_ADMIN_TOKEN.',
      '',
    );
  }
  const manager = summary.users[0];
  const reviewer = summary.users.find((u) => u.roles.includes('reviewer'));
  lines.push(
    `Demo company: ${summary.company.name} (handle ${summary.company.handle}, id ${summary.company.id})`,
    '',
    `Users (tokens expire in ${TOKEN_DAYS} days; demo only):`,
    formatTable(
      summary.users.map((u) => ({ username: u.username, name: u.name, roles: u.roles, token: u.token })),
      ['username', 'name', 'roles', 'token'],
    ),
    '',
    'Repositories:',
    formatTable(
      summary.repositories.map((r) => ({ id: r.id, name: r.name, access: r.access, findings: r.findings })),
      ['id', 'name', 'access', 'findings'],
    ),
    '',
    `Findings by status: ${Object.entries(summary.findingsByStatus)
      .map(([status, n]) => `${status} ${n}`)
      .join(', ')}; ${summary.comments} comments`,
    `Published report: ${summary.report.title} (${summary.report.id})`,
    `Scan of examples/sample-project: ${summary.scan.id}, ${summary.scan.status}, ${summary.scan.findingsCount} findings`,
    '',
    `Service key "ci" (shown once, store it now): ${summary.serviceKey.key}`,
    `  scopes: ${summary.serviceKey.scopes.join(', ')}; credits left: ${summary.creditsLeft}`,
    '',
    'Next steps: start the server (npm start), then for example',
  );
  if (manager) {
    lines.push(
      `  curl -H "Authorization: Bearer ${manager.token}" ${baseUrl}/api/v0/companies/${summary.company.id}/repositories`,
    );
  }
  if (reviewer) {
    lines.push(
      `  curl -H "Authorization: Bearer ${reviewer.token}" "${baseUrl}/api/v0/repositories/all-findings"`,
    );
  }
  lines.push(
    `  curl -H "Authorization: Bearer ${summary.serviceKey.key}" ${baseUrl}/api/scanner/v1/scans/${summary.scan.id}/findings`,
    `  curl ${baseUrl}/api/v0/reports/${summary.report.id}`,
    `  open ${baseUrl}/docs`,
    '',
  );
  return lines.join('\n');
}

/**
 * `vigil seed demo`: on an instance with nothing but (at most) the bootstrap admin, creates the
 * demo through the services and writes the summary. CONFLICT when the instance has data.
 */
export async function runSeedDemo(config: Config, options: RunSeedDemoOptions): Promise<DemoSummary> {
  // Logs go to stderr and only from warnings up, so that stdout is the summary alone.
  const level = ['trace', 'debug'].includes(config.logLevel) ? config.logLevel : 'warn';
  const log = options.container?.log ?? createLogger({ logLevel: level }, pino.destination(2));
  const container = await createContainer(config, { ...options.container, log });
  try {
    await requireEmptyInstance(container);
    const created = await container.services.admin.bootstrapAdmin({ token: config.adminToken });
    const admin = {
      adminToken: created && !config.adminToken ? created.token : null,
      adminCreated: created !== null,
    };
    await container.queue.start({ supervise: true });
    await container.queue.work(container, { concurrency: 1, pollingSeconds: 1 });
    const summary = await seedDemo(container, admin);
    await container.queue.stop({ timeoutMs: config.shutdownTimeoutMs });
    options.out(formatDemoSummary(summary, publicBaseUrl(config)));
    return summary;
  } finally {
    await container.close();
  }
}

/** Adds `vigil seed demo`. */
