ALTER TABLE "guilds" DROP CONSTRAINT "guilds_name_unique";--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "badges" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "guilds_name_lower_key" ON "guilds" USING btree (lower("name"));--> statement-breakpoint
ALTER TABLE "repositories" DROP COLUMN "reward";