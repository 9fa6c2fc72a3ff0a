import type { TestApp } from './app.ts';

/** Helpers for tests of two replicas on one database (caches kept right by notifications). */

/** A GET as the holder of `token`. */
export function getAs(t: TestApp, url: string, token: string) {
  return t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
}

/**
 * Runs SQL with triggers off, so that no notification is sent: what only a cache of another
 * process still shows.
 */
export async function silently(t: TestApp, sql: string, values: unknown[]): Promise<void> {
  await t.container.database.transaction(async (tx) => {
    await tx.executeSql('set local session_replication_role = replica');
    await tx.executeSql(sql, values);
  });
}

/** Waits until every app has heard every notification sent so far. */
export async function settleAll(...apps: TestApp[]): Promise<void> {
  await Promise.all(apps.map((t) => t.settleCredentials()));
}
