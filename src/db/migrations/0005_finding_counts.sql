CREATE TABLE "finding_counts" (
	"repository_id" uuid NOT NULL,
	"company_id" uuid NOT NULL,
	"status" text NOT NULL,
	"severity" text NOT NULL,
	"n" integer NOT NULL,
	CONSTRAINT "finding_counts_repository_id_company_id_status_severity_pk" PRIMARY KEY("repository_id","company_id","status","severity")
);
--> statement-breakpoint
DROP INDEX "finding_labels_label_idx";--> statement-breakpoint
CREATE INDEX "finding_counts_company_idx" ON "finding_counts" USING btree ("company_id");--> statement-breakpoint
CREATE INDEX "finding_labels_label_finding_idx" ON "finding_labels" USING btree ("label_id","finding_id");