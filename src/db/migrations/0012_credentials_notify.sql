-- Every change to what a credential resolves to (tokens, service keys, users, memberships,
-- platform permissions) sends one notification per statement on "vigil_credentials", delivered at
-- commit: every process flushes its credential cache when it arrives.
CREATE OR REPLACE FUNCTION vigil_notify_credentials() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('vigil_credentials', TG_TABLE_NAME);
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER user_tokens_notify_credentials AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON user_tokens
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_credentials();
--> statement-breakpoint
CREATE TRIGGER service_keys_notify_credentials AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON service_keys
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_credentials();
--> statement-breakpoint
CREATE TRIGGER users_notify_credentials AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_credentials();
--> statement-breakpoint
CREATE TRIGGER company_members_notify_credentials AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON company_members
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_credentials();
--> statement-breakpoint
CREATE TRIGGER platform_permissions_notify_credentials AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON platform_permissions
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_credentials();
