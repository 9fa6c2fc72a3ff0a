CREATE TABLE "notification_delivery_attempts" (
	"delivery_id" uuid NOT NULL,
	"attempt" integer NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone DEFAULT now() NOT NULL,
	"status_code" integer,
	"error" text,
	"outcome" text NOT NULL,
	CONSTRAINT "notification_delivery_attempts_delivery_id_attempt_pk" PRIMARY KEY("delivery_id","attempt")
);
--> statement-breakpoint
ALTER TABLE "notification_deliveries" ADD COLUMN "company_id" uuid;--> statement-breakpoint
-- Existing deliveries take the company their notification names; those of a company that no longer exists go.
UPDATE "notification_deliveries" AS d SET "company_id" = c."id" FROM "notifications" AS n JOIN "companies" AS c ON c."id"::text = n."payload"->>'companyId' WHERE n."id" = d."notification_id";--> statement-breakpoint
DELETE FROM "notification_deliveries" WHERE "company_id" IS NULL;--> statement-breakpoint
ALTER TABLE "notification_deliveries" ALTER COLUMN "company_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "notification_delivery_attempts" ADD CONSTRAINT "notification_delivery_attempts_delivery_id_notification_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."notification_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notification_deliveries" ADD CONSTRAINT "notification_deliveries_company_id_companies_id_fk" FOREIGN KEY ("company_id") REFERENCES "public"."companies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "notification_deliveries_company_webhook_idx" ON "notification_deliveries" USING btree ("company_id","created_at","id") WHERE "notification_deliveries"."channel" = 'webhook';