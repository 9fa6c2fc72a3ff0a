CREATE TABLE "finding_events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "finding_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"finding_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"actor_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "finding_related_files" ADD COLUMN "commit" text;--> statement-breakpoint
ALTER TABLE "finding_events" ADD CONSTRAINT "finding_events_finding_id_findings_id_fk" FOREIGN KEY ("finding_id") REFERENCES "public"."findings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "finding_events" ADD CONSTRAINT "finding_events_actor_id_users_id_fk" FOREIGN KEY ("actor_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "finding_events_finding_idx" ON "finding_events" USING btree ("finding_id","created_at","id");--> statement-breakpoint
-- The user a writing transaction acts for (set_config('vigil.actor', id, true) by the findings
-- service), or null: the system (scanner, integrations) or a writer that names no one.
CREATE FUNCTION vigil_event_actor() RETURNS uuid LANGUAGE sql STABLE AS $$
  SELECT nullif(current_setting('vigil.actor', true), '')::uuid
$$;
--> statement-breakpoint
-- Status, severity, assignee and duplicate changes of published findings of repositories, one
-- event per changed field and row, in the writing statement's transaction.
CREATE FUNCTION vigil_finding_events_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO finding_events (finding_id, kind, data, actor_id)
  SELECT n.id, e.kind, e.data, vigil_event_actor()
  FROM new_rows n JOIN old_rows o ON o.id = n.id
  CROSS JOIN LATERAL (VALUES
    (1, 'duplicate', CASE WHEN n.duplicate_of IS DISTINCT FROM o.duplicate_of
      THEN jsonb_build_object('from', o.duplicate_of, 'to', n.duplicate_of) END),
    (2, 'status', CASE WHEN n.status IS DISTINCT FROM o.status
      THEN jsonb_build_object('from', o.status, 'to', n.status) END),
    (3, 'severity', CASE WHEN n.severity IS DISTINCT FROM o.severity
      THEN jsonb_build_object('from', o.severity, 'to', n.severity) END),
    (4, 'assignee', CASE WHEN n.assigned_to IS DISTINCT FROM o.assigned_to
      THEN jsonb_build_object('from', o.assigned_to, 'to', n.assigned_to) END)
  ) AS e(position, kind, data)
  WHERE e.data IS NOT NULL AND n.published AND n.repository_id IS NOT NULL
  ORDER BY n.id, e.position;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER findings_events_update AFTER UPDATE ON findings
  REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_events_update();
--> statement-breakpoint
-- Labels put on or taken off a published finding. Labels given when the finding is filed (in the
-- transaction that created it) are part of the filing, not changes; a label or finding being
-- deleted (a cascade: the row is no longer visible here) leaves no event.
CREATE FUNCTION vigil_finding_events_labels() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO finding_events (finding_id, kind, data, actor_id)
    SELECT r.finding_id, 'label_added', jsonb_build_object('labelId', r.label_id), vigil_event_actor()
    FROM new_rows r JOIN findings f ON f.id = r.finding_id
    WHERE f.published AND f.repository_id IS NOT NULL AND f.created_at <> now();
  ELSE
    INSERT INTO finding_events (finding_id, kind, data, actor_id)
    SELECT r.finding_id, 'label_removed', jsonb_build_object('labelId', r.label_id), vigil_event_actor()
    FROM old_rows r JOIN findings f ON f.id = r.finding_id JOIN labels l ON l.id = r.label_id
    WHERE f.published AND f.repository_id IS NOT NULL;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER finding_labels_events_insert AFTER INSERT ON finding_labels
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_events_labels();
--> statement-breakpoint
CREATE TRIGGER finding_labels_events_delete AFTER DELETE ON finding_labels
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_events_labels();
--> statement-breakpoint
-- Tracker tickets linked to (or created for) a finding, and unlinked.
CREATE FUNCTION vigil_finding_events_tickets() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO finding_events (finding_id, kind, data, actor_id)
    SELECT r.finding_id, 'ticket_linked',
      jsonb_build_object('provider', r.provider, 'key', r.key, 'url', r.url, 'source', r.source), vigil_event_actor()
    FROM new_rows r JOIN findings f ON f.id = r.finding_id;
  ELSE
    INSERT INTO finding_events (finding_id, kind, data, actor_id)
    SELECT r.finding_id, 'ticket_unlinked',
      jsonb_build_object('provider', r.provider, 'key', r.key, 'url', r.url), vigil_event_actor()
    FROM old_rows r JOIN findings f ON f.id = r.finding_id;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER finding_tickets_events_insert AFTER INSERT ON finding_tickets
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_events_tickets();
--> statement-breakpoint
CREATE TRIGGER finding_tickets_events_delete AFTER DELETE ON finding_tickets
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_events_tickets();
