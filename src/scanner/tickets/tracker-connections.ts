/**
 * Builds tracker adapters from a company's stored integrations: which credential becomes which
 * authentication, where the API lives, and where new tickets go (the saved destination).
 */
import { AppError } from '../../errors.ts';
import type { TrackerASettings, TrackerBSettings } from '../../integrations/settings.ts';
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

/** A saved text setting, or undefined when absent or empty. */
const nonEmpty = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);

function trackerADestination(settings: TrackerASettings): TrackerADestination | null {
  const saved = settings.destination;
  if (!saved) return null;
  return {
    provider: 'tracker_a',
    teamId: saved.teamId,
    ...(saved.labelIds && saved.labelIds.length > 0 ? { labelIds: saved.labelIds } : {}),
    ...(saved.priority !== undefined ? { priority: saved.priority } : {}),
  };
}

function trackerBDestination(siteUrl: string, settings: TrackerBSettings): TrackerBDestination | null {
  const saved = settings.destination;
  if (!saved) return null;
  return {
    provider: 'tracker_b',
    siteUrl,
    projectKey: saved.projectKey,
    ...(saved.issueType ? { issueType: saved.issueType } : {}),
  };
}

function buildTrackerA(
  connection: ConnectedIntegration<'tracker_a'>,
  options: TrackerAdapterOptions,
): TrackerAConnection {
  const { credentials, settings } = connection;
  const apiUrl = nonEmpty(settings.baseUrl) ?? DEFAULT_TRACKER_A_URL;
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
    workspaceUrlKey: nonEmpty(settings.workspaceUrlKey) ?? null,
    appUrl: nonEmpty(settings.appUrl),
    destination: trackerADestination(settings),
  };
}

function buildTrackerB(
  connection: ConnectedIntegration<'tracker_b'>,
  options: TrackerAdapterOptions,
): TrackerBConnection | null {
  const { credentials, settings } = connection;
  const site = connection.site || nonEmpty(settings.siteUrl);
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
  const apiBaseUrl = nonEmpty(settings.baseUrl);
  return {
    integrationId: connection.id,
    siteUrl,
    adapter: createTrackerBAdapter({ siteUrl, ...(apiBaseUrl ? { apiBaseUrl } : {}), auth }, options),
    destination: trackerBDestination(siteUrl, settings),
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
