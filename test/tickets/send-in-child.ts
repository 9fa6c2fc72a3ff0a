/**
 * Runs one send of a finding in its own process, so that a test can kill the process between
 * the provider call and the database write. Configured by environment variables; prints
 * `claimed` once started and the result as JSON if it ever finishes.
 */
import { createSecretBox } from '../../src/auth/secret-box.ts';
import { parseSecretKey } from '../../src/config.ts';
import { openDatabase } from '../../src/db/client.ts';
import { createOutboundPolicy } from '../../src/integrations/outbound/outbound-policy.ts';
import { createIntegrationsService } from '../../src/organization/integrations/integrations.service.ts';
import { createTicketsService } from '../../src/scanner/tickets/tickets.service.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const database = await openDatabase({ kind: 'postgres', url: env('TICKETS_DATABASE_URL'), poolSize: 2 });
// The fake trackers listen on loopback, which the child allows as VIGIL_OUTBOUND_ALLOW=127.0.0.1/32 would.
const outbound = createOutboundPolicy({ allow: { hosts: [], cidrs: ['127.0.0.1/32'] } });
const integrations = createIntegrationsService({
  database,
  secretBox: createSecretBox(parseSecretKey(env('TICKETS_SECRET_KEY'))),
  outbound,
});
const tickets = createTicketsService({
  database,
  integrations,
  publicUrl: 'https://vigil.example.test',
  leaseSeconds: Number(env('TICKETS_LEASE_SECONDS')),
  trackerOptions: { timeoutMs: 60_000, fetch: outbound.fetch },
});
const provider = env('TICKETS_PROVIDER') === 'tracker_a' ? 'tracker_a' : 'tracker_b';
const actor = {
  kind: 'service',
  credentialId: 'child',
  organizationId: env('TICKETS_COMPANY_ID'),
  scopes: new Set(['findings:write'] as const),
} as const;
process.stdout.write('started\n');
const result = await tickets.sendFinding(actor, env('TICKETS_FINDING_ID'), provider);
process.stdout.write(`${JSON.stringify(result)}\n`);
await outbound.close();
await database.close();
