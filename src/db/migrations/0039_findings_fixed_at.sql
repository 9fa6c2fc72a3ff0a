-- When a finding became fixed, for the company dashboard's time to fix and fixed-per-week figures.
-- A trigger keeps it on every status write (single changes, bulk triage, imports, seeds), so no
-- code path can forget it: set when the status becomes fixed (an explicit value on the same write
-- wins, so imports keep their history), kept while it stays fixed, cleared when it leaves fixed.
ALTER TABLE "findings" ADD COLUMN "fixed_at" timestamp with time zone;--> statement-breakpoint
-- Findings fixed before the column existed: their last update is the best known moment.
UPDATE "findings" SET "fixed_at" = "last_updated_at" WHERE "status" = 'fixed';--> statement-breakpoint
CREATE OR REPLACE FUNCTION vigil_findings_fixed_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status <> 'fixed' THEN
    NEW.fixed_at := NULL;
  ELSIF TG_OP = 'INSERT' THEN
    NEW.fixed_at := coalesce(NEW.fixed_at, now());
  ELSIF OLD.status <> 'fixed' THEN
    NEW.fixed_at := CASE WHEN NEW.fixed_at IS DISTINCT FROM OLD.fixed_at AND NEW.fixed_at IS NOT NULL
      THEN NEW.fixed_at ELSE now() END;
  ELSE
    NEW.fixed_at := coalesce(NEW.fixed_at, OLD.fixed_at, now());
  END IF;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER findings_fixed_at BEFORE INSERT OR UPDATE OF status, fixed_at ON "findings"
  FOR EACH ROW EXECUTE FUNCTION vigil_findings_fixed_at();
