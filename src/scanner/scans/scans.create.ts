import { randomUUID } from 'node:crypto';
import type { ServiceActor } from '../../auth/actor.ts';
import type { Tx } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { normalizeCommitId } from '../../integrations/sourcehost/repository-ref.ts';
import {
  createLinked,
  findActiveLinked,
  getWorkspace,
  normalizePrefix,
  parseRepository,
  type Workspace,
} from '../../organization/workspaces/workspaces.service.ts';
import type { IdempotentOutcome } from '../idempotency/idempotency.service.ts';
import { validateLocalSources } from '../sources/scan-sources.ts';
import type { ScansServiceDeps } from './scans.deps.ts';
import { scanThreatModelJob } from './scans.jobs.ts';
import { scansRepo } from './scans.repo.ts';
import type { AcceptedScan, CreateScanRequest, ScanSource } from './scans.schemas.ts';
import type { ScanWorkAccess } from './scans.work.ts';

/** The path createScan's idempotency fingerprint is computed over. */
export const CREATE_SCAN_PATH = '/api/scanner/v1/scans';

/** Checks the source combination; returns the sourcehost repository (if any) and the local sources. */
function checkSources(body: CreateScanRequest) {
  const kinds = new Set(body.scanSources.map((s) => s.kind));
  if (kinds.size > 1) {
    throw new AppError('UNSUPPORTED_REPOSITORY_TYPE', {
      message: 'A scan reads either sourcehost commits or local archives, not both.',
    });
  }
  const hosted = body.scanSources.filter(
    (s): s is Extract<ScanSource, { kind: 'sourcehost' }> => s.kind === 'sourcehost',
  );
  const local = body.scanSources.filter(
    (s): s is Extract<ScanSource, { kind: 'local' }> => s.kind === 'local',
  );
  if (local.length > 0 && body.type !== 'standard') {
    throw new AppError('UNSUPPORTED_REPOSITORY_TYPE', {
      message: `Local-source archives support standard scans only, not ${body.type}.`,
      details: { type: body.type },
    });
  }
  if (hosted.length > 1) {
    throw new AppError('VALIDATION_FAILED', {
      message: 'A scan reads one sourcehost commit.',
      details: { field: 'scanSources' },
    });
  }
  let repository: string | null = null;
  for (const [i, source] of hosted.entries()) {
    if (normalizeCommitId(source.commit) === null) {
      throw new AppError('VALIDATION_FAILED', {
        message: 'A sourcehost commit must be a full 40-hex commit id (not a branch, tag or short id).',
        details: { field: `scanSources.${i}.commit` },
      });
    }
    const name = parseRepository(source.repository).fullName;
    if (repository !== null && name !== repository) {
      throw new AppError('VALIDATION_FAILED', {
        message: 'All sourcehost sources of one scan must name the same repository.',
        details: { field: 'scanSources' },
      });
    }
    repository = name;
  }
  return { repository, hosted, local };
}

async function resolveWorkspace(
  tx: Tx,
  companyId: string,
  body: CreateScanRequest,
  repository: string | null,
  archiveWorkspaceIds: string[],
): Promise<Workspace> {
  if (body.workspaceId) {
    const workspace = await getWorkspace(tx.db, companyId, body.workspaceId);
    if (!workspace.active) {
      throw new AppError('NOT_FOUND', {
        message: 'Workspace not found.',
        details: { workspaceId: body.workspaceId },
      });
    }
    if (repository !== null && workspace.repository !== null && workspace.repository !== repository) {
      throw new AppError('CONFLICT', {
        message: `Workspace ${workspace.id} is linked to ${workspace.repository}, not ${repository}.`,
        details: { workspaceId: workspace.id },
      });
    }
    return workspace;
  }
  if (repository !== null) {
    const matches = await findActiveLinked(tx.db, companyId, repository, body.prefix);
    if (matches.length > 1) {
      throw new AppError('AMBIGUOUS_WORKSPACE', {
        details: { workspaces: matches.map((w) => ({ id: w.id, prefix: w.prefix, name: w.name })) },
      });
    }
    const [only] = matches;
    if (only) return only;
    // createLinked serializes concurrent creations for one repository and prefix.
    return createLinked(tx, companyId, {
      repository,
      ...(body.prefix !== undefined ? { prefix: body.prefix } : {}),
    });
  }
  const distinct = [...new Set(archiveWorkspaceIds)];
  if (distinct.length !== 1 || distinct[0] === undefined) {
    throw new AppError('VALIDATION_FAILED', {
      message: 'The archives belong to different workspaces; pass workspaceId.',
      details: { field: 'workspaceId' },
    });
  }
  return getWorkspace(tx.db, companyId, distinct[0]);
}

/** The explicit baseline scan: one of the same workspace (404 for a scan the company does not have). */
async function checkBaseline(
  tx: Tx,
  companyId: string,
  workspaceId: string,
  body: CreateScanRequest,
): Promise<string | null> {
  if (body.baselineScanId !== undefined && body.baselineBranch !== undefined) {
    throw new AppError('VALIDATION_FAILED', {
      message: 'Name the baseline by scan or by branch, not both.',
      details: { field: 'baselineScanId' },
    });
  }
  if (body.baselineScanId === undefined) return null;
  const baseline = await scansRepo(tx.db).findForCompany(companyId, body.baselineScanId);
  if (!baseline) {
    throw new AppError('NOT_FOUND', {
      message: 'Baseline scan not found.',
      details: { baselineScanId: body.baselineScanId },
    });
  }
  if (baseline.workspaceId !== workspaceId) {
    throw new AppError('VALIDATION_FAILED', {
      message: 'The baseline scan is of another workspace.',
      details: { field: 'baselineScanId' },
    });
  }
  return baseline.id;
}

/** createScan: idempotent creation that reserves the scan type's credits and enqueues the threat model. */
export function createScanCreation(deps: ScansServiceDeps, work: ScanWorkAccess) {
  const { database, credits, idempotency } = deps;
  const { enqueueInTx } = work;
  const creation = {
    /**
     * createScan: validates, resolves the workspace, checks local archives, reserves credits,
     * stores the scan `preparing` and enqueues the threat-model job — in one transaction with the
     * idempotency record, so that a retry with the same key replays instead of creating again.
     */
    async createScan(
      actor: ServiceActor,
      key: string,
      body: CreateScanRequest,
    ): Promise<IdempotentOutcome<AcceptedScan>> {
      return creation.createScanFor(
        // A console session has no service key to record.
        { companyId: actor.organizationId, createdByKey: actor.sessionUserId ? null : actor.credentialId },
        key,
        body,
      );
    },

    /**
     * createScan for an organization, by a service key or (`createdByKey: null`) by the service
     * itself (scans a source-host webhook triggers): the same validation, credits and idempotency.
     */
    async createScanFor(
      origin: { companyId: string; createdByKey: string | null },
      key: string,
      body: CreateScanRequest,
    ): Promise<IdempotentOutcome<AcceptedScan>> {
      const { companyId } = origin;
      return idempotency.execute<AcceptedScan>(
        { companyId, key, method: 'POST', path: CREATE_SCAN_PATH, body },
        async (claim) => {
          const { repository, hosted, local } = checkSources(body);
          const prefix = body.prefix === undefined ? undefined : normalizePrefix(body.prefix);
          if (hosted.length > 0 && !(await scansRepo(database.db).hasSourcehostIntegration(companyId))) {
            throw new AppError('UNSUPPORTED_REPOSITORY_TYPE', {
              message: 'The sourcehost integration is not connected for this organization.',
            });
          }
          // A lost database surfaces as 503 through the error handler, after the claim is released.
          return await database.transaction(async (tx) => {
            await claim.lockInTx(tx);
            const repo = scansRepo(tx.db);
            // Completed archives of this organization with the sha256 given (404 otherwise).
            const archives = await validateLocalSources(tx.db, companyId, local);
            const workspace = await resolveWorkspace(
              tx,
              companyId,
              body,
              repository,
              archives.map((a) => a.workspaceId),
            );
            // A scan's sources are all local or all sourcehost (checkSources), so for local
            // sources `archives` is in the order of `body.scanSources`.
            const sources: ScanSource[] = body.scanSources.map((s, i) =>
              s.kind === 'local'
                ? {
                    kind: 'local',
                    archiveId: s.archiveId,
                    sha256: s.sha256.toLowerCase(),
                    path: archives[i]?.mountPath ?? '',
                  }
                : {
                    kind: 'sourcehost',
                    repository: parseRepository(s.repository).fullName,
                    commit: s.commit,
                  },
            );
            const baselineScanId = await checkBaseline(tx, companyId, workspace.id, body);
            const scanId = randomUUID();
            const cost = credits.costOf(body.type);
            const scan = await repo.insert({
              id: scanId,
              companyId,
              workspaceId: workspace.id,
              type: body.type,
              status: 'preparing',
              sources,
              prefix: prefix ?? workspace.prefix,
              cost,
              createdByKey: origin.createdByKey,
              branch: body.branch ?? null,
              commit: (hosted[0]?.commit ?? body.commit ?? null)?.toLowerCase() ?? null,
              pullRequest: body.pullRequest ?? false,
              baselineScanId,
              baselineBranch: body.baselineBranch ?? null,
            });
            await repo.insertArchives(
              archives.map((archive, position) => ({
                scanId,
                archiveId: archive.archiveId,
                mountPath: archive.mountPath,
                position,
              })),
            );
            // The balance check and the reservation are one statement (see credits.repo).
            await credits.reserveInTx(tx, companyId, scanId, cost);
            await enqueueInTx(tx, scanThreatModelJob, scanId);
            const accepted: AcceptedScan = {
              id: scan.id,
              status: 'preparing',
              type: scan.type,
              workspaceId: scan.workspaceId,
              createdAt: scan.createdAt.toISOString(),
            };
            return claim.completeInTx(tx, { status: 202, body: accepted });
          });
        },
      );
    },
  };
  return creation;
}
