import { READS_CHANNEL } from '../../src/auth/kept-reads.ts';
import { heardAll, sendSettleMarker, type TestApp } from './app.ts';
import { waitFor } from './wait.ts';

/** Helpers for tests of two replicas on one database (caches kept right by notifications). */

/** A GET as the holder of `token`. */
export function getAs(t: TestApp, url: string, token: string) {
  return t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
}

/**
 * Runs SQL with triggers off, so that no notification is sent: what only a cache of another
 * process still shows. The kept finding bodies, which the triggers would have cleared where the
 * SQL changed what they hold, are all cleared with it: they are the database's, not a process's.
 */
export async function silently(t: TestApp, sql: string, values: unknown[]): Promise<void> {
  await t.container.database.transaction(async (tx) => {
    await tx.executeSql('set local session_replication_role = replica');
    await tx.executeSql(sql, values);
    await tx.executeSql('update finding_bodies set body = null, stamp = stamp + 1 where body is not null');
  });
}

/**
 * Waits until every app has heard every `vigil_reads` notification sent so far, forgetting
 * nothing: the marker it sends names no table.
 */
export async function settleReads(...apps: TestApp[]): Promise<void> {
  const [first] = apps;
  if (!first) return;
  const marker = await sendSettleMarker(first.container, READS_CHANNEL);
  await Promise.all(
    apps.map((t) =>
      waitFor(() => t.container.keptPages.allFindings.recentChanges.includes(marker), {
        what: 'the reads notification',
        timeoutMs: 10_000,
        intervalMs: 5,
      }),
    ),
  );
}

/**
 * Waits until every app has heard every notification sent so far, and the one marker this sends:
 * a marker forgets the caches of every app that hears it, so it must not arrive after this returns.
 */
export async function settleAll(...apps: TestApp[]): Promise<void> {
  const [first] = apps;
  if (!first) return;
  const markers = [await sendSettleMarker(first.container)];
  await Promise.all(apps.map((t) => heardAll(t.container, markers)));
}
