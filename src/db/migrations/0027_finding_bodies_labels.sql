-- A kept finding body (0025) now holds the finding's labels too, as two lists: all of them, and
-- those reviewers may read; a reader's statement picks one instead of looking the labels up for
-- every finding (`loadFindingBodies`). The bodies are cleared by every change of what those lists
-- hold: a label's fields, a label put on or taken off a finding (a label removed takes its
-- finding_labels rows with it), and a TRUNCATE of either table. The bodies kept before hold no
-- labels: all are cleared, and their stamps moved on.
CREATE TRIGGER labels_bodies_update AFTER UPDATE ON labels REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(distinct fl.finding_id) from finding_labels fl
    where fl.label_id in (select n.id from new_rows n join old_rows o on o.id = n.id
      where (n.name, n.is_system, n.reviewer_read, n.reviewer_use, n.description, n.archived_at)
        is distinct from (o.name, o.is_system, o.reviewer_read, o.reviewer_use, o.description, o.archived_at))');
--> statement-breakpoint
CREATE TRIGGER finding_labels_bodies_insert AFTER INSERT ON finding_labels REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(distinct finding_id) from new_rows');
--> statement-breakpoint
CREATE TRIGGER finding_labels_bodies_update AFTER UPDATE ON finding_labels REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(distinct finding_id)
    from (select finding_id from new_rows union all select finding_id from old_rows) r');
--> statement-breakpoint
CREATE TRIGGER finding_labels_bodies_delete AFTER DELETE ON finding_labels REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget('select array_agg(distinct finding_id) from old_rows');
--> statement-breakpoint
DO $$
DECLARE
  source text;
BEGIN
  FOREACH source IN ARRAY ARRAY['labels', 'finding_labels'] LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget(%L)',
      source || '_bodies_truncate', source, 'select array_agg(finding_id) from finding_bodies');
  END LOOP;
END;
$$;
--> statement-breakpoint
UPDATE finding_bodies SET stamp = stamp + 1, body = NULL;
