ALTER TABLE "sourcehost_commit_statuses" ADD COLUMN "context" text DEFAULT 'vigil/scan' NOT NULL;--> statement-breakpoint
ALTER TABLE "sourcehost_deliveries" ADD COLUMN "scan_workspaces" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "sourcehost_deliveries" ADD COLUMN "refusals" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "sourcehost_deliveries" ADD COLUMN "claimed_until" timestamp with time zone;