import { requireManagedCompany } from '../../access/access.service.ts';
import { requireCompanyReader } from '../../access/policy.ts';
import type { Actor } from '../../auth/actor.ts';
import type { SecretBox } from '../../auth/secret-box.ts';
import type { Database } from '../../db/client.ts';
import { AppError } from '../../errors.ts';
import { checkTenantUrls, type TenantUrlChecker } from '../../integrations/outbound/tenant-urls.ts';
import {
  checkIntegrationSettings,
  INTEGRATION_PROVIDERS,
  type IntegrationProvider,
  type IntegrationSettings,
  type IntegrationSettingsOf,
} from '../../integrations/settings.ts';
import { appendAuditEntry } from '../audit/audit.repo.ts';
import { type IntegrationRow, integrationsRepo } from './integrations.repo.ts';

export { INTEGRATION_PROVIDERS, type IntegrationProvider };

/** Which credential fields each provider takes; at least one must be given. */
const CREDENTIAL_FIELDS: Record<IntegrationProvider, string[]> = {
  tracker_a: ['apiKey', 'accessToken'],
  tracker_b: ['email', 'apiToken', 'accessToken'],
  sourcehost: ['token', 'webhookSecret'],
};

export interface IntegrationInput {
  /** Several connections of one provider are told apart by site (tracker_b: the site URL). */
  site?: string;
  credentials: Record<string, string>;
  /** Checked against the provider's settings schema. */
  settings?: unknown;
}

export interface IntegrationView {
  id: string;
  provider: IntegrationProvider;
  site: string;
  settings: IntegrationSettings;
  credentialFields: string[];
  createdAt: string;
  updatedAt: string;
}

/** A connection of one provider with its settings and secrets opened, for the adapters; never rendered to a client. */
export interface ConnectedIntegration<P extends IntegrationProvider = IntegrationProvider> {
  id: string;
  provider: P;
  site: string;
  settings: IntegrationSettingsOf<P>;
  credentials: Record<string, string>;
}

/** The settings as the provider's; 400 naming the setting that does not fit. */
function validateSettings<P extends IntegrationProvider>(
  provider: P,
  value: unknown,
): IntegrationSettingsOf<P> {
  const checked = checkIntegrationSettings(provider, value);
  if ('settings' in checked) return checked.settings;
  const { field, message } = checked.problem;
  throw new AppError('VALIDATION_FAILED', {
    message: `${field}: ${message} (see the ${provider} settings of putIntegration).`,
    details: { field },
  });
}

/**
 * A connection's stored settings as the provider's. Settings saved before they were checked that
 * do not fit answer INTEGRATION_NOT_CONNECTED, naming the setting to fix.
 */
export function storedSettingsOf<P extends IntegrationProvider>(
  provider: P,
  stored: IntegrationSettings,
): IntegrationSettingsOf<P> {
  const checked = checkIntegrationSettings(provider, stored);
  if ('settings' in checked) return checked.settings;
  const { field, message } = checked.problem;
  throw new AppError('INTEGRATION_NOT_CONNECTED', {
    message: `The ${provider} integration's saved ${field} does not fit (${message}); save its settings again.`,
    details: { provider, field },
  });
}

function normalizeSite(provider: IntegrationProvider, site: string | undefined, siteUrl?: string): string {
  const raw = site ?? (provider === 'tracker_b' ? siteUrl : undefined) ?? '';
  if (!raw) return '';
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}`.toLowerCase();
  } catch {
    throw new AppError('VALIDATION_FAILED', {
      message: 'site must be a URL such as https://acme.example.net.',
      details: { field: 'site' },
    });
  }
}

function validateCredentials(provider: IntegrationProvider, credentials: Record<string, string>): void {
  const allowed = CREDENTIAL_FIELDS[provider];
  const given = Object.keys(credentials);
  const unknown = given.filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    throw new AppError('VALIDATION_FAILED', {
      message: `Unknown credential field for ${provider}: ${unknown.join(', ')} (allowed: ${allowed.join(', ')}).`,
      details: { field: 'credentials' },
    });
  }
  if (given.length === 0 || given.some((k) => typeof credentials[k] !== 'string' || credentials[k] === '')) {
    throw new AppError('VALIDATION_FAILED', {
      message: `credentials needs one of: ${allowed.join(', ')}.`,
      details: { field: 'credentials' },
    });
  }
  if (provider === 'tracker_b' && credentials.apiToken && !credentials.email) {
    throw new AppError('VALIDATION_FAILED', {
      message: 'tracker_b apiToken needs the account email.',
      details: { field: 'credentials.email' },
    });
  }
}

/** The account a sourcehost connection names (for the audit log), or null. */
function accountNameOf(settings: IntegrationSettings): string | null {
  return 'accountName' in settings ? (settings.accountName ?? null) : null;
}

/** The settings that name a host the service connects to (links are not), by field. */
function connectedUrls(settings: IntegrationSettings): Array<[field: string, value: string | undefined]> {
  return [
    ['settings.baseUrl', settings.baseUrl],
    ...('siteUrl' in settings
      ? [['settings.siteUrl', settings.siteUrl] as [string, string | undefined]]
      : []),
    ...('apiBaseUrl' in settings
      ? [['settings.apiBaseUrl', settings.apiBaseUrl] as [string, string | undefined]]
      : []),
  ];
}

/**
 * Checks every URL the service will connect to for this integration with the one tenant URL
 * check: an internal address is refused when saved, with the same message whatever is listening.
 */
async function checkDestinations(
  outbound: TenantUrlChecker,
  site: string,
  settings: IntegrationSettings,
): Promise<void> {
  const targets = connectedUrls(settings);
  if (site !== '') targets.unshift(['site', site]);
  await checkTenantUrls(outbound, targets);
}

/**
 * Company integrations: credentials stored encrypted (AES-256-GCM) and never returned; settings
 * (base URLs, destination routing) returned as given. Sourcehost changes are audited.
 */
export function createIntegrationsService(deps: {
  database: Database;
  secretBox: SecretBox;
  /** Checks the hosts of the settings when they are saved. */
  outbound: TenantUrlChecker;
}) {
  const { database, secretBox } = deps;

  function toView(row: IntegrationRow): IntegrationView {
    const credentialFields = Object.keys(
      JSON.parse(secretBox.open(row.credentialsEnc)) as Record<string, string>,
    ).sort();
    return {
      id: row.id,
      provider: row.provider,
      site: row.site,
      settings: row.settings,
      credentialFields,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }

  const requireCompany = (actor: Actor, companyId: string) =>
    requireManagedCompany(database.db, actor, companyId);

  return {
    /** Creates or replaces the connection of (provider, site). */
    async putIntegration(
      actor: Actor,
      companyId: string,
      provider: IntegrationProvider,
      input: IntegrationInput,
    ) {
      const user = await requireCompany(actor, companyId);
      validateCredentials(provider, input.credentials);
      const settings: IntegrationSettings = validateSettings(provider, input.settings ?? {});
      const site = normalizeSite(provider, input.site, 'siteUrl' in settings ? settings.siteUrl : undefined);
      await checkDestinations(deps.outbound, site, settings);
      const credentialsEnc = secretBox.seal(JSON.stringify(input.credentials));
      return database.transaction(async (tx) => {
        const repo = integrationsRepo(tx.db);
        const existing = await repo.exists(companyId, provider, site);
        const row = await repo.upsert({
          companyId,
          provider,
          site,
          credentialsEnc,
          settings,
          createdBy: user.userId,
        });
        // A new source-host connection has the contract's own action; every other connection
        // and every replacement of credentials or settings is an extension action (ADR 0017).
        await appendAuditEntry(tx.db, {
          companyId,
          action:
            provider === 'sourcehost' && !existing
              ? 'sourcehost_integration_added'
              : existing
                ? 'integration_updated'
                : 'integration_connected',
          performedBy: user.userId,
          sourcehostAccountName: provider === 'sourcehost' ? accountNameOf(settings) : null,
          details: { integrationId: row.id, provider, site: row.site },
        });
        return { view: toView(row), created: !existing };
      });
    },

    async listIntegrations(actor: Actor, companyId: string): Promise<IntegrationView[]> {
      await requireCompany(actor, companyId);
      const rows = await integrationsRepo(database.db).listByCompany(companyId);
      return rows.map(toView);
    },

    /**
     * The issue trackers connected to the company (provider and site only), for its readers: the
     * console offers ticket controls only for these.
     */
    async listTrackers(
      actor: Actor,
      companyId: string,
    ): Promise<Array<{ provider: 'tracker_a' | 'tracker_b'; site: string }>> {
      requireCompanyReader(actor, companyId);
      const rows = await integrationsRepo(database.db).listByCompany(companyId);
      return rows
        .filter((r) => r.provider === 'tracker_a' || r.provider === 'tracker_b')
        .map((r) => ({ provider: r.provider as 'tracker_a' | 'tracker_b', site: r.site }));
    },

    /** Disconnects one site of a provider, or every connection of it when no site is given. */
    async deleteIntegration(actor: Actor, companyId: string, provider: IntegrationProvider, site?: string) {
      const user = await requireCompany(actor, companyId);
      return database.transaction(async (tx) => {
        const rows = await integrationsRepo(tx.db).delete(
          companyId,
          provider,
          site === undefined ? undefined : normalizeSite(provider, site),
        );
        if (rows.length === 0)
          throw new AppError('NOT_FOUND', { message: `No ${provider} integration is connected.` });
        for (const row of rows) {
          await appendAuditEntry(tx.db, {
            companyId,
            action: provider === 'sourcehost' ? 'sourcehost_integration_removed' : 'integration_disconnected',
            performedBy: user.userId,
            sourcehostAccountName: provider === 'sourcehost' ? accountNameOf(row.settings) : null,
            details: { integrationId: row.id, provider, site: row.site },
          });
        }
        return rows.length;
      });
    },

    /**
     * Every connection of a provider with its settings and secrets opened (for outbound adapters
     * only); see {@link storedSettingsOf} for settings that do not fit.
     */
    async getConnections<P extends IntegrationProvider>(
      companyId: string,
      provider: P,
    ): Promise<ConnectedIntegration<P>[]> {
      const rows = await integrationsRepo(database.db).listByCompany(companyId, provider);
      return rows.map((row) => ({
        id: row.id,
        provider,
        site: row.site,
        settings: storedSettingsOf(provider, row.settings),
        credentials: JSON.parse(secretBox.open(row.credentialsEnc)) as Record<string, string>,
      }));
    },
  };
}

export type IntegrationsService = ReturnType<typeof createIntegrationsService>;
