CREATE TABLE "draft_settings" (
	"company_id" uuid PRIMARY KEY NOT NULL,
	"triager_user_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL,
	"auto_mark_fixed" boolean DEFAULT false NOT NULL,
	"updated_by" uuid,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "finding_scan_events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"finding_id" uuid NOT NULL,
	"scan_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"commit" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "scan_fixed_drafts" (
	"scan_id" uuid NOT NULL,
	"finding_id" uuid NOT NULL,
	"location" jsonb NOT NULL,
	CONSTRAINT "scan_fixed_drafts_scan_id_finding_id_pk" PRIMARY KEY("scan_id","finding_id")
);
--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "triage_state" text;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "dismissed_reason" text;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "dismissed_comment" text;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "dismissed_by" uuid;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "dismissed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "published_finding_id" uuid;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "published_by" uuid;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "published_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "source_scan_id" uuid;--> statement-breakpoint
ALTER TABLE "scan_findings" ADD COLUMN "baseline_state" text;--> statement-breakpoint
ALTER TABLE "scans" ADD COLUMN "branch" text;--> statement-breakpoint
ALTER TABLE "scans" ADD COLUMN "commit" text;--> statement-breakpoint
ALTER TABLE "scans" ADD COLUMN "pull_request" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "scans" ADD COLUMN "baseline_scan_id" uuid;--> statement-breakpoint
ALTER TABLE "scans" ADD COLUMN "baseline_branch" text;--> statement-breakpoint
ALTER TABLE "draft_settings" ADD CONSTRAINT "draft_settings_company_id_companies_id_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "draft_settings" ADD CONSTRAINT "draft_settings_updated_by_users_id_fk" FOREIGN KEY ("updated_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "finding_scan_events" ADD CONSTRAINT "finding_scan_events_finding_id_findings_id_fk" FOREIGN KEY ("finding_id") REFERENCES "public"."findings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "finding_scan_events" ADD CONSTRAINT "finding_scan_events_scan_id_scans_id_fk" FOREIGN KEY ("scan_id") REFERENCES "public"."scans"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scan_fixed_drafts" ADD CONSTRAINT "scan_fixed_drafts_scan_id_scans_id_fk" FOREIGN KEY ("scan_id") REFERENCES "public"."scans"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scan_fixed_drafts" ADD CONSTRAINT "scan_fixed_drafts_finding_id_findings_id_fk" FOREIGN KEY ("finding_id") REFERENCES "public"."findings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "finding_scan_events_key" ON "finding_scan_events" USING btree ("finding_id","scan_id","kind");--> statement-breakpoint
CREATE INDEX "scan_fixed_drafts_finding_idx" ON "scan_fixed_drafts" USING btree ("finding_id");--> statement-breakpoint
ALTER TABLE "findings" ADD CONSTRAINT "findings_dismissed_by_users_id_fk" FOREIGN KEY ("dismissed_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "findings" ADD CONSTRAINT "findings_published_by_users_id_fk" FOREIGN KEY ("published_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "findings_published_finding_key" ON "findings" USING btree ("published_finding_id") WHERE "findings"."published_finding_id" is not null;--> statement-breakpoint
CREATE INDEX "findings_workspace_triage_idx" ON "findings" USING btree ("workspace_id","triage_state") WHERE "findings"."triage_state" is not null;--> statement-breakpoint
CREATE INDEX "scans_workspace_branch_completed_idx" ON "scans" USING btree ("workspace_id","branch","completed_at") WHERE "scans"."status" = 'completed' and not "scans"."pull_request";--> statement-breakpoint
ALTER TABLE "findings" ADD CONSTRAINT "findings_published_finding_id_findings_id_fk" FOREIGN KEY ("published_finding_id") REFERENCES "public"."findings"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "findings" ADD CONSTRAINT "findings_source_scan_id_scans_id_fk" FOREIGN KEY ("source_scan_id") REFERENCES "public"."scans"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
-- Drafts written before triage existed start open.
UPDATE "findings" SET "triage_state" = 'open' WHERE "published" = false AND "fingerprint" IS NOT NULL;--> statement-breakpoint
-- The commit of sourcehost scans written before the column existed.
UPDATE "scans" SET "commit" = "sources"->0->>'commit' WHERE "sources"->0->>'kind' = 'sourcehost';
