import { heardAll, sendSettleMarker, type TestApp } from './app.ts';

/** Helpers for tests of two replicas on one database (credential caches kept right by notifications). */

/** A GET as the holder of `token`. */
export function getAs(t: TestApp, url: string, token: string) {
  return t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
}

/**
 * Runs SQL with triggers off, so that no notification is sent: what only a cache of another
 * process still shows. The finding bodies, which the triggers would have rebuilt where the SQL
 * changed what they hold, are all rebuilt with it: they are the database's, not a process's.
 */
export async function silently(t: TestApp, sql: string, values: unknown[]): Promise<void> {
  await t.container.database.transaction(async (tx) => {
    await tx.executeSql('set local session_replication_role = replica');
    await tx.executeSql(sql, values);
    await tx.executeSql(
      'update finding_bodies b set body = s.body from finding_body_source s where s.finding_id = b.finding_id',
    );
  });
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
