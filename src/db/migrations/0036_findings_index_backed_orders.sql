ALTER TABLE "findings" ADD COLUMN "author_reputation" integer;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "author_name" text;--> statement-breakpoint
-- The author's reputation and lowercased username travel with each finding, so that the
-- reputation and username orders read an index of findings (docs/adr/0031-index-backed-finding-orders.md).
-- The row of users is read FOR SHARE: a concurrent change of that user's reputation or username
-- (FOR NO KEY UPDATE) either commits first and is read here, or waits for this insert and then
-- rewrites it below.
CREATE FUNCTION findings_author_sort() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.created_by IS NULL THEN
    NEW.author_reputation := NULL;
    NEW.author_name := NULL;
  ELSE
    SELECT u.reputation, lower(u.username) INTO NEW.author_reputation, NEW.author_name
      FROM users u WHERE u.id = NEW.created_by FOR SHARE;
  END IF;
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER findings_author_sort BEFORE INSERT OR UPDATE OF created_by ON findings
  FOR EACH ROW EXECUTE FUNCTION findings_author_sort();--> statement-breakpoint
CREATE FUNCTION users_author_sort() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE findings SET author_reputation = NEW.reputation, author_name = lower(NEW.username)
    WHERE created_by = NEW.id
      AND (author_reputation, author_name) IS DISTINCT FROM (NEW.reputation, lower(NEW.username));
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER users_author_sort AFTER UPDATE OF reputation, username ON users
  FOR EACH ROW WHEN (OLD.reputation IS DISTINCT FROM NEW.reputation OR lower(OLD.username) IS DISTINCT FROM lower(NEW.username))
  EXECUTE FUNCTION users_author_sort();--> statement-breakpoint
UPDATE findings f SET author_reputation = u.reputation, author_name = lower(u.username)
  FROM users u WHERE u.id = f.created_by;--> statement-breakpoint
CREATE INDEX "findings_visible_company_status_rank_idx" ON "findings" USING btree ("company_id",array_position('{new,in_review,disputed,rejected,spam,duplicate,confirmed,acknowledged,fixed,withdrawn}'::text[], "status"),"id") WHERE "findings"."published" and "findings"."repository_id" is not null;--> statement-breakpoint
CREATE INDEX "findings_visible_company_severity_rank_idx" ON "findings" USING btree ("company_id",array_position('{gas_optimization,informational,low,medium,high,critical}'::text[], "severity"),"id") WHERE "findings"."published" and "findings"."repository_id" is not null;--> statement-breakpoint
CREATE INDEX "findings_visible_company_reputation_asc_idx" ON "findings" USING btree ("company_id",coalesce("author_reputation"::bigint, 2147483648),"id") WHERE "findings"."published" and "findings"."repository_id" is not null;--> statement-breakpoint
CREATE INDEX "findings_visible_company_reputation_desc_idx" ON "findings" USING btree ("company_id",coalesce("author_reputation"::bigint, -2147483649),"id") WHERE "findings"."published" and "findings"."repository_id" is not null;--> statement-breakpoint
CREATE INDEX "findings_visible_company_author_name_asc_idx" ON "findings" USING btree ("company_id",(coalesce("author_name", U&'\+10FFFF') collate "C"),"id") WHERE "findings"."published" and "findings"."repository_id" is not null;--> statement-breakpoint
CREATE INDEX "findings_visible_company_author_name_desc_idx" ON "findings" USING btree ("company_id",(coalesce("author_name", '') collate "C"),"id") WHERE "findings"."published" and "findings"."repository_id" is not null;--> statement-breakpoint
CREATE INDEX "findings_visible_company_reward_asc_idx" ON "findings" USING btree ("company_id",coalesce("reward", 'Infinity'::numeric),"id") WHERE "findings"."published" and "findings"."repository_id" is not null;--> statement-breakpoint
CREATE INDEX "findings_visible_company_reward_desc_idx" ON "findings" USING btree ("company_id",coalesce("reward", '-Infinity'::numeric),"id") WHERE "findings"."published" and "findings"."repository_id" is not null;
