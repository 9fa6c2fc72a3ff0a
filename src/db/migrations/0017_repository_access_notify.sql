-- Repository memberships and a repository's show_all_findings decide which findings a user reads;
-- processes keep a user's memberships with the user's resolved credential (access.service.ts), so
-- their changes notify "vigil_credentials" like the changes of migration 0012: every process then
-- forgets its resolved credentials, and with them the memberships read for them.
CREATE TRIGGER repository_members_notify_credentials AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON repository_members
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_credentials();
--> statement-breakpoint
CREATE TRIGGER repositories_notify_credentials AFTER UPDATE OF show_all_findings OR DELETE OR TRUNCATE ON repositories
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_credentials();
