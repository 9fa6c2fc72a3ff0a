/**
 * Builds tracker adapters from a company's stored integrations: which credential becomes which
 * authentication, where the API lives, and where new tickets go (the saved destination).
 */
import { AppError } from '../../errors.ts';
import type { TrackerADestination, TrackerBDestination } from '../../integrations/trackers/tracker.types.ts';
import { createTrackerAAdapter, type TrackerAAdapter } from '../../integrations/trackers/tracker-a.ts';
import {
  createTrackerBAdapter,
  normalizeSiteUrl,
  type TrackerBAdapter,
  type TrackerBOptions,
} from '../../integrations/trackers/tracker-b.ts';
import type {
  ConnectedIntegration,
  IntegrationsService,
} from '../../organization/integrations/integrations.service.ts';

/** Where connections come from. */
export type TrackerConnectionSource = Pick<IntegrationsService, 'getConnections'>;

/** Timeouts, retries and the reconcile window of the adapters (both providers). */
export type TrackerAdapterOptions = TrackerBOptions;

/** The connected tracker_a workspace. */
export interface TrackerAConnection {
  readonly integrationId: string;
  readonly adapter: TrackerAAdapter;
  /** `settings.workspaceUrlKey`, the first path segment of the workspace's issue URLs. */
  readonly workspaceUrlKey: string | null;
  /** `settings.appUrl`, the origin of issue URLs (the adapter's default when absent). */
  readonly appUrl: string | undefined;
  /** `settings.destination`, or null when none is saved. */
  readonly destination: TrackerADestination | null;
}

/** One connected tracker_b site. */
export interface TrackerBConnection {
  readonly integrationId: string;
  readonly siteUrl: string;
  readonly adapter: TrackerBAdapter;
  readonly destination: TrackerBDestination | null;
  /** `settings.default`: this site's destination wins when several sites have one. */
  readonly isDefault: boolean;
}

/** Where a send goes: the adapter and the destination of one connection. */
export type TrackerTarget =
  | {
      readonly provider: 'tracker_a';
      readonly integrationId: string;
      readonly adapter: TrackerAAdapter;
      readonly destination: TrackerADestination;
    }
  | {
      readonly provider: 'tracker_b';
      readonly integrationId: string;
      readonly adapter: TrackerBAdapter;
      readonly destination: TrackerBDestination;
    };

const DEFAULT_TRACKER_A_URL = 'https://api.linear.app/graphql';

function readString(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function readTrackerADestination(settings: Record<string, unknown>): TrackerADestination | null {
  const raw = asRecord(settings.destination);
  const teamId = raw ? readString(raw, 'teamId') : undefined;
  if (!raw || teamId === undefined) return null;
  const labelIds = Array.isArray(raw.labelIds)
    ? raw.labelIds.filter((l): l is string => typeof l === 'string')
    : undefined;
  const priority = raw.priority;
  const validPriority =
    priority === 0 || priority === 1 || priority === 2 || priority === 3 || priority === 4
      ? priority
      : undefined;
  return {
    provider: 'tracker_a',
    teamId,
    ...(labelIds && labelIds.length > 0 ? { labelIds } : {}),
    ...(validPriority !== undefined ? { priority: validPriority } : {}),
  };
}

function readTrackerBDestination(
  siteUrl: string,
  settings: Record<string, unknown>,
): TrackerBDestination | null {
  const raw = asRecord(settings.destination);
  const projectKey = raw ? readString(raw, 'projectKey') : undefined;
  if (!raw || projectKey === undefined) return null;
  const issueType = readString(raw, 'issueType');
  return { provider: 'tracker_b', siteUrl, projectKey, ...(issueType ? { issueType } : {}) };
}

function buildTrackerA(connection: ConnectedIntegration, options: TrackerAdapterOptions): TrackerAConnection {
  const { credentials, settings } = connection;
  const apiUrl = readString(settings, 'baseUrl') ?? DEFAULT_TRACKER_A_URL;
  const apiKey = credentials.apiKey;
  const accessToken = credentials.accessToken;
  const auth = apiKey
    ? ({ type: 'api_key', apiKey } as const)
    : accessToken
      ? ({ type: 'oauth', accessToken } as const)
      : null;
  if (!auth) {
    throw new AppError('INTEGRATION_NOT_CONNECTED', {
      message: 'The tracker_a integration has neither an API key nor an access token.',
    });
  }
  return {
    integrationId: connection.id,
    adapter: createTrackerAAdapter({ apiUrl, auth }, options),
    workspaceUrlKey: readString(settings, 'workspaceUrlKey') ?? null,
    appUrl: readString(settings, 'appUrl'),
    destination: readTrackerADestination(settings),
  };
}

function buildTrackerB(
  connection: ConnectedIntegration,
  options: TrackerAdapterOptions,
): TrackerBConnection | null {
  const { credentials, settings } = connection;
  const site = connection.site || readString(settings, 'siteUrl');
  // A connection without a site cannot be told apart from the others nor linked to.
  if (!site) return null;
  const siteUrl = normalizeSiteUrl(site);
  const { email, apiToken, accessToken } = credentials;
  const auth =
    email && apiToken
      ? ({ type: 'basic', email, apiToken } as const)
      : accessToken
        ? ({ type: 'bearer', accessToken } as const)
        : null;
  if (!auth) return null;
  // OAuth tokens are only accepted by the gateway (`…/ex/jira/{cloudId}`), kept in settings.baseUrl.
  const apiBaseUrl = readString(settings, 'baseUrl');
  return {
    integrationId: connection.id,
    siteUrl,
    adapter: createTrackerBAdapter({ siteUrl, ...(apiBaseUrl ? { apiBaseUrl } : {}), auth }, options),
    destination: readTrackerBDestination(siteUrl, settings),
    isDefault: settings.default === true,
  };
}

/** The company's tracker_a workspace, or null when none is connected. */
export async function loadTrackerAConnection(
  source: TrackerConnectionSource,
  companyId: string,
  options: TrackerAdapterOptions = {},
): Promise<TrackerAConnection | null> {
  const connections = await source.getConnections(companyId, 'tracker_a');
  // One workspace per company: the connection without a site, else the first by site.
  const connection = connections.find((c) => c.site === '') ?? connections[0];
  return connection ? buildTrackerA(connection, options) : null;
}

/** Every usable tracker_b site of the company (sites with incomplete credentials are left out). */
export async function loadTrackerBConnections(
  source: TrackerConnectionSource,
  companyId: string,
  options: TrackerAdapterOptions = {},
): Promise<TrackerBConnection[]> {
  const connections = await source.getConnections(companyId, 'tracker_b');
  return connections.map((c) => buildTrackerB(c, options)).filter((c): c is TrackerBConnection => c !== null);
}

/**
 * The tracker_b site new tickets go to: the one site with a saved destination; among several,
 * the one marked `settings.default: true`. Anything else is `DESTINATION_NOT_CONFIGURED`, because
 * guessing a site would put the ticket where nobody expects it.
 */
export function selectTrackerBDestination(connections: readonly TrackerBConnection[]): TrackerBConnection & {
  destination: TrackerBDestination;
} {
  const withDestination = connections.filter(
    (c): c is TrackerBConnection & { destination: TrackerBDestination } => c.destination !== null,
  );
  if (withDestination.length === 1) return withDestination[0]!;
  if (withDestination.length === 0) {
    throw new AppError('DESTINATION_NOT_CONFIGURED', {
      message: 'No tracker_b site has a destination (settings.destination with projectKey).',
    });
  }
  const defaults = withDestination.filter((c) => c.isDefault);
  if (defaults.length === 1) return defaults[0]!;
  throw new AppError('DESTINATION_NOT_CONFIGURED', {
    message: `${withDestination.length} tracker_b sites have a destination; mark exactly one with settings.default: true.`,
    details: { sites: withDestination.map((c) => c.siteUrl) },
  });
}

/**
 * The adapter and destination a send of `provider` uses. Throws `INTEGRATION_NOT_CONNECTED` or
 * `DESTINATION_NOT_CONFIGURED`.
 */
export async function resolveTrackerTarget(
  source: TrackerConnectionSource,
  companyId: string,
  provider: 'tracker_a' | 'tracker_b',
  options: TrackerAdapterOptions = {},
): Promise<TrackerTarget> {
  if (provider === 'tracker_a') {
    const connection = await loadTrackerAConnection(source, companyId, options);
    if (!connection)
      throw new AppError('INTEGRATION_NOT_CONNECTED', { message: 'No tracker_a workspace is connected.' });
    if (!connection.destination) {
      throw new AppError('DESTINATION_NOT_CONFIGURED', {
        message: 'The tracker_a integration has no destination (settings.destination with teamId).',
      });
    }
    return {
      provider,
      integrationId: connection.integrationId,
      adapter: connection.adapter,
      destination: connection.destination,
    };
  }
  const connections = await loadTrackerBConnections(source, companyId, options);
  if (connections.length === 0) {
    throw new AppError('INTEGRATION_NOT_CONNECTED', { message: 'No tracker_b site is connected.' });
  }
  const chosen = selectTrackerBDestination(connections);
  return {
    provider,
    integrationId: chosen.integrationId,
    adapter: chosen.adapter,
    destination: chosen.destination,
  };
}
