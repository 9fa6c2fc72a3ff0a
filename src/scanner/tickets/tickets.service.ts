/**
 * Finding tickets: list, link an existing ticket, and send a finding to a tracker without ever
 * creating a second ticket.
 *
 * A send writes its export row (unique per finding and provider) before the provider is called;
 * that row is the lock. Definitive refusals leave it `failed` (a later send retries with the same
 * client id); a timeout, reset or 5xx leaves it `unknown`, and the next send first reconciles
 * (tracker_a by the issue UUID we chose, tracker_b by the finding label) and links what it finds.
 * An `in_progress` row whose lease ran out (its process died between the provider call and the
 * write) is reconciled the same way. No database transaction is open during a provider call.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ServiceActor } from '../../auth/actor.ts';
import { type Database, isUniqueViolation } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { parseIssueRef, parseIssueRefOrThrow } from '../../integrations/trackers/issue-ref.ts';
import { buildFindingLabel } from '../../integrations/trackers/ticket-content.ts';
import type {
  ProviderOutcome,
  TicketFindingContent,
  TrackerIssue,
  TrackerProvider,
} from '../../integrations/trackers/tracker.types.ts';
import { resolveTrackerBIssue } from '../../integrations/trackers/tracker-b.ts';
import { toTrackerAppError } from '../../integrations/trackers/tracker-errors.ts';
import {
  type FindingExportRow,
  type FindingForTicket,
  type FindingTicketRow,
  ticketsRepo,
} from './tickets.repo.ts';
import type {
  FindingIssueExport,
  FindingTicket,
  IssueTrackerSendResult,
  LinkFindingTicketBody,
  TicketLinkResult,
  TicketListResult,
} from './tickets.schemas.ts';
import {
  loadTrackerAConnection,
  loadTrackerBConnections,
  resolveTrackerTarget,
  type TrackerAdapterOptions,
  type TrackerConnectionSource,
  type TrackerTarget,
} from './tracker-connections.ts';

/** What the tickets service needs. */
export interface TicketsServiceDeps {
  readonly database: Database;
  readonly integrations: TrackerConnectionSource;
  /** The origin of links back to Vigil (`VIGIL_PUBLIC_URL`, else `http://localhost:PORT`). */
  readonly publicUrl: string;
  /** Adapter timeouts, rate-limit retries and the tracker_b reconcile window. */
  readonly trackerOptions?: TrackerAdapterOptions;
  /**
   * How long an `in_progress` export locks its finding (default 300 s). It must outlast the
   * longest provider call of one attempt (timeouts, rate-limit waits and the reconcile window),
   * or a second process could reconcile before the first one's create has landed.
   */
  readonly leaseSeconds?: number;
  readonly log?: Logger;
}

const DEFAULT_LEASE_SECONDS = 300;

/** The page of a finding in Vigil, which tickets link back to. */
export function buildFindingUrl(publicUrl: string, findingId: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/findings/${findingId}`;
}

function toTicketView(row: FindingTicketRow): FindingTicket {
  return {
    id: row.id,
    findingId: row.findingId,
    provider: row.provider,
    key: row.key,
    externalId: row.externalId,
    url: row.url,
    title: row.title,
    status: row.status,
    linkedAt: row.linkedAt.toISOString(),
    source: row.source,
  };
}

function toExportView(row: FindingExportRow, ticket: FindingTicketRow | undefined): FindingIssueExport {
  return {
    id: row.id,
    findingId: row.findingId,
    provider: row.provider,
    state: row.state,
    ...(ticket ? { ticket: toTicketView(ticket) } : {}),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...(row.error ? { error: row.error } : {}),
  };
}

/** A link request must wait while an export runs or its outcome is not known: it may have made a ticket. */
function blocksLink(row: FindingExportRow | undefined): boolean {
  return row !== undefined && (row.state === 'in_progress' || row.state === 'unknown');
}

function exportInProgress(row: FindingExportRow): AppError {
  return new AppError('EXPORT_IN_PROGRESS', {
    message:
      row.state === 'unknown'
        ? 'The last export of this finding may have created a ticket; send it again to reconcile before linking.'
        : 'An export of this finding is in progress.',
    details: { exportId: row.id, state: row.state },
  });
}

function toContent(finding: FindingForTicket, url: string): TicketFindingContent {
  const location = finding.location;
  return {
    id: finding.id,
    title: finding.title,
    description: finding.description,
    severity: finding.severity,
    ...(location &&
    typeof location.file === 'string' &&
    Number.isInteger(location.startLine) &&
    Number.isInteger(location.endLine)
      ? { location: { file: location.file, startLine: location.startLine, endLine: location.endLine } }
      : {}),
    identifiers: Array.isArray(finding.identifiers) ? finding.identifiers : [],
    url,
  };
}

/** Where one attempt stands after the claim. */
type Claim =
  | { readonly kind: 'done'; readonly result: IssueTrackerSendResult }
  | {
      readonly kind: 'claimed';
      readonly row: FindingExportRow;
      /** `reconcile` when an earlier attempt may have created the ticket. */
      readonly mode: 'create' | 'reconcile';
    };

/** The finding-ticket service (getFindingTickets, linkFindingTicket, sendFindingToIssueTracker). */
export function createTicketsService(deps: TicketsServiceDeps) {
  const { database, integrations, log } = deps;
  const trackerOptions = deps.trackerOptions ?? {};
  const leaseSeconds = deps.leaseSeconds ?? DEFAULT_LEASE_SECONDS;

  async function requireFinding(companyId: string, findingId: string): Promise<FindingForTicket> {
    const finding = await ticketsRepo(database.db).findFinding(companyId, findingId);
    if (!finding) throw new AppError('NOT_FOUND', { message: 'Finding not found.' });
    return finding;
  }

  /** Reads the issue a reference names through the company's integration; changes nothing there. */
  async function verifyReference(
    companyId: string,
    provider: TrackerProvider,
    issueRef: string,
  ): Promise<{ issue: TrackerIssue; integrationId: string }> {
    if (provider === 'tracker_a') {
      const connection = await loadTrackerAConnection(integrations, companyId, trackerOptions);
      if (!connection)
        throw new AppError('INTEGRATION_NOT_CONNECTED', { message: 'No tracker_a workspace is connected.' });
      let workspaceUrlKey = connection.workspaceUrlKey;
      const context = () => ({
        workspaceUrlKey,
        ...(connection.appUrl ? { appUrl: connection.appUrl } : {}),
      });
      // Without a saved urlKey, a URL is checked against the workspace the credential belongs to.
      if (workspaceUrlKey === null && parseIssueRef(provider, issueRef, context()).kind === 'not_connected') {
        const fetched = await connection.adapter.fetchWorkspaceUrlKey();
        if (fetched.kind === 'ok') workspaceUrlKey = fetched.value;
        else if (fetched.kind !== 'not_found') throw toTrackerAppError(provider, fetched);
      }
      const ref = parseIssueRefOrThrow(provider, issueRef, context());
      const outcome = await connection.adapter.verifyIssue(ref);
      if (outcome.kind !== 'ok') throw toTrackerAppError(provider, outcome);
      return { issue: outcome.value, integrationId: connection.integrationId };
    }
    const connections = await loadTrackerBConnections(integrations, companyId, trackerOptions);
    if (connections.length === 0)
      throw new AppError('INTEGRATION_NOT_CONNECTED', { message: 'No tracker_b site is connected.' });
    const ref = parseIssueRefOrThrow(provider, issueRef, { sites: connections.map((c) => c.siteUrl) });
    if (ref.provider !== 'tracker_b') throw new AppError('INVALID_ISSUE_REF');
    const resolution = await resolveTrackerBIssue(
      ref,
      connections.map((c) => c.adapter),
    );
    if (resolution.kind !== 'ok') throw toTrackerAppError(provider, resolution);
    const site = connections.find((c) => c.siteUrl === resolution.siteUrl);
    return { issue: resolution.value, integrationId: site?.integrationId ?? connections[0]!.integrationId };
  }

  /**
   * Decides, under the finding lock, what this send does: return the existing ticket, refuse
   * (running export, missing integration or destination), or claim the export for an attempt.
   */
  async function claimExport(
    companyId: string,
    findingId: string,
    provider: TrackerProvider,
    target: TrackerTarget | AppError,
  ): Promise<Claim> {
    return database.transaction(async (tx) => {
      const repo = ticketsRepo(tx.db);
      // Serializes this decision with every other send and link of the finding, on every replica.
      if (!(await repo.lockFinding(companyId, findingId))) {
        throw new AppError('NOT_FOUND', { message: 'Finding not found.' });
      }
      const existing = await repo.findExport(findingId, provider);
      const ticket = await repo.findTicket(findingId, provider);
      if (ticket && existing?.row.state === 'created' && existing.row.ticketId === ticket.id) {
        return { kind: 'done', result: { created: false, export: toExportView(existing.row, ticket) } };
      }
      if (ticket && !(existing && blocksLink(existing.row))) {
        // A linked ticket counts as sent: the export records it and no provider call is made.
        const row = await repo.recordExistingTicket({
          companyId,
          findingId,
          provider,
          ticket,
          clientRef: { clientId: randomUUID(), label: buildFindingLabel(findingId) },
        });
        return { kind: 'done', result: { created: false, export: toExportView(row, ticket) } };
      }
      if (existing && existing.row.state === 'in_progress' && !existing.leaseExpired) {
        throw exportInProgress(existing.row);
      }
      if (target instanceof AppError) throw target;
      if (!existing) {
        const row = await repo.insertExport({
          companyId,
          findingId,
          provider,
          integrationId: target.integrationId,
          // The client id is chosen now and kept for every later attempt of this export.
          clientRef: { clientId: randomUUID(), label: buildFindingLabel(findingId) },
          leaseSeconds,
        });
        if (!row) throw new AppError('EXPORT_IN_PROGRESS');
        return { kind: 'claimed', row, mode: 'create' };
      }
      const row = await repo.reclaimExport({
        id: existing.row.id,
        expectedAttempts: existing.row.attempts,
        integrationId: target.integrationId,
        leaseSeconds,
      });
      if (!row) throw exportInProgress(existing.row);
      // A failed attempt was refused definitively: nothing exists. Anything else may have created it.
      return { kind: 'claimed', row, mode: existing.row.state === 'failed' ? 'create' : 'reconcile' };
    });
  }

  /** The export of (finding, provider) and its ticket as the API shows them. */
  async function readExportView(
    findingId: string,
    provider: TrackerProvider,
  ): Promise<FindingIssueExport | null> {
    const repo = ticketsRepo(database.db);
    const current = await repo.findExport(findingId, provider);
    if (!current) return null;
    const ticket = current.row.ticketId ? await repo.findTicketById(current.row.ticketId) : undefined;
    return toExportView(current.row, ticket);
  }

  /**
   * Writes the ticket and the `created` export for the issue an attempt made or found. When the
   * attempt no longer owns the export (its lease ran out and a later attempt took over), nothing
   * is written: the later attempt reconciles to this same issue.
   */
  async function recordCreated(
    claim: FindingExportRow,
    issue: TrackerIssue,
    integrationId: string,
  ): Promise<IssueTrackerSendResult> {
    const written = await database.transaction(async (tx) => {
      const repo = ticketsRepo(tx.db);
      // Under the finding lock no link or reclaim can slip in between this check and the writes.
      await repo.lockFinding(claim.companyId, claim.findingId);
      const current = await repo.findExport(claim.findingId, claim.provider);
      const owned = current?.row.state === 'in_progress' && current.row.attempts === claim.attempts;
      if (!current || !owned) return null;
      const ticket = await repo.insertTicket({
        companyId: claim.companyId,
        findingId: claim.findingId,
        provider: claim.provider,
        integrationId,
        key: issue.key,
        externalId: issue.externalId,
        url: issue.url,
        title: issue.title,
        status: issue.status,
        source: 'created',
      });
      const settled = await repo.settleExport({
        id: claim.id,
        attempt: claim.attempts,
        state: 'created',
        ticketId: ticket.id,
        error: null,
      });
      return { created: true, export: toExportView(settled ?? current.row, ticket) };
    });
    if (written) return written;
    const view = await readExportView(claim.findingId, claim.provider);
    if (!view) throw new AppError('NOT_FOUND', { message: 'Finding not found.' });
    return { created: false, export: view };
  }

  /** Records a failed or unknown outcome and returns the 502 to answer with. */
  async function recordFailure(
    claim: FindingExportRow,
    state: 'failed' | 'unknown',
    outcome: Exclude<ProviderOutcome<TrackerIssue>, { kind: 'ok' }>,
  ): Promise<AppError> {
    const message =
      outcome.kind === 'not_found' ? 'The provider could not find the destination.' : outcome.message;
    const error = {
      code: state === 'failed' ? 'PROVIDER_ERROR' : 'PROVIDER_OUTCOME_UNKNOWN',
      message,
    };
    const settled = await ticketsRepo(database.db).settleExport({
      id: claim.id,
      attempt: claim.attempts,
      state,
      ticketId: null,
      error,
    });
    log?.warn(
      {
        findingId: claim.findingId,
        provider: claim.provider,
        exportId: claim.id,
        state,
        outcome: outcome.kind,
      },
      `finding export ${state}: ${message}`,
    );
    const base =
      outcome.kind === 'not_found'
        ? new AppError('PROVIDER_ERROR', { message })
        : toTrackerAppError(claim.provider, outcome);
    const exportView = settled
      ? toExportView(settled, undefined)
      : await readExportView(claim.findingId, claim.provider);
    return new AppError('PROVIDER_ERROR', {
      message:
        state === 'unknown'
          ? `${message}. The ticket may exist: the next send looks for it before creating one.`
          : base.message,
      details: {
        provider: claim.provider,
        ...(base.details ?? {}),
        ...(state === 'unknown' ? { ambiguous: true } : {}),
        ...(exportView ? { export: exportView } : {}),
      },
      ...(base.headers ? { headers: base.headers } : {}),
    });
  }

  /** One attempt at the provider for a claimed export: reconcile first when needed, then create. */
  async function attempt(
    claim: FindingExportRow,
    mode: 'create' | 'reconcile',
    target: TrackerTarget,
    finding: FindingForTicket,
  ): Promise<IssueTrackerSendResult> {
    const { clientId } = claim.clientRef;
    if (mode === 'reconcile') {
      const found = await target.adapter.findCreated({
        clientId,
        findingId: finding.id,
        destination: target.destination,
      });
      if (found.kind === 'ok') {
        log?.info(
          { findingId: finding.id, provider: claim.provider, exportId: claim.id },
          'finding export reconciled with the ticket an earlier attempt created',
        );
        return recordCreated(claim, found.value, target.integrationId);
      }
      // Only a search that worked can say "not there"; otherwise the outcome stays unknown.
      if (found.kind !== 'not_found') throw await recordFailure(claim, 'unknown', found);
      // The search may have used much of the lease: renew it so the create runs under a live one.
      if (!(await ticketsRepo(database.db).extendLease(claim.id, claim.attempts, leaseSeconds))) {
        const view = await readExportView(claim.findingId, claim.provider);
        if (view?.state === 'created') return { created: false, export: view };
        throw new AppError('EXPORT_IN_PROGRESS');
      }
    }
    const content = toContent(finding, buildFindingUrl(deps.publicUrl, finding.id));
    // The same client id on every attempt: tracker_a refuses a second issue with it.
    const outcome = await target.adapter.createIssue({
      clientId,
      finding: content,
      destination: target.destination,
    });
    if (outcome.kind === 'ok') return recordCreated(claim, outcome.value, target.integrationId);
    if (outcome.kind === 'ambiguous') throw await recordFailure(claim, 'unknown', outcome);
    throw await recordFailure(claim, 'failed', outcome);
  }

  return {
    /** getFindingTickets: the tickets linked to the company's finding. */
    async listTickets(actor: ServiceActor, findingId: string): Promise<TicketListResult> {
      await requireFinding(actor.organizationId, findingId);
      const rows = await ticketsRepo(database.db).listTickets(findingId);
      return { tickets: rows.map(toTicketView) };
    },

    /**
     * linkFindingTicket: verifies the issue read-only through the integration and links it.
     * The identical link again → `linked: false`; another ticket already linked →
     * `TICKET_ALREADY_LINKED`; a running or unsettled export → `EXPORT_IN_PROGRESS`.
     */
    async linkTicket(
      actor: ServiceActor,
      findingId: string,
      body: LinkFindingTicketBody,
    ): Promise<TicketLinkResult> {
      const companyId = actor.organizationId;
      const { provider } = body;
      await requireFinding(companyId, findingId);
      const before = await ticketsRepo(database.db).findExport(findingId, provider);
      if (before && blocksLink(before.row)) throw exportInProgress(before.row);
      // The provider is asked outside any transaction; the decision below re-reads under the lock.
      const { issue, integrationId } = await verifyReference(companyId, provider, body.issueRef);
      return database.transaction(async (tx) => {
        const repo = ticketsRepo(tx.db);
        if (actor.sessionUserId) await repo.actAs(actor.sessionUserId);
        // Serializes with sends of this finding: a claim and a link never both see "no ticket".
        if (!(await repo.lockFinding(companyId, findingId))) {
          throw new AppError('NOT_FOUND', { message: 'Finding not found.' });
        }
        const current = await repo.findExport(findingId, provider);
        if (current && blocksLink(current.row)) throw exportInProgress(current.row);
        const existing = await repo.findTicket(findingId, provider);
        if (existing) {
          if (existing.externalId !== issue.externalId) {
            throw new AppError('TICKET_ALREADY_LINKED', {
              message: `${existing.key} is already linked to this finding for ${provider}.`,
              details: { ticket: toTicketView(existing) },
            });
          }
          const refreshed = await repo.refreshTicket(existing.id, {
            key: issue.key,
            url: issue.url,
            title: issue.title,
            status: issue.status,
          });
          return { linked: false, ticket: toTicketView(refreshed) };
        }
        let ticket: FindingTicketRow;
        try {
          ticket = await repo.insertTicket({
            companyId,
            findingId,
            provider,
            integrationId,
            key: issue.key,
            externalId: issue.externalId,
            url: issue.url,
            title: issue.title,
            status: issue.status,
            source: 'linked',
          });
        } catch (err) {
          if (isUniqueViolation(err)) throw new AppError('TICKET_ALREADY_LINKED');
          throw err;
        }
        // A failed export made nothing: the finding is now in the tracker through the link.
        if (current?.row.state === 'failed') {
          await repo.recordExistingTicket({
            companyId,
            findingId,
            provider,
            ticket,
            clientRef: current.row.clientRef,
          });
        }
        return { linked: true, ticket: toTicketView(ticket) };
      });
    },

    /**
     * sendFindingToIssueTracker: creates a ticket in the saved destination, exactly once per
     * finding and provider. Already sent or linked → `created: false` with the existing export.
     */
    async sendFinding(
      actor: ServiceActor,
      findingId: string,
      provider: TrackerProvider,
    ): Promise<IssueTrackerSendResult> {
      const companyId = actor.organizationId;
      const finding = await requireFinding(companyId, findingId);
      // Read before the claim; its errors only count when there is no ticket to return.
      const target = await resolveTrackerTarget(integrations, companyId, provider, trackerOptions).catch(
        (err: unknown) => {
          if (err instanceof AppError) return err;
          throw err;
        },
      );
      const claim = await claimExport(companyId, findingId, provider, target);
      if (claim.kind === 'done') return claim.result;
      if (target instanceof AppError) throw target;
      return attempt(claim.row, claim.mode, target, finding);
    },
  };
}

/** The tickets service. */
export type TicketsService = ReturnType<typeof createTicketsService>;
