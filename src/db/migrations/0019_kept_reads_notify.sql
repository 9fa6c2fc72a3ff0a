-- Processes keep the answers of some reads (all-findings, reports, audit log, getScan) per caller
-- (src/auth/kept-reads.ts). Every statement that changes a table such a read reads notifies
-- "vigil_reads" at commit with the table's name, and every process forgets the pages of the reads
-- that read it. A test checks that every table in the plans of those reads has this trigger.
CREATE OR REPLACE FUNCTION vigil_notify_reads() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('vigil_reads', TG_TABLE_NAME);
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER findings_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON findings
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER finding_counts_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON finding_counts
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER finding_labels_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON finding_labels
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER labels_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON labels
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER finding_related_files_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON finding_related_files
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER comments_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON comments
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER comment_reads_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON comment_reads
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER users_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER companies_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON companies
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER repositories_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON repositories
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER repository_members_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON repository_members
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER assets_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON assets
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER asset_groups_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON asset_groups
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER safe_harbors_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON safe_harbors
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER reports_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON reports
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER guilds_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON guilds
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER audit_log_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
CREATE TRIGGER scans_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON scans
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
