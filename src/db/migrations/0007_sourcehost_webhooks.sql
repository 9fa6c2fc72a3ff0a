CREATE TABLE "sourcehost_commit_statuses" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"company_id" uuid NOT NULL,
	"scan_id" uuid NOT NULL,
	"integration_id" uuid NOT NULL,
	"repository" text NOT NULL,
	"commit" text NOT NULL,
	"state" text DEFAULT 'waiting' NOT NULL,
	"posted_state" text,
	"description" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"posted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "sourcehost_deliveries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"company_id" uuid NOT NULL,
	"integration_id" uuid NOT NULL,
	"delivery_id" text NOT NULL,
	"event" text NOT NULL,
	"action" text,
	"repository" text,
	"ref" text,
	"commit" text,
	"body" text NOT NULL,
	"outcome" text DEFAULT 'received' NOT NULL,
	"reason" text,
	"scan_ids" uuid[] DEFAULT '{}' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"processed_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "watch_branches" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "auto_scan_type" text DEFAULT 'standard' NOT NULL;--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "fail_on" text DEFAULT 'high' NOT NULL;--> statement-breakpoint
ALTER TABLE "sourcehost_commit_statuses" ADD CONSTRAINT "sourcehost_commit_statuses_company_id_companies_id_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sourcehost_commit_statuses" ADD CONSTRAINT "sourcehost_commit_statuses_scan_id_scans_id_fk" FOREIGN KEY ("scan_id") REFERENCES "public"."scans"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sourcehost_commit_statuses" ADD CONSTRAINT "sourcehost_commit_statuses_integration_id_integrations_id_fk" FOREIGN KEY ("integration_id") REFERENCES "public"."integrations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sourcehost_deliveries" ADD CONSTRAINT "sourcehost_deliveries_company_id_companies_id_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sourcehost_deliveries" ADD CONSTRAINT "sourcehost_deliveries_integration_id_integrations_id_fk" FOREIGN KEY ("integration_id") REFERENCES "public"."integrations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "sourcehost_commit_statuses_scan_key" ON "sourcehost_commit_statuses" USING btree ("scan_id");--> statement-breakpoint
CREATE UNIQUE INDEX "sourcehost_deliveries_delivery_key" ON "sourcehost_deliveries" USING btree ("integration_id","delivery_id");--> statement-breakpoint
CREATE INDEX "sourcehost_deliveries_company_idx" ON "sourcehost_deliveries" USING btree ("company_id","received_at","id");