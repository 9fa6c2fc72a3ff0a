import type { Logger } from 'pino';
import { requireManagedCompany } from '../../access/access.service.ts';
import type { Actor } from '../../auth/actor.ts';
import type { CredentialThrottle } from '../../auth/credential-throttle.ts';
import type { SecretBox } from '../../auth/secret-box.ts';
import type { Database, Tx } from '../../db/client.ts';
import { AppError, isAppError } from '../../errors.ts';
import type { IntegrationSettings } from '../../integrations/settings.ts';
import {
  type FetchLike,
  type HostedRepository,
  listHostedRepositories,
  postCommitStatus,
  type RepositoryListing,
  verifyWebhookSignature,
} from '../../integrations/sourcehost/github-rest.ts';
import { normalizeCommitId } from '../../integrations/sourcehost/repository-ref.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { appendAuditEntry } from '../../organization/audit/audit.repo.ts';
import { storedSettingsOf } from '../../organization/integrations/integrations.service.ts';
import { countAtOrAbove, scanSummary, zeroCounts } from '../../organization/scan-summary.ts';
import { workspacesRepo } from '../../organization/workspaces/workspaces.repo.ts';
import {
  createLinked,
  normalizePrefix,
  parseRepository,
} from '../../organization/workspaces/workspaces.service.ts';
import { badStringReason, isUuid } from '../../strings.ts';
import { type CursorCodec, hashFilters, timeAndIdAfter } from '../pagination/cursor.ts';
import { sourcehostCommitStatusJob } from './sourcehost.jobs.ts';
import { type DeliveryRow, sourcehostRepo, type WorkspaceRow } from './sourcehost.repo.ts';

/** Deliveries are kept this long for listing and redelivery. */
export const DELIVERY_RETENTION_DAYS = 7;
/** The accessible-repository list of an integration is reused this long. */
const REPOSITORY_CACHE_MS = 60_000;
/** The commit status context shown on the source host (with the workspace prefix, when it has one). */
export const COMMIT_STATUS_CONTEXT = 'vigil/scan';
/** How long one processing run of a delivery holds it before another process may take it over. */
const CLAIM_SECONDS = 300;

const SEVERITY_ORDER = ['informational', 'low', 'medium', 'high', 'critical'] as const;
export type FailOn = (typeof SEVERITY_ORDER)[number];
type ScanType = 'lite' | 'standard' | 'audit';

/** The scan a push starts: one commit of a linked workspace's repository (a createScan request). */
export interface PushScanRequest {
  type: ScanType;
  workspaceId: string;
  scanSources: Array<{ kind: 'sourcehost'; repository: string; commit: string }>;
}

/** What the webhook route hands over: the raw body exactly as received, and the headers. */
export interface WebhookDelivery {
  /** The sender's address, for the credential throttle. */
  address: string;
  integrationId: string;
  rawBody: Buffer;
  signature: string | undefined;
  event: string | undefined;
  deliveryId: string | undefined;
}

export interface DeliveryResult {
  status: 200 | 202;
  body: DeliveryView;
}

export interface DeliveryView {
  id: string;
  deliveryId: string;
  event: string;
  action: string | null;
  repository: string | null;
  ref: string | null;
  commit: string | null;
  outcome: DeliveryRow['outcome'];
  reason: string | null;
  scanIds: string[];
  duplicate: boolean;
  receivedAt: string;
  processedAt: string | null;
}

export interface LinkedWorkspaceView {
  id: string;
  name: string;
  prefix: string;
  watchBranches: string[];
  autoScanType: ScanType;
  failOn: FailOn;
}

export interface HostedRepositoryView extends HostedRepository {
  linked: boolean;
  workspaces: LinkedWorkspaceView[];
}

export interface LinkInput {
  prefix?: string | undefined;
  watchBranches?: string[] | undefined;
  scanType?: ScanType | undefined;
  failOn?: FailOn | undefined;
}

/** The event parsed out of a push or pull_request body: what to scan, or why not. */
type ParsedEvent =
  | {
      scan: true;
      action: string | null;
      repository: string;
      ref: string;
      commit: string;
      branch: string;
      /** A pull request's head branch (the branch of the scanned commit); null for a push. */
      headBranch: string | null;
      defaultBranch: string | null;
      pullRequest: boolean;
    }
  | {
      scan: false;
      action: string | null;
      repository: string | null;
      ref: string | null;
      commit: string | null;
      reason: string;
    };

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
/** A non-empty string of the payload; one that cannot be stored as text counts as absent. */
const str = (value: unknown): string | null =>
  typeof value === 'string' && value !== '' && badStringReason(value) === null ? value : null;

/** Reads a GitHub `push` or `pull_request` payload (other events are recorded and ignored). */
export function parseEvent(event: string, payload: Record<string, unknown>): ParsedEvent {
  const repository = str(record(payload.repository).full_name);
  const action = str(payload.action);
  if (event === 'push') {
    const ref = str(payload.ref);
    const commit = str(payload.after);
    const base = { action, repository, ref, commit };
    if (!repository || !ref || !commit)
      return { scan: false, ...base, reason: 'The push payload lacks repository, ref or after.' };
    if (!ref.startsWith('refs/heads/'))
      return { scan: false, ...base, reason: `Pushes to ${ref} are not scanned (branches only).` };
    if (payload.deleted === true || /^0{40}$/.test(commit))
      return { scan: false, ...base, reason: 'The branch was deleted.' };
    if (!normalizeCommitId(commit))
      return { scan: false, ...base, reason: 'The pushed commit id is not a 40-hex id.' };
    return {
      scan: true,
      action,
      repository,
      ref,
      commit: commit.toLowerCase(),
      branch: ref.slice('refs/heads/'.length),
      headBranch: null,
      defaultBranch: str(record(payload.repository).default_branch),
      pullRequest: false,
    };
  }
  if (event === 'pull_request') {
    const pr = record(payload.pull_request);
    const commit = str(record(pr.head).sha);
    const branch = str(record(pr.base).ref);
    const base = { action, repository, ref: branch ? `refs/heads/${branch}` : null, commit };
    if (!['opened', 'synchronize', 'reopened'].includes(action ?? ''))
      return {
        scan: false,
        ...base,
        reason: `Pull request action "${action ?? ''}" is not scanned (opened, synchronize, reopened are).`,
      };
    if (!repository || !commit || !branch || !normalizeCommitId(commit))
      return {
        scan: false,
        ...base,
        reason: 'The pull_request payload lacks repository, head.sha or base.ref.',
      };
    return {
      scan: true,
      action,
      repository,
      ref: `refs/heads/${branch}`,
      commit: commit.toLowerCase(),
      branch,
      headBranch: str(record(pr.head).ref),
      defaultBranch: str(record(payload.repository).default_branch),
      pullRequest: true,
    };
  }
  return {
    scan: false,
    action,
    repository,
    ref: null,
    commit: null,
    reason: event === 'ping' ? 'ping' : `Event "${event}" is not scanned (push and pull_request are).`,
  };
}

/** Whether a push or pull request to `branch` is watched by the workspace. */
function watches(workspace: WorkspaceRow, branch: string, defaultBranch: string | null): boolean {
  if (workspace.watchBranches.length === 0) return branch === (defaultBranch ?? 'main');
  return workspace.watchBranches.includes(branch);
}

function toDeliveryView(row: DeliveryRow, duplicate: boolean): DeliveryView {
  return {
    id: row.id,
    deliveryId: row.deliveryId,
    event: row.event,
    action: row.action,
    repository: row.repository,
    ref: row.ref,
    commit: row.commit,
    outcome: row.outcome,
    reason: row.reason,
    scanIds: row.scanIds,
    duplicate,
    receivedAt: row.receivedAt.toISOString(),
    processedAt: row.processedAt ? row.processedAt.toISOString() : null,
  };
}

function toWorkspaceView(row: WorkspaceRow): LinkedWorkspaceView {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    watchBranches: row.watchBranches,
    autoScanType: row.autoScanType,
    failOn: row.failOn,
  };
}

/**
 * The commit status a finished scan earns: `failure` when a new (or reopened) finding nobody
 * dismissed is at or above `failOn`; findings the baseline already had do not fail a change.
 * The description reads like "2 new (1 High, 1 Low) · 3 fixed".
 */
export function commitStatusOf(outcome: {
  status: string;
  failOn: FailOn;
  counts: Array<{ severity: string; count: number }>;
  fixed: number;
}): { state: 'success' | 'failure' | 'error'; description: string } {
  if (outcome.status === 'failed') return { state: 'error', description: 'The scan failed.' };
  if (outcome.status === 'cancelled') return { state: 'error', description: 'The scan was cancelled.' };
  const bySeverity = zeroCounts();
  for (const c of outcome.counts) {
    if (c.severity in bySeverity) bySeverity[c.severity as keyof typeof bySeverity] += c.count;
  }
  const blocking = countAtOrAbove(bySeverity, outcome.failOn);
  return { state: blocking > 0 ? 'failure' : 'success', description: scanSummary(bySeverity, outcome.fixed) };
}

export interface SourcehostServiceDeps {
  database: Database;
  cursors: CursorCodec;
  secretBox: SecretBox;
  queue: () => Pick<JobQueue, 'enqueue'>;
  /** The outbound `fetch` every call to the source host's API goes through. */
  fetch: FetchLike;
  /** createScan's idempotent path (credits, workspace, validation). */
  createScanFor: (
    origin: { companyId: string; createdByKey: string | null },
    key: string,
    body: PushScanRequest,
  ) => Promise<{ body: { id: string } }>;
  /** Base of links in commit statuses (the service's public URL). */
  publicUrl: string;
  /** Failed signatures are throttled per address and per integration. */
  throttle: CredentialThrottle;
  log: Logger;
  now?: () => number;
}

/**
 * The source-host side of scanning: inbound webhooks (push and pull request → scans), commit
 * statuses back to the host, the repositories an integration can reach, and which of them are
 * linked to workspaces.
 */
export function createSourcehostService(deps: SourcehostServiceDeps) {
  const { database, secretBox, log } = deps;
  const now = deps.now ?? Date.now;
  const repositoryCache = new Map<
    string,
    { at: number; value: { repositories: HostedRepository[]; truncated: boolean } }
  >();

  function openCredentials(row: { credentialsEnc: string }): Record<string, string> {
    return JSON.parse(secretBox.open(row.credentialsEnc)) as Record<string, string>;
  }

  function apiOf(integration: { settings: IntegrationSettings; credentialsEnc: string }) {
    const settings = storedSettingsOf('sourcehost', integration.settings);
    const apiBaseUrl = str(settings.apiBaseUrl) ?? str(settings.baseUrl);
    const token = openCredentials(integration).token;
    if (!apiBaseUrl || !token) {
      throw new AppError('INTEGRATION_NOT_CONNECTED', {
        message: 'The sourcehost integration needs settings.apiBaseUrl (or baseUrl) and a token.',
      });
    }
    const listing: RepositoryListing = settings.repositoryListing ?? 'installation';
    return { apiBaseUrl, token, listing, fetch: deps.fetch };
  }

  async function requireSourcehost(companyId: string) {
    const [row] = await database.db.query.integrations.findMany({
      where: (t, { and, eq }) => and(eq(t.companyId, companyId), eq(t.provider, 'sourcehost')),
      limit: 1,
    });
    if (!row)
      throw new AppError('INTEGRATION_NOT_CONNECTED', { message: 'No sourcehost integration is connected.' });
    return row;
  }

  /**
   * Scans what a claimed delivery asks for; records the outcome and releases the claim. A workspace
   * that already got its scan from this delivery is not scanned again, however often it is
   * redelivered (also after the idempotency records expired).
   */
  async function process(delivery: DeliveryRow): Promise<DeliveryRow> {
    const repo = sourcehostRepo(database.db);
    try {
      const event = parseEvent(delivery.event, record(JSON.parse(delivery.body)));
      if (!event.scan) {
        return await repo.recordOutcome(delivery.id, {
          outcome: 'ignored',
          reason: event.reason,
          scanWorkspaces: {},
          refusals: {},
        });
      }
      let repository: string;
      try {
        repository = parseRepository(event.repository).fullName;
      } catch {
        return await repo.recordOutcome(delivery.id, {
          outcome: 'ignored',
          reason: `"${event.repository}" is not a repository name.`,
          scanWorkspaces: {},
          refusals: {},
        });
      }
      const linked = await workspacesRepo(database.db).listActiveLinked(delivery.companyId, repository);
      const watching = linked.filter((w) => watches(w, event.branch, event.defaultBranch));
      if (watching.length === 0) {
        return await repo.recordOutcome(delivery.id, {
          outcome: 'ignored',
          reason:
            linked.length === 0
              ? `No active workspace is linked to ${repository}.`
              : `No workspace linked to ${repository} watches ${event.branch}.`,
          scanWorkspaces: {},
          refusals: {},
        });
      }
      const scanWorkspaces: Record<string, string> = {};
      const refusals: Record<string, number> = {};
      let refusal: { outcome: 'no_credits' | 'failed'; reason: string } | null = null;
      for (const workspace of watching) {
        if (delivery.scanWorkspaces[workspace.id]) continue;
        const generation = delivery.refusals[workspace.id] ?? 0;
        // One key per delivery, workspace and generation: a repeated run replays the scan it
        // created (charged once); after a refusal the next generation may create it.
        const key = `sourcehost.${delivery.id}.${workspace.id}.${generation}`;
        try {
          const result = await deps.createScanFor(
            { companyId: delivery.companyId, createdByKey: null },
            key,
            {
              type: workspace.autoScanType,
              workspaceId: workspace.id,
              scanSources: [{ kind: 'sourcehost', repository, commit: event.commit }],
              // A push compares with its branch's previous scan; a pull request with its base's latest.
              ...(event.pullRequest
                ? {
                    pullRequest: true,
                    baselineBranch: event.branch,
                    ...(event.headBranch ? { branch: event.headBranch } : {}),
                  }
                : { branch: event.branch }),
            },
          );
          scanWorkspaces[workspace.id] = result.body.id;
          await owesCommitStatus(delivery, result.body.id, repository, event.commit, workspace);
        } catch (err) {
          if (!isAppError(err) || err.status >= 500) throw err;
          refusal = {
            outcome: err.code === 'INSUFFICIENT_CREDITS' ? 'no_credits' : 'failed',
            reason: `${err.code}: ${err.message}`,
          };
          // A request still in progress under the same key is not a refusal: the next run replays it.
          if (err.code !== 'IDEMPOTENCY_REQUEST_IN_PROGRESS') refusals[workspace.id] = generation + 1;
        }
      }
      const scanned =
        Object.keys(scanWorkspaces).length > 0 || Object.keys(delivery.scanWorkspaces).length > 0;
      return await repo.recordOutcome(delivery.id, {
        outcome: scanned || !refusal ? 'scanned' : refusal.outcome,
        reason: refusal?.reason ?? null,
        scanWorkspaces,
        refusals,
      });
    } catch (err) {
      // Let another run take it over at once instead of after the claim passes.
      await repo.releaseClaim(delivery.id).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Records that the scan owes a commit status. Locking the scan row orders this with the scan's
   * completion: whichever commits second sees the other and enqueues the post, exactly once.
   */
  async function owesCommitStatus(
    delivery: DeliveryRow,
    scanId: string,
    repository: string,
    commit: string,
    workspace: WorkspaceRow,
  ) {
    await database.transaction(async (tx) => {
      const repo = sourcehostRepo(tx.db);
      const status = await repo.lockScanStatus(scanId);
      await repo.insertCommitStatus({
        companyId: delivery.companyId,
        scanId,
        integrationId: delivery.integrationId,
        repository,
        commit,
        // Several workspaces of one repository each report under their own context.
        context: workspace.prefix ? `${COMMIT_STATUS_CONTEXT}/${workspace.prefix}` : COMMIT_STATUS_CONTEXT,
      });
      if (status === 'completed' || status === 'failed' || status === 'cancelled')
        await enqueueStatusInTx(tx, scanId);
    });
  }

  async function enqueueStatusInTx(tx: Tx, scanId: string): Promise<void> {
    if (await sourcehostRepo(tx.db).markCommitStatusPending(scanId)) {
      await deps.queue().enqueue(sourcehostCommitStatusJob, { scanId }, { tx });
    }
  }

  return {
    /**
     * An inbound webhook delivery. The signature is checked over the raw body before anything is
     * stored (401 otherwise); a delivery id seen before answers 200 and does nothing again.
     */
    async receiveWebhook(input: WebhookDelivery): Promise<DeliveryResult> {
      const integration = await deps.throttle.attempt(
        'sourcehost-webhook',
        { address: input.address, target: { id: input.integrationId } },
        async () => {
          const found = isUuid(input.integrationId)
            ? await sourcehostRepo(database.db).findIntegration(input.integrationId)
            : undefined;
          // An unknown integration and a wrong secret answer alike: the route reveals nothing.
          const secret = found ? openCredentials(found).webhookSecret : undefined;
          if (!found || !secret || !verifyWebhookSignature(secret, input.rawBody, input.signature)) {
            throw new AppError('WEBHOOK_SIGNATURE_INVALID');
          }
          return found;
        },
      );
      if (!input.event || !input.deliveryId || input.deliveryId.length > 200) {
        throw new AppError('VALIDATION_FAILED', {
          message: 'X-GitHub-Event and X-GitHub-Delivery (at most 200 characters) are required.',
        });
      }
      let payload: Record<string, unknown>;
      try {
        payload = record(JSON.parse(input.rawBody.toString('utf8')));
      } catch {
        throw new AppError('MALFORMED_JSON', {
          message: 'The webhook body is not JSON (set the content type to application/json).',
        });
      }
      const parsed = parseEvent(input.event, payload);
      const repo = sourcehostRepo(database.db);
      const inserted = await repo.insertDelivery({
        companyId: integration.companyId,
        integrationId: integration.id,
        deliveryId: input.deliveryId,
        event: input.event,
        action: parsed.action,
        repository: parsed.repository,
        ref: parsed.ref,
        commit: parsed.commit,
        body: input.rawBody.toString('utf8'),
        attempts: 1,
        claimedUntil: new Date(now() + CLAIM_SECONDS * 1000),
      });
      if (!inserted) {
        const existing = (await repo.findDelivery(integration.id, input.deliveryId))!;
        // A delivery whose processing died (still `received`, claim passed) is processed now.
        const claimed =
          existing.outcome === 'received' ? await repo.claimDelivery(existing.id, CLAIM_SECONDS) : undefined;
        if (!claimed) return { status: 200, body: toDeliveryView(existing, true) };
        return { status: 200, body: toDeliveryView(await process(claimed), true) };
      }
      const processed = await process(inserted);
      return { status: 202, body: toDeliveryView(processed, false) };
    },

    /** A page of the company's deliveries of the last 7 days, newest first. */
    async listDeliveries(actor: Actor, companyId: string, query: { limit?: number; next?: string }) {
      await requireManagedCompany(database.db, actor, companyId);
      const filterHash = hashFilters({ companyId, list: 'sourcehost-deliveries' });
      const position = timeAndIdAfter(deps.cursors, query.next, filterHash);
      const after = position && { receivedAt: position.at, id: position.id };
      const limit = query.limit ?? 50;
      const rows = await sourcehostRepo(database.db).listDeliveries(companyId, after, limit);
      const page = deps.cursors.pageOf(rows, {
        limit,
        filterHash,
        ...(query.next !== undefined ? { given: query.next } : {}),
        keyOf: (r) => [r.receivedAtKey, r.delivery.id],
      });
      return { items: page.items.map((r) => toDeliveryView(r.delivery, false)), nextValue: page.nextValue };
    },

    /**
     * Processes a stored delivery again (after granting credits or linking a workspace). A delivery
     * that already created its scans replays them: nothing is charged or scanned twice.
     */
    async redeliver(actor: Actor, companyId: string, id: string): Promise<DeliveryView> {
      await requireManagedCompany(database.db, actor, companyId);
      const existing = await sourcehostRepo(database.db).findDeliveryById(companyId, id);
      if (!existing) throw new AppError('NOT_FOUND', { message: 'Delivery not found.' });
      const claimed = await sourcehostRepo(database.db).claimDelivery(existing.id, CLAIM_SECONDS);
      if (!claimed) {
        throw new AppError('CONFLICT', {
          message: 'The delivery is being processed; try again in a moment.',
        });
      }
      const processed = await process(claimed);
      return toDeliveryView(processed, false);
    },

    /** The repositories the company's sourcehost integration can reach, with their linked workspaces. */
    async listRepositories(actor: Actor, companyId: string, options: { refresh?: boolean } = {}) {
      await requireManagedCompany(database.db, actor, companyId);
      const integration = await requireSourcehost(companyId);
      const cacheKey = `${integration.id}:${integration.updatedAt.toISOString()}`;
      const cached = repositoryCache.get(cacheKey);
      let listed =
        cached && !options.refresh && now() - cached.at < REPOSITORY_CACHE_MS ? cached.value : undefined;
      if (!listed) {
        listed = await listHostedRepositories(apiOf(integration));
        repositoryCache.set(cacheKey, { at: now(), value: listed });
      }
      const linked = await sourcehostRepo(database.db).allLinkedWorkspaces(companyId);
      const byRepository = new Map<string, LinkedWorkspaceView[]>();
      for (const w of linked) {
        const list = byRepository.get(w.repository!) ?? [];
        list.push(toWorkspaceView(w));
        byRepository.set(w.repository!, list);
      }
      const items: HostedRepositoryView[] = listed.repositories.map((r) => {
        const workspaces = byRepository.get(r.fullName.toLowerCase()) ?? byRepository.get(r.fullName) ?? [];
        return { ...r, linked: workspaces.length > 0, workspaces };
      });
      return { items, truncated: listed.truncated };
    },

    /** Links a repository (and prefix) to a workspace that watches it, or updates its settings. */
    async linkRepository(actor: Actor, companyId: string, repository: string, input: LinkInput) {
      const user = await requireManagedCompany(database.db, actor, companyId);
      await requireSourcehost(companyId);
      const fullName = parseRepository(repository).fullName;
      if (input.watchBranches?.some((b) => b.length === 0 || b.length > 255 || /[\s~^:?*[\\]/.test(b))) {
        throw new AppError('VALIDATION_FAILED', {
          message: 'watchBranches holds branch names (no spaces or ~^:?*[\\).',
          details: { field: 'watchBranches' },
        });
      }
      return database.transaction(async (tx) => {
        const workspace = await createLinked(tx, companyId, {
          repository: fullName,
          ...(input.prefix !== undefined ? { prefix: input.prefix } : {}),
        });
        const row = await sourcehostRepo(tx.db).updateWorkspaceSettings(workspace.id, {
          ...(input.watchBranches !== undefined ? { watchBranches: [...new Set(input.watchBranches)] } : {}),
          ...(input.scanType !== undefined ? { autoScanType: input.scanType } : {}),
          ...(input.failOn !== undefined ? { failOn: input.failOn } : {}),
        });
        // Pushes to a linked repository start scans: who linked what is security-relevant.
        await appendAuditEntry(tx.db, {
          companyId,
          action: 'sourcehost_repository_linked',
          performedBy: user.userId,
          details: {
            repository: fullName,
            workspaceId: row.id,
            prefix: row.prefix,
            watchBranches: row.watchBranches,
            scanType: row.autoScanType,
          },
        });
        return { repository: fullName, workspace: toWorkspaceView(row) };
      });
    },

    /** Unlinks: the workspace of (repository, prefix) stops watching (its scans stay). */
    async unlinkRepository(actor: Actor, companyId: string, repository: string, prefix: string | undefined) {
      const user = await requireManagedCompany(database.db, actor, companyId);
      const fullName = parseRepository(repository).fullName;
      const normalized = normalizePrefix(prefix);
      const linked = await workspacesRepo(database.db).listActiveLinked(companyId, fullName, normalized);
      const [target] = linked;
      if (!target)
        throw new AppError('NOT_FOUND', {
          message: `${fullName} is not linked${normalized ? ` at ${normalized}` : ''}.`,
        });
      await database.transaction(async (tx) => {
        await sourcehostRepo(tx.db).updateWorkspaceSettings(target.id, { active: false });
        await appendAuditEntry(tx.db, {
          companyId,
          action: 'sourcehost_repository_unlinked',
          performedBy: user.userId,
          details: { repository: fullName, workspaceId: target.id, prefix: normalized },
        });
      });
    },

    /** In the transaction that ends a scan: enqueue its commit status if it owes one. */
    async afterScanFinished(tx: Tx, scanId: string): Promise<void> {
      await enqueueStatusInTx(tx, scanId);
    },

    /**
     * Posts a finished scan's commit status. The row lock and its state make a second run of the
     * job (a retry after the post succeeded but the worker died) post nothing again.
     */
    async postStatus(scanId: string, context: { finalAttempt: boolean }): Promise<void> {
      const failure = await database.transaction(async (tx) => {
        const repo = sourcehostRepo(tx.db);
        const row = await repo.lockCommitStatus(scanId);
        if (!row || row.state === 'posted' || row.state === 'failed') return null;
        const outcome = await repo.scanOutcome(scanId);
        if (!outcome) return null;
        const integration = await repo.findIntegration(row.integrationId);
        if (!integration) {
          await repo.updateCommitStatus(row.id, {
            state: 'failed',
            lastError: 'The sourcehost integration was removed.',
          });
          return null;
        }
        const { state, description } = commitStatusOf({ ...outcome, failOn: outcome.failOn as FailOn });
        try {
          await postCommitStatus({
            ...apiOf(integration),
            repository: row.repository,
            commit: row.commit,
            state,
            description,
            targetUrl: `${deps.publicUrl}/api/scanner/v1/scans/${scanId}/findings`,
            context: row.context,
          });
        } catch (err) {
          // A refused destination or a redirect answers the same on every retry: failed for good.
          const permanent = err instanceof AppError && err.details?.permanent === true;
          await repo.updateCommitStatus(row.id, {
            attempts: row.attempts + 1,
            lastError: err instanceof Error ? err.message : String(err),
            ...(context.finalAttempt || permanent ? { state: 'failed' } : {}),
          });
          return { err, permanent };
        }
        await repo.updateCommitStatus(row.id, {
          state: 'posted',
          postedState: state,
          description,
          attempts: row.attempts + 1,
          postedAt: new Date(),
          lastError: null,
        });
        return null;
      });
      if (failure === null) return;
      if (context.finalAttempt || failure.permanent) {
        log.warn({ scanId, err: failure.err }, 'the commit status could not be posted; giving up');
        return;
      }
      // Thrown after the attempt was recorded, so that the queue retries it with backoff.
      throw failure.err;
    },

    /** Enqueues the commit status of every finished scan whose status still waits; returns how many. */
    async sweepCommitStatuses(): Promise<number> {
      let enqueued = 0;
      for (const scanId of await sourcehostRepo(database.db).waitingForFinishedScans(100)) {
        await database.transaction(async (tx) => {
          await sourcehostRepo(tx.db).lockScanStatus(scanId);
          if (await sourcehostRepo(tx.db).markCommitStatusPending(scanId)) {
            await deps.queue().enqueue(sourcehostCommitStatusJob, { scanId }, { tx });
            enqueued += 1;
          }
        });
      }
      return enqueued;
    },

    /** Deletes deliveries older than the retention period. */
    async purgeDeliveries(): Promise<number> {
      return sourcehostRepo(database.db).deleteDeliveriesBefore(
        new Date(now() - DELIVERY_RETENTION_DAYS * 86_400_000),
      );
    },
  };
}

export type SourcehostService = ReturnType<typeof createSourcehostService>;
