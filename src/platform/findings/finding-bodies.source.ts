/**
 * The part of a finding's payload every reader sees alike, and the one table its upkeep is made
 * from.
 *
 * `finding_bodies` holds, per finding, that part as `jsonb` built by PostgreSQL: the view
 * `finding_body_source` ({@link FINDING_BODY_VIEW}) computes it, and triggers write it in the
 * transaction of every change of what it is made of, so a body is never stale and a reader never
 * writes. The triggers are not written by hand: {@link findingBodiesSql} generates them from
 * {@link FINDING_BODY_SOURCES} (each source table, the columns of it the view reads, and how to
 * find the findings a changed row concerns). `finding-bodies.source.test.ts` fails when the view
 * reads a column the table does not list, or when the database's triggers differ from the
 * generated ones.
 *
 * To add a field to the shared part: change {@link FINDING_BODY_VIEW}, list any new column in
 * {@link FINDING_BODY_SOURCES}, and add a migration with `npm run db:finding-bodies` (which writes
 * {@link findingBodiesSql}'s output).
 */

/** A statement event a source's changes are followed on. */
export type BodyEvent = 'insert' | 'update' | 'delete' | 'truncate';

/** One table the shared part is read from. */
export interface FindingBodySource {
  /** The table. */
  table: string;
  /** Every column of it the view reads (a test compares with PostgreSQL's record of the view). */
  columns: readonly string[];
  /**
   * The events that can change a body. A row inserted into a table findings point to by foreign
   * key (users, companies…) concerns no finding yet; a delete there reaches the findings through
   * the key's own action, which fires their triggers.
   */
  events: readonly BodyEvent[];
  /**
   * A query over `changed` (the rows inserted or deleted, or both versions of the rows whose
   * listed columns an update changed; only the listed columns) that returns the ids of the
   * findings whose bodies those rows are part of.
   */
  affected: string;
}

/** The tables, columns and links of the shared part: the one place the triggers are made from. */
export const FINDING_BODY_SOURCES: readonly FindingBodySource[] = [
  {
    table: 'findings',
    columns: [
      'id',
      'number',
      'attributed_to',
      'title',
      'description',
      'created_at',
      'last_updated_at',
      'locked',
      'reward',
      'fixed_by',
      'category',
      'payment_id',
      'status',
      'severity',
      'repository_id',
      'company_id',
      'created_by',
      'assigned_to',
      'asset_group_id',
      'safe_harbor_asset_ids',
    ],
    // A deleted finding takes its body with it (foreign key, on delete cascade).
    events: ['insert', 'update'],
    affected: 'select id from changed',
  },
  {
    table: 'finding_related_files',
    columns: ['id', 'finding_id', 'path', 'start_line', 'end_line', 'language', 'relevant_content', 'commit'],
    events: ['insert', 'update', 'delete', 'truncate'],
    affected: 'select finding_id from changed',
  },
  {
    table: 'repositories',
    columns: ['id', 'name', 'allowed_severities'],
    events: ['update'],
    affected: 'select f.id from findings f where f.repository_id in (select id from changed)',
  },
  {
    table: 'companies',
    columns: ['id', 'handle'],
    events: ['update'],
    affected: 'select f.id from findings f where f.company_id in (select id from changed)',
  },
  {
    table: 'users',
    columns: ['id', 'name', 'username', 'avatar', 'is_bot', 'created_at', 'reputation', 'disabled_at'],
    events: ['update'],
    affected:
      'select f.id from findings f where f.created_by in (select id from changed)' +
      ' union select f.id from findings f where f.assigned_to in (select id from changed)',
  },
  {
    table: 'repository_members',
    columns: ['repository_id', 'user_id', 'team_id', 'pings_left', 'deleted_at'],
    events: ['insert', 'update', 'delete', 'truncate'],
    affected:
      'select f.id from findings f join changed m on f.repository_id = m.repository_id and f.created_by = m.user_id' +
      ' union select f.id from findings f join changed m on f.repository_id = m.repository_id and f.assigned_to = m.user_id',
  },
  {
    table: 'safe_harbors',
    columns: ['repository_id', 'assets'],
    events: ['insert', 'update', 'delete', 'truncate'],
    affected:
      'select f.id from findings f where f.repository_id in (select repository_id from changed)' +
      ' and cardinality(f.safe_harbor_asset_ids) > 0',
  },
  {
    table: 'asset_groups',
    columns: ['id', 'parent_id', 'name', 'description', 'out_of_scope', 'rewards', 'position'],
    events: ['insert', 'update', 'delete', 'truncate'],
    affected:
      'select f.id from findings f where f.asset_group_id in (select id from changed union select parent_id from changed)',
  },
  {
    table: 'assets',
    columns: ['id', 'asset_group_id', 'name', 'description', 'reference'],
    events: ['insert', 'update', 'delete', 'truncate'],
    affected:
      'select f.id from findings f where f.asset_group_id in (select asset_group_id from changed' +
      ' union select g.parent_id from asset_groups g where g.id in (select asset_group_id from changed))',
  },
  {
    table: 'labels',
    columns: ['id', 'name', 'is_system', 'reviewer_read', 'reviewer_use', 'description', 'archived_at'],
    events: ['update'],
    affected: 'select fl.finding_id from finding_labels fl where fl.label_id in (select id from changed)',
  },
  {
    table: 'finding_labels',
    columns: ['finding_id', 'label_id'],
    events: ['insert', 'update', 'delete', 'truncate'],
    affected: 'select finding_id from changed',
  },
];

/** A time as `Date.prototype.toISOString()` writes it (UTC, milliseconds). */
const iso = (value: string) => `to_char(${value} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A user summary (`FullUserSummary`) of the finding's author or assignee, with their membership. */
const userSummary = (column: string, u: string, m: string) => `(select jsonb_build_object(
      'userId', ${u}.id, 'name', ${u}.name, 'username', ${u}.username, 'avatar', ${u}.avatar,
      'isBot', ${u}.is_bot, 'createdAt', ${iso(`${u}.created_at`)}, 'teamId', ${m}.team_id,
      'pingsLeft', ${m}.pings_left, 'reputation', ${u}.reputation,
      'disabledAt', ${iso(`${u}.disabled_at`)}, 'deletedFromRepoAt', ${iso(`${m}.deleted_at`)})
    from users ${u} left join repository_members ${m} on ${m}.user_id = ${u}.id and ${m}.repository_id = f.repository_id
    where ${u}.id = f.${column})`;

/** A label (`Label`) of the finding. */
const LABEL = `jsonb_build_object('id', l.id, 'name', l.name, 'isSystem', l.is_system,
      'reviewerRead', l.reviewer_read, 'reviewerUse', l.reviewer_use, 'description', l.description,
      'archivedAt', ${iso('l.archived_at')})`;

/** The assets (`Asset[]`) of the asset group `group`, by name. */
const assetsOf = (group: string) => `coalesce((select jsonb_agg(jsonb_build_object('id', a.id, 'name', a.name,
        'description', a.description, 'reference', a.reference) order by a.name, a.id)
      from assets a where a.asset_group_id = ${group}), '[]'::jsonb)`;

/**
 * The query of the view `finding_body_source`: per finding, the `Finding` fields every reader sees
 * alike, in their API shape, and its two label lists (`labels`: all of them; `reviewerLabels`:
 * those reviewers may read), of which a reader's statement keeps one. Only plain column
 * references (no functions of its own), so that PostgreSQL records every column it reads.
 */
export const FINDING_BODY_VIEW = `select f.id as finding_id, jsonb_build_object(
  'id', f.id,
  'number', coalesce(f.number, 0),
  'attributedTo', f.attributed_to,
  'title', f.title,
  'description', f.description,
  'relatedFiles', coalesce((select jsonb_agg(jsonb_build_object('id', rf.id, 'path', rf.path,
      'lines', case when rf.start_line is not null and rf.end_line is not null
        then jsonb_build_object('start', rf.start_line, 'end', rf.end_line) end,
      'language', rf.language, 'relevantContent', rf.relevant_content, 'commit', rf.commit)
      order by rf.path, rf.start_line, rf.id)
    from finding_related_files rf where rf.finding_id = f.id), '[]'::jsonb),
  'createdBy', ${userSummary('created_by', 'cu', 'cm')},
  'createdAt', ${iso('f.created_at')},
  'lastUpdatedAt', ${iso('f.last_updated_at')},
  'locked', f.locked,
  'repository', (select jsonb_build_object('id', r.id, 'name', r.name, 'allowedSeverities', to_jsonb(r.allowed_severities))
    from repositories r where r.id = f.repository_id),
  'company', (select jsonb_build_object('id', c.id, 'handle', c.handle) from companies c where c.id = f.company_id),
  'reward', f.reward::text,
  'fixedBy', to_jsonb(f.fixed_by),
  'category', f.category,
  'assignedTo', ${userSummary('assigned_to', 'au', 'am')},
  'assetGroup', (select jsonb_build_object('id', g.id, 'name', g.name, 'description', g.description,
      'outOfScope', g.out_of_scope,
      'rewards', coalesce((select jsonb_agg(jsonb_build_object('minReward', gr.reward->>'minReward',
          'maxReward', gr.reward->>'maxReward') order by gr.position)
        from jsonb_array_elements(g.rewards) with ordinality as gr(reward, position)), '[]'::jsonb),
      'assets', ${assetsOf('g.id')},
      'subGroups', coalesce((select jsonb_agg(jsonb_build_object('id', sg.id, 'name', sg.name,
          'description', sg.description, 'assets', ${assetsOf('sg.id')})
          order by sg.position, sg.name, sg.id)
        from asset_groups sg where sg.parent_id = g.id), '[]'::jsonb))
    from asset_groups g where g.id = f.asset_group_id),
  'safeHarborAssets', coalesce((select jsonb_agg(jsonb_build_object('id', ha.asset->>'id', 'name', ha.asset->>'name',
      'description', ha.asset->>'description') order by ha.position)
    from safe_harbors sh, jsonb_array_elements(sh.assets) with ordinality as ha(asset, position)
    where sh.repository_id = f.repository_id and ha.asset->>'id' = any(f.safe_harbor_asset_ids::text[])), '[]'::jsonb),
  'paymentId', f.payment_id,
  'status', f.status,
  'severity', f.severity,
  'labels', coalesce((select jsonb_agg(${LABEL} order by l.name, l.id)
    from finding_labels fl join labels l on l.id = fl.label_id where fl.finding_id = f.id), '[]'::jsonb),
  'reviewerLabels', coalesce((select jsonb_agg(${LABEL} order by l.name, l.id)
    from finding_labels fl join labels l on l.id = fl.label_id where fl.finding_id = f.id and l.reviewer_read), '[]'::jsonb)
) as body
from findings f`;

/** The trigger function every generated trigger calls, with its query of affected findings. */
const REFRESH_FUNCTION = `CREATE OR REPLACE FUNCTION vigil_finding_bodies_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ids uuid[];
BEGIN
  -- TG_ARGV[0]: a query over the statement's transition tables returning, as one array, the ids
  -- of the findings whose bodies the statement may have changed (generated, finding-bodies.source.ts).
  EXECUTE TG_ARGV[0] INTO ids;
  IF ids IS NULL OR cardinality(ids) = 0 THEN
    RETURN NULL;
  END IF;
  -- The bodies are locked in id order first, so writers of the same findings queue instead of
  -- deadlocking; the statement after it takes its own snapshot (read committed), which holds
  -- every change committed by the writers this one waited for.
  PERFORM 1 FROM finding_bodies WHERE finding_id = ANY(ids) ORDER BY finding_id FOR UPDATE;
  INSERT INTO finding_bodies (finding_id, body)
    SELECT s.finding_id, s.body FROM finding_body_source s WHERE s.finding_id = ANY(ids) ORDER BY s.finding_id
  ON CONFLICT (finding_id) DO UPDATE SET body = excluded.body
    WHERE finding_bodies.body IS DISTINCT FROM excluded.body;
  RETURN NULL;
END;
$$`;

/** The `changed` rows of a statement on `source` (see {@link FindingBodySource.affected}). */
function changedRows(source: FindingBodySource, event: Exclude<BodyEvent, 'truncate'>): string {
  const columns = source.columns.join(', ');
  if (event === 'insert') return `select ${columns} from new_rows`;
  if (event === 'delete') return `select ${columns} from old_rows`;
  // Both versions of every row whose listed columns changed (null equals null, as in EXCEPT).
  return (
    `(select ${columns} from new_rows except select ${columns} from old_rows)` +
    ` union all (select ${columns} from old_rows except select ${columns} from new_rows)`
  );
}

/** One generated trigger: its table, name, event and query of affected findings (its argument). */
export interface FindingBodyTrigger {
  table: string;
  name: string;
  event: BodyEvent;
  query: string;
}

/** The triggers {@link FINDING_BODY_SOURCES} make. */
export function findingBodyTriggers(): FindingBodyTrigger[] {
  return FINDING_BODY_SOURCES.flatMap((source) =>
    source.events.map((event) => ({
      table: source.table,
      name: `${source.table}_bodies_${event}`,
      event,
      // A TRUNCATE has no transition tables: every body is built again.
      query:
        event === 'truncate'
          ? 'select array_agg(finding_id) from finding_bodies'
          : `with changed as (${changedRows(source, event)}) select array_agg(distinct id) from (${source.affected}) affected(id)`,
    })),
  );
}

/** The statement creating a generated trigger. */
function createTrigger(trigger: FindingBodyTrigger): string {
  const transition =
    trigger.event === 'truncate'
      ? ''
      : trigger.event === 'insert'
        ? ' REFERENCING NEW TABLE AS new_rows'
        : trigger.event === 'delete'
          ? ' REFERENCING OLD TABLE AS old_rows'
          : ' REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows';
  return (
    `CREATE TRIGGER ${trigger.name} AFTER ${trigger.event.toUpperCase()} ON ${trigger.table}${transition} ` +
    `FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('${trigger.query.replaceAll("'", "''")}')`
  );
}

/**
 * The SQL that installs the view, the refresh function and the generated triggers (dropping the
 * generated triggers first), and builds every body: a migration's content, one statement a line
 * group, separated by drizzle's statement breakpoints.
 */
export function findingBodiesSql(): string {
  const statements = [
    ...findingBodyTriggers().map(({ table, name }) => `DROP TRIGGER IF EXISTS ${name} ON ${table}`),
    'DROP VIEW IF EXISTS finding_body_source',
    `CREATE VIEW finding_body_source AS\n${FINDING_BODY_VIEW}`,
    REFRESH_FUNCTION,
    ...findingBodyTriggers().map(createTrigger),
    `INSERT INTO finding_bodies (finding_id, body) SELECT finding_id, body FROM finding_body_source
  ON CONFLICT (finding_id) DO UPDATE SET body = excluded.body WHERE finding_bodies.body IS DISTINCT FROM excluded.body`,
  ];
  return `${statements.join(';\n--> statement-breakpoint\n')};\n`;
}
