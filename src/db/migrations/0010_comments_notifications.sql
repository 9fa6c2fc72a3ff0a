CREATE TABLE "company_webhooks" (
	"company_id" uuid PRIMARY KEY NOT NULL,
	"url" text NOT NULL,
	"secret_enc" text NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notification_deliveries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"notification_id" uuid NOT NULL,
	"channel" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"claimed_at" timestamp with time zone,
	"delivered_at" timestamp with time zone,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "comments" ADD COLUMN "edited_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "comments" ADD COLUMN "deleted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "last_private_comment_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "last_internal_comment_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "last_hidden_comment_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "notifications" ADD COLUMN "comment_id" uuid;--> statement-breakpoint
ALTER TABLE "company_webhooks" ADD CONSTRAINT "company_webhooks_company_id_companies_id_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "company_webhooks" ADD CONSTRAINT "company_webhooks_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notification_deliveries" ADD CONSTRAINT "notification_deliveries_notification_id_notifications_id_fk" FOREIGN KEY ("notification_id") REFERENCES "public"."notifications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "notification_deliveries_notification_channel_key" ON "notification_deliveries" USING btree ("notification_id","channel");--> statement-breakpoint
CREATE INDEX "notification_deliveries_open_idx" ON "notification_deliveries" USING btree ("status","created_at") WHERE "notification_deliveries"."status" in ('pending', 'sending');--> statement-breakpoint
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_comment_id_comments_id_fk" FOREIGN KEY ("comment_id") REFERENCES "public"."comments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "comments_parent_idx" ON "comments" USING btree ("parent_id") WHERE "comments"."parent_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "notifications_user_comment_key" ON "notifications" USING btree ("user_id","comment_id") WHERE "notifications"."comment_id" is not null;--> statement-breakpoint
-- last_comment_at now holds the last public comment; the other visibilities have their own column.
UPDATE "findings" f SET
  "last_comment_at" = s.pub, "last_private_comment_at" = s.priv,
  "last_internal_comment_at" = s.internal, "last_hidden_comment_at" = s.hidden
FROM (
  SELECT "finding_id",
    max("created_at") FILTER (WHERE "visibility" = 'public') AS pub,
    max("created_at") FILTER (WHERE "visibility" = 'private') AS priv,
    max("created_at") FILTER (WHERE "visibility" = 'internal') AS internal,
    max("created_at") FILTER (WHERE "visibility" = 'hidden') AS hidden
  FROM "comments" GROUP BY "finding_id"
) s
WHERE s."finding_id" = f."id";
--> statement-breakpoint
ALTER TABLE "repository_members" ADD CONSTRAINT "repository_members_pings_left_check" CHECK ("repository_members"."pings_left" >= 0);