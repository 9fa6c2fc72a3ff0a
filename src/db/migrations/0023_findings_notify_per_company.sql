-- Findings and what hangs on them (labels, related files, comments, the per-bucket counts, and the
-- repository, whose finding counter moves with each new finding) change all day in every company;
-- a kept all-findings page depends only on the findings and repositories of the companies its
-- caller may see. These tables now notify "vigil_reads" with "<table>:c:<company id>", once per
-- company a statement changed (its transition tables; rows of a finding that no longer exists, or
-- more than 32 companies, name the table alone), and processes forget only the kept values read for
-- callers who may see that company (src/auth/kept-reads.ts). A statement that changes no row
-- notifies nothing; a TRUNCATE names the table.
CREATE OR REPLACE FUNCTION vigil_notify_reads_by_company() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed_rows text := CASE TG_OP WHEN 'INSERT' THEN 'new_rows' WHEN 'DELETE' THEN 'old_rows'
    ELSE '(select * from new_rows union all select * from old_rows)' END;
  companies uuid[];
  company uuid;
BEGIN
  -- TG_ARGV[0]: a query returning the companies of the changed rows %s as one array.
  EXECUTE format(TG_ARGV[0], changed_rows) INTO companies;
  IF companies IS NULL THEN
    RETURN NULL;
  END IF;
  IF array_position(companies, NULL) IS NOT NULL OR cardinality(companies) > 32 THEN
    PERFORM pg_notify('vigil_reads', TG_TABLE_NAME);
    PERFORM pg_notify('vigil_own_' || pg_backend_pid(), 'vigil_reads:' || TG_TABLE_NAME);
    RETURN NULL;
  END IF;
  FOREACH company IN ARRAY companies LOOP
    PERFORM pg_notify('vigil_reads', TG_TABLE_NAME || ':c:' || company);
    PERFORM pg_notify('vigil_own_' || pg_backend_pid(), 'vigil_reads:' || TG_TABLE_NAME || ':c:' || company);
  END LOOP;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
DROP TRIGGER findings_notify_reads ON findings;
--> statement-breakpoint
CREATE TRIGGER findings_insert_notify_reads AFTER INSERT ON findings REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct r.company_id) from %s r');
--> statement-breakpoint
CREATE TRIGGER findings_update_notify_reads AFTER UPDATE ON findings REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct r.company_id) from %s r');
--> statement-breakpoint
CREATE TRIGGER findings_delete_notify_reads AFTER DELETE ON findings REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct r.company_id) from %s r');
--> statement-breakpoint
CREATE TRIGGER findings_truncate_notify_reads AFTER TRUNCATE ON findings
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
DROP TRIGGER finding_counts_notify_reads ON finding_counts;
--> statement-breakpoint
CREATE TRIGGER finding_counts_insert_notify_reads AFTER INSERT ON finding_counts REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct r.company_id) from %s r');
--> statement-breakpoint
CREATE TRIGGER finding_counts_update_notify_reads AFTER UPDATE ON finding_counts REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct r.company_id) from %s r');
--> statement-breakpoint
CREATE TRIGGER finding_counts_delete_notify_reads AFTER DELETE ON finding_counts REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct r.company_id) from %s r');
--> statement-breakpoint
CREATE TRIGGER finding_counts_truncate_notify_reads AFTER TRUNCATE ON finding_counts
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
DROP TRIGGER finding_labels_notify_reads ON finding_labels;
--> statement-breakpoint
CREATE TRIGGER finding_labels_insert_notify_reads AFTER INSERT ON finding_labels REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct f.company_id) from %s r left join findings f on f.id = r.finding_id');
--> statement-breakpoint
CREATE TRIGGER finding_labels_update_notify_reads AFTER UPDATE ON finding_labels REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct f.company_id) from %s r left join findings f on f.id = r.finding_id');
--> statement-breakpoint
CREATE TRIGGER finding_labels_delete_notify_reads AFTER DELETE ON finding_labels REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct f.company_id) from %s r left join findings f on f.id = r.finding_id');
--> statement-breakpoint
CREATE TRIGGER finding_labels_truncate_notify_reads AFTER TRUNCATE ON finding_labels
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
DROP TRIGGER finding_related_files_notify_reads ON finding_related_files;
--> statement-breakpoint
CREATE TRIGGER finding_related_files_insert_notify_reads AFTER INSERT ON finding_related_files REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct f.company_id) from %s r left join findings f on f.id = r.finding_id');
--> statement-breakpoint
CREATE TRIGGER finding_related_files_update_notify_reads AFTER UPDATE ON finding_related_files REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct f.company_id) from %s r left join findings f on f.id = r.finding_id');
--> statement-breakpoint
CREATE TRIGGER finding_related_files_delete_notify_reads AFTER DELETE ON finding_related_files REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct f.company_id) from %s r left join findings f on f.id = r.finding_id');
--> statement-breakpoint
CREATE TRIGGER finding_related_files_truncate_notify_reads AFTER TRUNCATE ON finding_related_files
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
DROP TRIGGER comments_notify_reads ON comments;
--> statement-breakpoint
CREATE TRIGGER comments_insert_notify_reads AFTER INSERT ON comments REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct f.company_id) from %s r left join findings f on f.id = r.finding_id');
--> statement-breakpoint
CREATE TRIGGER comments_update_notify_reads AFTER UPDATE ON comments REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct f.company_id) from %s r left join findings f on f.id = r.finding_id');
--> statement-breakpoint
CREATE TRIGGER comments_delete_notify_reads AFTER DELETE ON comments REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct f.company_id) from %s r left join findings f on f.id = r.finding_id');
--> statement-breakpoint
CREATE TRIGGER comments_truncate_notify_reads AFTER TRUNCATE ON comments
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
--> statement-breakpoint
DROP TRIGGER repositories_notify_reads ON repositories;
--> statement-breakpoint
CREATE TRIGGER repositories_insert_notify_reads AFTER INSERT ON repositories REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct r.company_id) from %s r');
--> statement-breakpoint
CREATE TRIGGER repositories_update_notify_reads AFTER UPDATE ON repositories REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct r.company_id) from %s r');
--> statement-breakpoint
CREATE TRIGGER repositories_delete_notify_reads AFTER DELETE ON repositories REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct r.company_id) from %s r');
--> statement-breakpoint
CREATE TRIGGER repositories_truncate_notify_reads AFTER TRUNCATE ON repositories
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
