-- A user's comment read markers concern only that user's reads (the unread flags, counts and
-- filter of all-findings are the reader's own): a change of comment_reads notifies "vigil_reads"
-- with "comment_reads:u:<user id>", once per user per transaction, and processes forget only that
-- user's kept pages (src/auth/kept-reads.ts). Before, every marker written by opening a finding's
-- comments forgot every kept all-findings page of every user. A TRUNCATE still names the table.
CREATE OR REPLACE FUNCTION vigil_notify_reads_of_user() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    PERFORM pg_notify('vigil_reads', TG_TABLE_NAME || ':u:' || OLD.user_id);
    PERFORM pg_notify('vigil_own_' || pg_backend_pid(), 'vigil_reads:' || TG_TABLE_NAME || ':u:' || OLD.user_id);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM pg_notify('vigil_reads', TG_TABLE_NAME || ':u:' || NEW.user_id);
    PERFORM pg_notify('vigil_own_' || pg_backend_pid(), 'vigil_reads:' || TG_TABLE_NAME || ':u:' || NEW.user_id);
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
DROP TRIGGER comment_reads_notify_reads ON comment_reads;
--> statement-breakpoint
CREATE TRIGGER comment_reads_notify_reads AFTER INSERT OR UPDATE OR DELETE ON comment_reads
  FOR EACH ROW EXECUTE FUNCTION vigil_notify_reads_of_user();
--> statement-breakpoint
CREATE TRIGGER comment_reads_truncate_notify_reads AFTER TRUNCATE ON comment_reads
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
