CREATE TABLE "company_invitations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"company_id" uuid NOT NULL,
	"role" text NOT NULL,
	"username" text,
	"email" text,
	"name" text,
	"state" text DEFAULT 'pending' NOT NULL,
	"secret_hash" text,
	"mail_secret_sealed" text,
	"mailed_at" timestamp with time zone,
	"mail_error" text,
	"invited_by" uuid,
	"accepted_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"responded_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "company_invitations" ADD CONSTRAINT "company_invitations_company_id_companies_id_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "company_invitations" ADD CONSTRAINT "company_invitations_invited_by_users_id_fk" FOREIGN KEY ("invited_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "company_invitations" ADD CONSTRAINT "company_invitations_accepted_by_users_id_fk" FOREIGN KEY ("accepted_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "company_invitations_company_idx" ON "company_invitations" USING btree ("company_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "company_invitations_pending_username_key" ON "company_invitations" USING btree ("company_id",lower("username")) WHERE "company_invitations"."state" = 'pending' and "company_invitations"."username" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "company_invitations_pending_email_key" ON "company_invitations" USING btree ("company_id",lower("email")) WHERE "company_invitations"."state" = 'pending' and "company_invitations"."email" is not null and "company_invitations"."username" is null;--> statement-breakpoint
CREATE INDEX "company_invitations_username_idx" ON "company_invitations" USING btree (lower("username")) WHERE "company_invitations"."state" = 'pending';--> statement-breakpoint
-- Memberships that were never joined become invitations for their user's name (the invitee
-- accepts them as any other), then stop being memberships: only joined users are company users.
INSERT INTO "company_invitations" ("company_id", "role", "username", "state", "created_at", "expires_at", "responded_at")
SELECT m."company_id", m."role", u."username",
       CASE WHEN m."disabled_at" IS NULL THEN 'pending' ELSE 'revoked' END,
       m."invited_at", now() + interval '14 days', m."disabled_at"
FROM "company_members" m JOIN "users" u ON u."id" = m."user_id"
WHERE m."joined_at" IS NULL;--> statement-breakpoint
DELETE FROM "company_members" WHERE "joined_at" IS NULL;
