-- A service key's last use is written at most once a minute while it is used: that write changes
-- nothing a credential resolves to, so it must not flush every process's credential cache. The
-- notification trigger fires on inserts, deletes and the columns that decide a key's actor only.
DROP TRIGGER IF EXISTS service_keys_notify_credentials ON service_keys;
--> statement-breakpoint
CREATE TRIGGER service_keys_notify_credentials
  AFTER INSERT OR DELETE OR TRUNCATE OR UPDATE OF company_id, name, prefix, hash, scopes, expires_at, revoked_at
  ON service_keys
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_credentials();
