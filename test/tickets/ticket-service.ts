import type { ServiceActor } from '../../src/auth/actor.ts';
import { createTicketsService, type TicketsService } from '../../src/scanner/tickets/tickets.service.ts';
import type { TrackerAdapterOptions } from '../../src/scanner/tickets/tracker-connections.ts';
import type { TestApp } from '../helpers/app.ts';

/** The actor a service key of the company would be. */
export function serviceActor(companyId: string): ServiceActor {
  return {
    kind: 'service',
    credentialId: 'test-key',
    organizationId: companyId,
    scopes: new Set(['findings:read', 'findings:write']),
  };
}

/** A tickets service on the test app's database with short timeouts and reconcile windows. */
export function buildTicketsService(
  t: TestApp,
  options: { trackerOptions?: TrackerAdapterOptions; leaseSeconds?: number } = {},
): TicketsService {
  return createTicketsService({
    database: t.container.database,
    integrations: t.container.services.integrations,
    publicUrl: 'https://vigil.example.test',
    trackerOptions: {
      timeoutMs: 300,
      reconcileWindowMs: 4_000,
      reconcilePollInitialMs: 100,
      reconcilePollMaxMs: 400,
      ...options.trackerOptions,
    },
    ...(options.leaseSeconds !== undefined ? { leaseSeconds: options.leaseSeconds } : {}),
  });
}

/** The HTTP status and error code a service call ended with (200 when it resolved). */
export async function settle<T>(call: Promise<T>): Promise<{ status: number; code?: string; value?: T }> {
  try {
    return { status: 200, value: await call };
  } catch (err) {
    const e = err as { status?: number; code?: string };
    return { status: e.status ?? 500, ...(e.code ? { code: e.code } : {}) };
  }
}
