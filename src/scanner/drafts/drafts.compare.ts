import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.ts';

/** What the comparison needs of the scan being completed. */
export interface ComparedScan {
  id: string;
  companyId: string;
  workspaceId: string;
  branch: string | null;
  commit: string | null;
  pullRequest: boolean;
  baselineScanId: string | null;
  baselineBranch: string | null;
}

/**
 * Compares a scan that is completing with its baseline, in the completion's transaction (under
 * the scan's row lock), and returns the baseline's id (null: none).
 *
 * The baseline is the scan asked for, else the latest completed scan (not of a pull request) of
 * `baselineBranch`, else of the scan's own branch. Each draft the scan found is `new`,
 * `unchanged` (in the baseline) or `reopened` (its draft was `fixed`); the baseline's drafts the
 * scan did not find are recorded as fixed by it.
 *
 * A scan of a branch (not a pull request) then moves the workspace's drafts: open or reopened
 * drafts it fixed become `fixed`, fixed drafts it found become `reopened`. Dismissed and published
 * drafts keep their state; a published draft's finding gets a timeline entry ("still present" or
 * "not reproduced"), and with the company's `autoMarkFixed` a confirmed or acknowledged finding
 * not reproduced becomes `fixed`.
 */
export async function compareScanInTx(db: Db, scan: ComparedScan): Promise<string | null> {
  let baselineId = scan.baselineScanId;
  if (!baselineId) {
    const branch = scan.baselineBranch ?? scan.branch;
    const result = await db.execute<{ id: string }>(sql`
      select id from scans
       where workspace_id = ${scan.workspaceId} and status = 'completed' and not pull_request
         and branch is not distinct from ${branch} and id <> ${scan.id}
       order by completed_at desc, id desc
       limit 1`);
    baselineId = result.rows[0]?.id ?? null;
  }
  await db.execute(sql`
    update scan_findings sf
       set baseline_state = case
             when ${baselineId}::uuid is not null and exists (
               select 1 from scan_findings b where b.scan_id = ${baselineId}::uuid and b.finding_id = sf.finding_id)
               then 'unchanged'
             when f.triage_state = 'fixed' then 'reopened'
             else 'new' end
      from findings f
     where f.id = sf.finding_id and sf.scan_id = ${scan.id}`);
  if (baselineId) {
    await db.execute(sql`
      insert into scan_fixed_drafts (scan_id, finding_id, location)
      select ${scan.id}, b.finding_id, b.location
        from scan_findings b
       where b.scan_id = ${baselineId}::uuid
         and not exists (select 1 from scan_findings c where c.scan_id = ${scan.id} and c.finding_id = b.finding_id)
      on conflict do nothing`);
  }
  await db.execute(sql`update scans set baseline_scan_id = ${baselineId}::uuid where id = ${scan.id}`);
  if (scan.pullRequest) return baselineId;

  await db.execute(sql`
    update findings f set triage_state = 'fixed', last_updated_at = now()
      from scan_fixed_drafts x
     where x.scan_id = ${scan.id} and x.finding_id = f.id and f.triage_state in ('open', 'reopened')`);
  await db.execute(sql`
    update findings f set triage_state = 'reopened', last_updated_at = now()
      from scan_findings sf
     where sf.scan_id = ${scan.id} and sf.finding_id = f.id and f.triage_state = 'fixed'`);
  // Published drafts: a timeline entry on their finding for this scan.
  await db.execute(sql`
    insert into finding_scan_events (finding_id, scan_id, kind, commit)
    select f.published_finding_id, ${scan.id}, 'present', ${scan.commit}
      from scan_findings sf join findings f on f.id = sf.finding_id
     where sf.scan_id = ${scan.id} and f.published_finding_id is not null
    on conflict do nothing`);
  await db.execute(sql`
    insert into finding_scan_events (finding_id, scan_id, kind, commit)
    select f.published_finding_id, ${scan.id}, 'not_reproduced', ${scan.commit}
      from scan_fixed_drafts x join findings f on f.id = x.finding_id
     where x.scan_id = ${scan.id} and f.published_finding_id is not null
    on conflict do nothing`);
  // Only a company that chose it lets a scan change a finding's status (ADR 0023).
  await db.execute(sql`
    with marked as (
      update findings p set status = 'fixed', last_updated_at = now()
        from scan_fixed_drafts x
        join findings f on f.id = x.finding_id
        join draft_settings s on s.company_id = ${scan.companyId} and s.auto_mark_fixed
       where x.scan_id = ${scan.id} and p.id = f.published_finding_id
         and p.status in ('confirmed', 'acknowledged')
      returning p.id)
    insert into finding_scan_events (finding_id, scan_id, kind, commit)
    select id, ${scan.id}, 'marked_fixed', ${scan.commit} from marked
    on conflict do nothing`);
  return baselineId;
}
