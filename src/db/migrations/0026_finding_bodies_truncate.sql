-- A TRUNCATE of a table whose rows a kept finding body holds (0025) clears every kept body and
-- moves every stamp on, as its row-level statements clear the bodies they concern: a TRUNCATE
-- fires no row triggers and has no transition tables, so it cannot tell which findings it
-- concerned. (A TRUNCATE of findings takes finding_bodies with it.)
CREATE TRIGGER finding_related_files_bodies_truncate AFTER TRUNCATE ON finding_related_files
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(finding_id) from finding_bodies');
--> statement-breakpoint
CREATE TRIGGER repositories_bodies_truncate AFTER TRUNCATE ON repositories
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(finding_id) from finding_bodies');
--> statement-breakpoint
CREATE TRIGGER companies_bodies_truncate AFTER TRUNCATE ON companies
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(finding_id) from finding_bodies');
--> statement-breakpoint
CREATE TRIGGER users_bodies_truncate AFTER TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(finding_id) from finding_bodies');
--> statement-breakpoint
CREATE TRIGGER repository_members_bodies_truncate AFTER TRUNCATE ON repository_members
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(finding_id) from finding_bodies');
--> statement-breakpoint
CREATE TRIGGER safe_harbors_bodies_truncate AFTER TRUNCATE ON safe_harbors
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(finding_id) from finding_bodies');
--> statement-breakpoint
CREATE TRIGGER asset_groups_bodies_truncate AFTER TRUNCATE ON asset_groups
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(finding_id) from finding_bodies');
--> statement-breakpoint
CREATE TRIGGER assets_bodies_truncate AFTER TRUNCATE ON assets
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(finding_id) from finding_bodies');
