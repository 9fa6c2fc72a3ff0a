import { randomBytes } from 'node:crypto';
import { findings } from '../../src/db/schema/index.ts';
import type { FakeTrackerA } from '../fakes/tracker-a-server.ts';
import type { FakeTrackerB } from '../fakes/tracker-b-server.ts';
import type { TestApp } from './app.ts';
import { buildServiceKey } from './factories.ts';

/** A finding row to make tickets from; scanner drafts by default (published false, no workspace). */
export interface TestFindingOverrides {
  title?: string;
  description?: string;
  severity?: 'critical' | 'high' | 'medium' | 'low' | 'informational';
  published?: boolean;
  location?: { file: string; startLine: number; endLine: number } | null;
  identifiers?: Array<{ type: string; name: string; value: string }>;
}

/** Inserts a finding of the company directly. */
export async function buildTicketFinding(
  t: TestApp,
  companyId: string,
  overrides: TestFindingOverrides = {},
): Promise<{ id: string; title: string }> {
  const [row] = await t.container.database.db
    .insert(findings)
    .values({
      companyId,
      title: overrides.title ?? `Reentrancy in Vault.withdraw ${randomBytes(3).toString('hex')}`,
      description:
        overrides.description ?? 'The `withdraw` function sends ether **before** updating the balance.',
      severity: overrides.severity ?? 'high',
      published: overrides.published ?? false,
      workspaceId: null,
      location:
        overrides.location === undefined
          ? { file: 'contracts/Vault.sol', startLine: 42, endLine: 57 }
          : overrides.location,
      identifiers: overrides.identifiers ?? [{ type: 'cwe', name: 'CWE-841', value: '841' }],
    })
    .returning({ id: findings.id, title: findings.title });
  return row!;
}

async function putIntegration(
  t: TestApp,
  companyId: string,
  provider: 'tracker_a' | 'tracker_b',
  payload: { site?: string; credentials: Record<string, string>; settings: Record<string, unknown> },
): Promise<{ id: string }> {
  const res = await t.app.inject({
    method: 'PUT',
    url: `/api/v0/companies/${companyId}/integrations/${provider}`,
    headers: { authorization: `Bearer ${t.adminToken}` },
    payload,
  });
  if (res.statusCode >= 300) throw new Error(`PUT integration ${provider} → ${res.statusCode}: ${res.body}`);
  return res.json() as { id: string };
}

/** Connects the fake tracker_a workspace (raw API key by default) with a destination team. */
export async function connectTrackerA(
  t: TestApp,
  companyId: string,
  fake: FakeTrackerA,
  options: {
    auth?: 'api_key' | 'oauth';
    destination?: Record<string, unknown> | null;
    urlKey?: boolean;
  } = {},
): Promise<void> {
  const destination = options.destination === undefined ? { teamId: fake.teams[0]!.id } : options.destination;
  await putIntegration(t, companyId, 'tracker_a', {
    credentials: options.auth === 'oauth' ? { accessToken: fake.oauthToken } : { apiKey: fake.apiKey },
    settings: {
      baseUrl: fake.url,
      appUrl: fake.appUrl,
      ...(options.urlKey === false ? {} : { workspaceUrlKey: fake.urlKey }),
      ...(destination ? { destination } : {}),
    },
  });
}

/** Connects a fake tracker_b site (Basic by default; Bearer through the gateway) with a destination. */
export async function connectTrackerB(
  t: TestApp,
  companyId: string,
  fake: FakeTrackerB,
  options: {
    auth?: 'basic' | 'bearer';
    destination?: Record<string, unknown> | null;
    isDefault?: boolean;
  } = {},
): Promise<void> {
  const destination =
    options.destination === undefined ? { projectKey: 'ENG', issueType: 'Bug' } : options.destination;
  await putIntegration(t, companyId, 'tracker_b', {
    site: fake.url,
    credentials:
      options.auth === 'bearer'
        ? { accessToken: fake.bearerToken }
        : { email: fake.email, apiToken: fake.apiToken },
    settings: {
      ...(options.auth === 'bearer' ? { baseUrl: fake.gatewayUrl } : {}),
      ...(destination ? { destination } : {}),
      ...(options.isDefault ? { default: true } : {}),
    },
  });
}

/** A service key with findings:read and findings:write. */
export async function buildTicketKey(t: TestApp, companyId: string): Promise<string> {
  return (await buildServiceKey(t, companyId, ['findings:read', 'findings:write'])).key;
}
