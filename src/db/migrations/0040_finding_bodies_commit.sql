-- The related files of a finding's shared payload carry their commit (finding_related_files.commit).
DROP TRIGGER IF EXISTS findings_bodies_insert ON findings;
--> statement-breakpoint
DROP TRIGGER IF EXISTS findings_bodies_update ON findings;
--> statement-breakpoint
DROP TRIGGER IF EXISTS finding_related_files_bodies_insert ON finding_related_files;
--> statement-breakpoint
DROP TRIGGER IF EXISTS finding_related_files_bodies_update ON finding_related_files;
--> statement-breakpoint
DROP TRIGGER IF EXISTS finding_related_files_bodies_delete ON finding_related_files;
--> statement-breakpoint
DROP TRIGGER IF EXISTS finding_related_files_bodies_truncate ON finding_related_files;
--> statement-breakpoint
DROP TRIGGER IF EXISTS repositories_bodies_update ON repositories;
--> statement-breakpoint
DROP TRIGGER IF EXISTS companies_bodies_update ON companies;
--> statement-breakpoint
DROP TRIGGER IF EXISTS users_bodies_update ON users;
--> statement-breakpoint
DROP TRIGGER IF EXISTS repository_members_bodies_insert ON repository_members;
--> statement-breakpoint
DROP TRIGGER IF EXISTS repository_members_bodies_update ON repository_members;
--> statement-breakpoint
DROP TRIGGER IF EXISTS repository_members_bodies_delete ON repository_members;
--> statement-breakpoint
DROP TRIGGER IF EXISTS repository_members_bodies_truncate ON repository_members;
--> statement-breakpoint
DROP TRIGGER IF EXISTS safe_harbors_bodies_insert ON safe_harbors;
--> statement-breakpoint
DROP TRIGGER IF EXISTS safe_harbors_bodies_update ON safe_harbors;
--> statement-breakpoint
DROP TRIGGER IF EXISTS safe_harbors_bodies_delete ON safe_harbors;
--> statement-breakpoint
DROP TRIGGER IF EXISTS safe_harbors_bodies_truncate ON safe_harbors;
--> statement-breakpoint
DROP TRIGGER IF EXISTS asset_groups_bodies_insert ON asset_groups;
--> statement-breakpoint
DROP TRIGGER IF EXISTS asset_groups_bodies_update ON asset_groups;
--> statement-breakpoint
DROP TRIGGER IF EXISTS asset_groups_bodies_delete ON asset_groups;
--> statement-breakpoint
DROP TRIGGER IF EXISTS asset_groups_bodies_truncate ON asset_groups;
--> statement-breakpoint
DROP TRIGGER IF EXISTS assets_bodies_insert ON assets;
--> statement-breakpoint
DROP TRIGGER IF EXISTS assets_bodies_update ON assets;
--> statement-breakpoint
DROP TRIGGER IF EXISTS assets_bodies_delete ON assets;
--> statement-breakpoint
DROP TRIGGER IF EXISTS assets_bodies_truncate ON assets;
--> statement-breakpoint
DROP TRIGGER IF EXISTS labels_bodies_update ON labels;
--> statement-breakpoint
DROP TRIGGER IF EXISTS finding_labels_bodies_insert ON finding_labels;
--> statement-breakpoint
DROP TRIGGER IF EXISTS finding_labels_bodies_update ON finding_labels;
--> statement-breakpoint
DROP TRIGGER IF EXISTS finding_labels_bodies_delete ON finding_labels;
--> statement-breakpoint
DROP TRIGGER IF EXISTS finding_labels_bodies_truncate ON finding_labels;
--> statement-breakpoint
DROP VIEW IF EXISTS finding_body_source;
--> statement-breakpoint
CREATE VIEW finding_body_source AS
select f.id as finding_id, jsonb_build_object(
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
  'createdBy', (select jsonb_build_object(
      'userId', cu.id, 'name', cu.name, 'username', cu.username, 'avatar', cu.avatar,
      'isBot', cu.is_bot, 'createdAt', to_char(cu.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'teamId', cm.team_id,
      'pingsLeft', cm.pings_left, 'reputation', cu.reputation,
      'disabledAt', to_char(cu.disabled_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'deletedFromRepoAt', to_char(cm.deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
    from users cu left join repository_members cm on cm.user_id = cu.id and cm.repository_id = f.repository_id
    where cu.id = f.created_by),
  'createdAt', to_char(f.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'lastUpdatedAt', to_char(f.last_updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'locked', f.locked,
  'repository', (select jsonb_build_object('id', r.id, 'name', r.name, 'allowedSeverities', to_jsonb(r.allowed_severities))
    from repositories r where r.id = f.repository_id),
  'company', (select jsonb_build_object('id', c.id, 'handle', c.handle) from companies c where c.id = f.company_id),
  'reward', f.reward::text,
  'fixedBy', to_jsonb(f.fixed_by),
  'category', f.category,
  'assignedTo', (select jsonb_build_object(
      'userId', au.id, 'name', au.name, 'username', au.username, 'avatar', au.avatar,
      'isBot', au.is_bot, 'createdAt', to_char(au.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'teamId', am.team_id,
      'pingsLeft', am.pings_left, 'reputation', au.reputation,
      'disabledAt', to_char(au.disabled_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'deletedFromRepoAt', to_char(am.deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
    from users au left join repository_members am on am.user_id = au.id and am.repository_id = f.repository_id
    where au.id = f.assigned_to),
  'assetGroup', (select jsonb_build_object('id', g.id, 'name', g.name, 'description', g.description,
      'outOfScope', g.out_of_scope,
      'rewards', coalesce((select jsonb_agg(jsonb_build_object('minReward', gr.reward->>'minReward',
          'maxReward', gr.reward->>'maxReward') order by gr.position)
        from jsonb_array_elements(g.rewards) with ordinality as gr(reward, position)), '[]'::jsonb),
      'assets', coalesce((select jsonb_agg(jsonb_build_object('id', a.id, 'name', a.name,
        'description', a.description, 'reference', a.reference) order by a.name, a.id)
      from assets a where a.asset_group_id = g.id), '[]'::jsonb),
      'subGroups', coalesce((select jsonb_agg(jsonb_build_object('id', sg.id, 'name', sg.name,
          'description', sg.description, 'assets', coalesce((select jsonb_agg(jsonb_build_object('id', a.id, 'name', a.name,
        'description', a.description, 'reference', a.reference) order by a.name, a.id)
      from assets a where a.asset_group_id = sg.id), '[]'::jsonb))
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
  'labels', coalesce((select jsonb_agg(jsonb_build_object('id', l.id, 'name', l.name, 'isSystem', l.is_system,
      'reviewerRead', l.reviewer_read, 'reviewerUse', l.reviewer_use, 'description', l.description,
      'archivedAt', to_char(l.archived_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) order by l.name, l.id)
    from finding_labels fl join labels l on l.id = fl.label_id where fl.finding_id = f.id), '[]'::jsonb),
  'reviewerLabels', coalesce((select jsonb_agg(jsonb_build_object('id', l.id, 'name', l.name, 'isSystem', l.is_system,
      'reviewerRead', l.reviewer_read, 'reviewerUse', l.reviewer_use, 'description', l.description,
      'archivedAt', to_char(l.archived_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) order by l.name, l.id)
    from finding_labels fl join labels l on l.id = fl.label_id where fl.finding_id = f.id and l.reviewer_read), '[]'::jsonb)
) as body
from findings f;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION vigil_finding_bodies_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
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
$$;
--> statement-breakpoint
CREATE TRIGGER findings_bodies_insert AFTER INSERT ON findings REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as (select id, number, attributed_to, title, description, created_at, last_updated_at, locked, reward, fixed_by, category, payment_id, status, severity, repository_id, company_id, created_by, assigned_to, asset_group_id, safe_harbor_asset_ids from new_rows) select array_agg(distinct id) from (select id from changed) affected(id)');
--> statement-breakpoint
CREATE TRIGGER findings_bodies_update AFTER UPDATE ON findings REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as ((select id, number, attributed_to, title, description, created_at, last_updated_at, locked, reward, fixed_by, category, payment_id, status, severity, repository_id, company_id, created_by, assigned_to, asset_group_id, safe_harbor_asset_ids from new_rows except select id, number, attributed_to, title, description, created_at, last_updated_at, locked, reward, fixed_by, category, payment_id, status, severity, repository_id, company_id, created_by, assigned_to, asset_group_id, safe_harbor_asset_ids from old_rows) union all (select id, number, attributed_to, title, description, created_at, last_updated_at, locked, reward, fixed_by, category, payment_id, status, severity, repository_id, company_id, created_by, assigned_to, asset_group_id, safe_harbor_asset_ids from old_rows except select id, number, attributed_to, title, description, created_at, last_updated_at, locked, reward, fixed_by, category, payment_id, status, severity, repository_id, company_id, created_by, assigned_to, asset_group_id, safe_harbor_asset_ids from new_rows)) select array_agg(distinct id) from (select id from changed) affected(id)');
--> statement-breakpoint
CREATE TRIGGER finding_related_files_bodies_insert AFTER INSERT ON finding_related_files REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as (select id, finding_id, path, start_line, end_line, language, relevant_content, commit from new_rows) select array_agg(distinct id) from (select finding_id from changed) affected(id)');
--> statement-breakpoint
CREATE TRIGGER finding_related_files_bodies_update AFTER UPDATE ON finding_related_files REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as ((select id, finding_id, path, start_line, end_line, language, relevant_content, commit from new_rows except select id, finding_id, path, start_line, end_line, language, relevant_content, commit from old_rows) union all (select id, finding_id, path, start_line, end_line, language, relevant_content, commit from old_rows except select id, finding_id, path, start_line, end_line, language, relevant_content, commit from new_rows)) select array_agg(distinct id) from (select finding_id from changed) affected(id)');
--> statement-breakpoint
CREATE TRIGGER finding_related_files_bodies_delete AFTER DELETE ON finding_related_files REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as (select id, finding_id, path, start_line, end_line, language, relevant_content, commit from old_rows) select array_agg(distinct id) from (select finding_id from changed) affected(id)');
--> statement-breakpoint
CREATE TRIGGER finding_related_files_bodies_truncate AFTER TRUNCATE ON finding_related_files FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('select array_agg(finding_id) from finding_bodies');
--> statement-breakpoint
CREATE TRIGGER repositories_bodies_update AFTER UPDATE ON repositories REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as ((select id, name, allowed_severities from new_rows except select id, name, allowed_severities from old_rows) union all (select id, name, allowed_severities from old_rows except select id, name, allowed_severities from new_rows)) select array_agg(distinct id) from (select f.id from findings f where f.repository_id in (select id from changed)) affected(id)');
--> statement-breakpoint
CREATE TRIGGER companies_bodies_update AFTER UPDATE ON companies REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as ((select id, handle from new_rows except select id, handle from old_rows) union all (select id, handle from old_rows except select id, handle from new_rows)) select array_agg(distinct id) from (select f.id from findings f where f.company_id in (select id from changed)) affected(id)');
--> statement-breakpoint
CREATE TRIGGER users_bodies_update AFTER UPDATE ON users REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as ((select id, name, username, avatar, is_bot, created_at, reputation, disabled_at from new_rows except select id, name, username, avatar, is_bot, created_at, reputation, disabled_at from old_rows) union all (select id, name, username, avatar, is_bot, created_at, reputation, disabled_at from old_rows except select id, name, username, avatar, is_bot, created_at, reputation, disabled_at from new_rows)) select array_agg(distinct id) from (select f.id from findings f where f.created_by in (select id from changed) union select f.id from findings f where f.assigned_to in (select id from changed)) affected(id)');
--> statement-breakpoint
CREATE TRIGGER repository_members_bodies_insert AFTER INSERT ON repository_members REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as (select repository_id, user_id, team_id, pings_left, deleted_at from new_rows) select array_agg(distinct id) from (select f.id from findings f join changed m on f.repository_id = m.repository_id and f.created_by = m.user_id union select f.id from findings f join changed m on f.repository_id = m.repository_id and f.assigned_to = m.user_id) affected(id)');
--> statement-breakpoint
CREATE TRIGGER repository_members_bodies_update AFTER UPDATE ON repository_members REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as ((select repository_id, user_id, team_id, pings_left, deleted_at from new_rows except select repository_id, user_id, team_id, pings_left, deleted_at from old_rows) union all (select repository_id, user_id, team_id, pings_left, deleted_at from old_rows except select repository_id, user_id, team_id, pings_left, deleted_at from new_rows)) select array_agg(distinct id) from (select f.id from findings f join changed m on f.repository_id = m.repository_id and f.created_by = m.user_id union select f.id from findings f join changed m on f.repository_id = m.repository_id and f.assigned_to = m.user_id) affected(id)');
--> statement-breakpoint
CREATE TRIGGER repository_members_bodies_delete AFTER DELETE ON repository_members REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as (select repository_id, user_id, team_id, pings_left, deleted_at from old_rows) select array_agg(distinct id) from (select f.id from findings f join changed m on f.repository_id = m.repository_id and f.created_by = m.user_id union select f.id from findings f join changed m on f.repository_id = m.repository_id and f.assigned_to = m.user_id) affected(id)');
--> statement-breakpoint
CREATE TRIGGER repository_members_bodies_truncate AFTER TRUNCATE ON repository_members FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('select array_agg(finding_id) from finding_bodies');
--> statement-breakpoint
CREATE TRIGGER safe_harbors_bodies_insert AFTER INSERT ON safe_harbors REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as (select repository_id, assets from new_rows) select array_agg(distinct id) from (select f.id from findings f where f.repository_id in (select repository_id from changed) and cardinality(f.safe_harbor_asset_ids) > 0) affected(id)');
--> statement-breakpoint
CREATE TRIGGER safe_harbors_bodies_update AFTER UPDATE ON safe_harbors REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as ((select repository_id, assets from new_rows except select repository_id, assets from old_rows) union all (select repository_id, assets from old_rows except select repository_id, assets from new_rows)) select array_agg(distinct id) from (select f.id from findings f where f.repository_id in (select repository_id from changed) and cardinality(f.safe_harbor_asset_ids) > 0) affected(id)');
--> statement-breakpoint
CREATE TRIGGER safe_harbors_bodies_delete AFTER DELETE ON safe_harbors REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as (select repository_id, assets from old_rows) select array_agg(distinct id) from (select f.id from findings f where f.repository_id in (select repository_id from changed) and cardinality(f.safe_harbor_asset_ids) > 0) affected(id)');
--> statement-breakpoint
CREATE TRIGGER safe_harbors_bodies_truncate AFTER TRUNCATE ON safe_harbors FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('select array_agg(finding_id) from finding_bodies');
--> statement-breakpoint
CREATE TRIGGER asset_groups_bodies_insert AFTER INSERT ON asset_groups REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as (select id, parent_id, name, description, out_of_scope, rewards, position from new_rows) select array_agg(distinct id) from (select f.id from findings f where f.asset_group_id in (select id from changed union select parent_id from changed)) affected(id)');
--> statement-breakpoint
CREATE TRIGGER asset_groups_bodies_update AFTER UPDATE ON asset_groups REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as ((select id, parent_id, name, description, out_of_scope, rewards, position from new_rows except select id, parent_id, name, description, out_of_scope, rewards, position from old_rows) union all (select id, parent_id, name, description, out_of_scope, rewards, position from old_rows except select id, parent_id, name, description, out_of_scope, rewards, position from new_rows)) select array_agg(distinct id) from (select f.id from findings f where f.asset_group_id in (select id from changed union select parent_id from changed)) affected(id)');
--> statement-breakpoint
CREATE TRIGGER asset_groups_bodies_delete AFTER DELETE ON asset_groups REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as (select id, parent_id, name, description, out_of_scope, rewards, position from old_rows) select array_agg(distinct id) from (select f.id from findings f where f.asset_group_id in (select id from changed union select parent_id from changed)) affected(id)');
--> statement-breakpoint
CREATE TRIGGER asset_groups_bodies_truncate AFTER TRUNCATE ON asset_groups FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('select array_agg(finding_id) from finding_bodies');
--> statement-breakpoint
CREATE TRIGGER assets_bodies_insert AFTER INSERT ON assets REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as (select id, asset_group_id, name, description, reference from new_rows) select array_agg(distinct id) from (select f.id from findings f where f.asset_group_id in (select asset_group_id from changed union select g.parent_id from asset_groups g where g.id in (select asset_group_id from changed))) affected(id)');
--> statement-breakpoint
CREATE TRIGGER assets_bodies_update AFTER UPDATE ON assets REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as ((select id, asset_group_id, name, description, reference from new_rows except select id, asset_group_id, name, description, reference from old_rows) union all (select id, asset_group_id, name, description, reference from old_rows except select id, asset_group_id, name, description, reference from new_rows)) select array_agg(distinct id) from (select f.id from findings f where f.asset_group_id in (select asset_group_id from changed union select g.parent_id from asset_groups g where g.id in (select asset_group_id from changed))) affected(id)');
--> statement-breakpoint
CREATE TRIGGER assets_bodies_delete AFTER DELETE ON assets REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as (select id, asset_group_id, name, description, reference from old_rows) select array_agg(distinct id) from (select f.id from findings f where f.asset_group_id in (select asset_group_id from changed union select g.parent_id from asset_groups g where g.id in (select asset_group_id from changed))) affected(id)');
--> statement-breakpoint
CREATE TRIGGER assets_bodies_truncate AFTER TRUNCATE ON assets FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('select array_agg(finding_id) from finding_bodies');
--> statement-breakpoint
CREATE TRIGGER labels_bodies_update AFTER UPDATE ON labels REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as ((select id, name, is_system, reviewer_read, reviewer_use, description, archived_at from new_rows except select id, name, is_system, reviewer_read, reviewer_use, description, archived_at from old_rows) union all (select id, name, is_system, reviewer_read, reviewer_use, description, archived_at from old_rows except select id, name, is_system, reviewer_read, reviewer_use, description, archived_at from new_rows)) select array_agg(distinct id) from (select fl.finding_id from finding_labels fl where fl.label_id in (select id from changed)) affected(id)');
--> statement-breakpoint
CREATE TRIGGER finding_labels_bodies_insert AFTER INSERT ON finding_labels REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as (select finding_id, label_id from new_rows) select array_agg(distinct id) from (select finding_id from changed) affected(id)');
--> statement-breakpoint
CREATE TRIGGER finding_labels_bodies_update AFTER UPDATE ON finding_labels REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as ((select finding_id, label_id from new_rows except select finding_id, label_id from old_rows) union all (select finding_id, label_id from old_rows except select finding_id, label_id from new_rows)) select array_agg(distinct id) from (select finding_id from changed) affected(id)');
--> statement-breakpoint
CREATE TRIGGER finding_labels_bodies_delete AFTER DELETE ON finding_labels REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('with changed as (select finding_id, label_id from old_rows) select array_agg(distinct id) from (select finding_id from changed) affected(id)');
--> statement-breakpoint
CREATE TRIGGER finding_labels_bodies_truncate AFTER TRUNCATE ON finding_labels FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_refresh('select array_agg(finding_id) from finding_bodies');
--> statement-breakpoint
INSERT INTO finding_bodies (finding_id, body) SELECT finding_id, body FROM finding_body_source
  ON CONFLICT (finding_id) DO UPDATE SET body = excluded.body WHERE finding_bodies.body IS DISTINCT FROM excluded.body;
