CREATE TABLE "finding_bodies" (
	"finding_id" uuid PRIMARY KEY NOT NULL,
	"stamp" bigint DEFAULT 0 NOT NULL,
	"body" text
);
--> statement-breakpoint
ALTER TABLE "finding_bodies" ADD CONSTRAINT "finding_bodies_finding_id_findings_id_fk" FOREIGN KEY ("finding_id") REFERENCES "public"."findings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "findings_assigned_to_idx" ON "findings" USING btree ("assigned_to") WHERE "findings"."assigned_to" is not null;--> statement-breakpoint
CREATE INDEX "findings_asset_group_idx" ON "findings" USING btree ("asset_group_id") WHERE "findings"."asset_group_id" is not null;--> statement-breakpoint
-- finding_bodies keeps, per finding, the part of its API payload that every reader sees alike
-- (`loadFindingBodies`, src/platform/findings/findings.repo.ts). A row is added with each finding; the statement
-- triggers below clear the body and move the stamp on, in the transaction of the write, for every
-- finding whose part a statement may have changed: the finding's own fields, its related files,
-- its author's and assignee's user rows and repository memberships, its repository and company,
-- its asset group (with the group's sub-groups and their assets) and its repository's safe harbor.
-- Rows are locked in the order of their ids, so concurrent writers queue instead of deadlocking.
-- Readers write a body back only where the stamp they read is unchanged.
CREATE FUNCTION vigil_finding_bodies_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO finding_bodies (finding_id) SELECT id FROM new_rows ORDER BY id ON CONFLICT DO NOTHING;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE FUNCTION vigil_finding_bodies_forget() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ids uuid[];
BEGIN
  -- TG_ARGV[0]: a query over the statement's transition tables (new_rows, old_rows) returning, as
  -- one array, the ids of the findings whose shared payload part the statement may have changed.
  EXECUTE TG_ARGV[0] INTO ids;
  IF ids IS NULL OR cardinality(ids) = 0 THEN
    RETURN NULL;
  END IF;
  UPDATE finding_bodies b SET stamp = b.stamp + 1, body = NULL
  FROM (SELECT finding_id FROM finding_bodies WHERE finding_id = ANY(ids) ORDER BY finding_id FOR UPDATE) locked
  WHERE b.finding_id = locked.finding_id;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
INSERT INTO finding_bodies (finding_id) SELECT id FROM findings ON CONFLICT DO NOTHING;
--> statement-breakpoint
CREATE TRIGGER findings_bodies_insert AFTER INSERT ON findings REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_add();
--> statement-breakpoint
CREATE TRIGGER findings_bodies_update AFTER UPDATE ON findings REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(n.id) from new_rows n join old_rows o on o.id = n.id
    where (n.number, n.attributed_to, n.title, n.description, n.created_at, n.last_updated_at, n.locked, n.reward,
        n.fixed_by, n.category, n.payment_id, n.status, n.severity, n.repository_id, n.company_id, n.created_by,
        n.assigned_to, n.asset_group_id, n.safe_harbor_asset_ids)
      is distinct from (o.number, o.attributed_to, o.title, o.description, o.created_at, o.last_updated_at, o.locked,
        o.reward, o.fixed_by, o.category, o.payment_id, o.status, o.severity, o.repository_id, o.company_id,
        o.created_by, o.assigned_to, o.asset_group_id, o.safe_harbor_asset_ids)');
--> statement-breakpoint
CREATE TRIGGER finding_related_files_bodies_insert AFTER INSERT ON finding_related_files REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(distinct finding_id) from new_rows');
--> statement-breakpoint
CREATE TRIGGER finding_related_files_bodies_update AFTER UPDATE ON finding_related_files REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(distinct finding_id)
    from (select finding_id from new_rows union all select finding_id from old_rows) r');
--> statement-breakpoint
CREATE TRIGGER finding_related_files_bodies_delete AFTER DELETE ON finding_related_files REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(distinct finding_id) from old_rows');
--> statement-breakpoint
CREATE TRIGGER repositories_bodies_update AFTER UPDATE ON repositories REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(f.id) from findings f
    where f.repository_id in (select n.id from new_rows n join old_rows o on o.id = n.id
      where (n.name, n.allowed_severities) is distinct from (o.name, o.allowed_severities))');
--> statement-breakpoint
CREATE TRIGGER companies_bodies_update AFTER UPDATE ON companies REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(f.id) from findings f
    where f.company_id in (select n.id from new_rows n join old_rows o on o.id = n.id where n.handle is distinct from o.handle)');
--> statement-breakpoint
CREATE TRIGGER users_bodies_update AFTER UPDATE ON users REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('with changed as (select n.id from new_rows n join old_rows o on o.id = n.id
      where (n.name, n.username, n.avatar, n.is_bot, n.created_at, n.reputation, n.disabled_at)
        is distinct from (o.name, o.username, o.avatar, o.is_bot, o.created_at, o.reputation, o.disabled_at))
    select array_agg(id) from (select f.id from findings f where f.created_by in (select id from changed)
      union select f.id from findings f where f.assigned_to in (select id from changed)) r');
--> statement-breakpoint
CREATE TRIGGER repository_members_bodies_insert AFTER INSERT ON repository_members REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(id) from (
      select f.id from findings f join new_rows m on f.repository_id = m.repository_id and f.created_by = m.user_id
      union select f.id from findings f join new_rows m on f.repository_id = m.repository_id and f.assigned_to = m.user_id) r');
--> statement-breakpoint
CREATE TRIGGER repository_members_bodies_update AFTER UPDATE ON repository_members REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('with changed as (
      select n.repository_id, n.user_id from new_rows n join old_rows o on o.repository_id = n.repository_id and o.user_id = n.user_id
      where (n.team_id, n.pings_left, n.deleted_at) is distinct from (o.team_id, o.pings_left, o.deleted_at)
      union select o.repository_id, o.user_id from old_rows o
      where not exists (select 1 from new_rows n where n.repository_id = o.repository_id and n.user_id = o.user_id))
    select array_agg(id) from (
      select f.id from findings f join changed m on f.repository_id = m.repository_id and f.created_by = m.user_id
      union select f.id from findings f join changed m on f.repository_id = m.repository_id and f.assigned_to = m.user_id) r');
--> statement-breakpoint
CREATE TRIGGER repository_members_bodies_delete AFTER DELETE ON repository_members REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(id) from (
      select f.id from findings f join old_rows m on f.repository_id = m.repository_id and f.created_by = m.user_id
      union select f.id from findings f join old_rows m on f.repository_id = m.repository_id and f.assigned_to = m.user_id) r');
--> statement-breakpoint
CREATE TRIGGER safe_harbors_bodies_insert AFTER INSERT ON safe_harbors REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(f.id) from findings f
    where f.repository_id in (select repository_id from new_rows) and cardinality(f.safe_harbor_asset_ids) > 0');
--> statement-breakpoint
CREATE TRIGGER safe_harbors_bodies_update AFTER UPDATE ON safe_harbors REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(f.id) from findings f
    where f.repository_id in (select repository_id from new_rows union select repository_id from old_rows)
      and cardinality(f.safe_harbor_asset_ids) > 0');
--> statement-breakpoint
CREATE TRIGGER safe_harbors_bodies_delete AFTER DELETE ON safe_harbors REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(f.id) from findings f
    where f.repository_id in (select repository_id from old_rows) and cardinality(f.safe_harbor_asset_ids) > 0');
--> statement-breakpoint
CREATE TRIGGER asset_groups_bodies_insert AFTER INSERT ON asset_groups REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(f.id) from findings f
    where f.asset_group_id in (select id from new_rows union select parent_id from new_rows)');
--> statement-breakpoint
CREATE TRIGGER asset_groups_bodies_update AFTER UPDATE ON asset_groups REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(f.id) from findings f
    where f.asset_group_id in (select id from new_rows union select parent_id from new_rows union select parent_id from old_rows)');
--> statement-breakpoint
CREATE TRIGGER asset_groups_bodies_delete AFTER DELETE ON asset_groups REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(f.id) from findings f
    where f.asset_group_id in (select id from old_rows union select parent_id from old_rows)');
--> statement-breakpoint
CREATE TRIGGER assets_bodies_insert AFTER INSERT ON assets REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(f.id) from findings f
    where f.asset_group_id in (select asset_group_id from new_rows
      union select g.parent_id from asset_groups g where g.id in (select asset_group_id from new_rows))');
--> statement-breakpoint
CREATE TRIGGER assets_bodies_update AFTER UPDATE ON assets REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(f.id) from findings f
    where f.asset_group_id in (select asset_group_id from (select asset_group_id from new_rows union select asset_group_id from old_rows) r
      union select g.parent_id from asset_groups g
        where g.id in (select asset_group_id from new_rows union select asset_group_id from old_rows))');
--> statement-breakpoint
CREATE TRIGGER assets_bodies_delete AFTER DELETE ON assets REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(f.id) from findings f
    where f.asset_group_id in (select asset_group_id from old_rows
      union select g.parent_id from asset_groups g where g.id in (select asset_group_id from old_rows))');
