-- Console sessions (src/auth/session.ts): the cookie holds a random id of its own, stored hashed.
-- A session ends with its token and its user: revoking the token, or disabling or deleting the
-- user, revokes its sessions in the same statement's transaction, whatever path made the change
-- (API, command line, SQL). Revoking or deleting sessions notifies "vigil_credentials" (0012,
-- 0024) when a row changed, so that every process forgets the sessions it resolved; opening one
-- does not (nothing cached can be about a session that did not exist).
CREATE TABLE "console_sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"token_id" uuid NOT NULL,
	"hash" text NOT NULL,
	"user_agent" text,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "console_sessions" ADD CONSTRAINT "console_sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "console_sessions" ADD CONSTRAINT "console_sessions_token_id_user_tokens_id_fk" FOREIGN KEY ("token_id") REFERENCES "public"."user_tokens"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "console_sessions_hash_key" ON "console_sessions" USING btree ("hash");--> statement-breakpoint
CREATE INDEX "console_sessions_user_idx" ON "console_sessions" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "console_sessions_token_idx" ON "console_sessions" USING btree ("token_id");--> statement-breakpoint
CREATE FUNCTION vigil_notify_credentials_if_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- A statement that changed no session (a repeated revocation, a clean-up with nothing to
  -- remove) leaves every cache as it is.
  IF EXISTS (SELECT 1 FROM changed_rows) THEN
    PERFORM vigil_notify('vigil_credentials', TG_TABLE_NAME);
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER console_sessions_update_notify_credentials AFTER UPDATE ON console_sessions
  REFERENCING NEW TABLE AS changed_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_credentials_if_rows();
--> statement-breakpoint
CREATE TRIGGER console_sessions_delete_notify_credentials AFTER DELETE ON console_sessions
  REFERENCING OLD TABLE AS changed_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_credentials_if_rows();
--> statement-breakpoint
CREATE TRIGGER console_sessions_truncate_notify_credentials AFTER TRUNCATE ON console_sessions
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_credentials();
--> statement-breakpoint
CREATE FUNCTION vigil_end_sessions_of_token() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE console_sessions SET revoked_at = now() WHERE token_id = NEW.id AND revoked_at IS NULL;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER user_tokens_end_sessions AFTER UPDATE OF revoked_at ON user_tokens
  FOR EACH ROW WHEN (NEW.revoked_at IS NOT NULL AND OLD.revoked_at IS NULL)
  EXECUTE FUNCTION vigil_end_sessions_of_token();
--> statement-breakpoint
CREATE FUNCTION vigil_end_sessions_of_user() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE console_sessions SET revoked_at = now() WHERE user_id = NEW.id AND revoked_at IS NULL;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER users_end_sessions AFTER UPDATE OF disabled_at, deleted_at ON users
  FOR EACH ROW WHEN ((NEW.disabled_at IS NOT NULL AND OLD.disabled_at IS NULL)
    OR (NEW.deleted_at IS NOT NULL AND OLD.deleted_at IS NULL))
  EXECUTE FUNCTION vigil_end_sessions_of_user();
