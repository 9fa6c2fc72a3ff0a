-- A process forgets what its own commits changed before it answers the request that made them
-- (src/db/client.ts, Database.onOwnNotify): every pooled connection listens on
-- "vigil_own_<its backend pid>", and the notifying triggers (0012, 0017, 0019, 0020) also send
-- "<channel>:<table>" there. PostgreSQL delivers a session's own notifications at its commit,
-- before the commit's answer. Other processes still learn of the change on the shared channels.
CREATE OR REPLACE FUNCTION vigil_notify_reads() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('vigil_reads', TG_TABLE_NAME);
  PERFORM pg_notify('vigil_own_' || pg_backend_pid(), 'vigil_reads:' || TG_TABLE_NAME);
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION vigil_notify_credentials() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('vigil_credentials', TG_TABLE_NAME);
  PERFORM pg_notify('vigil_own_' || pg_backend_pid(), 'vigil_credentials:' || TG_TABLE_NAME);
  RETURN NULL;
END;
$$;
