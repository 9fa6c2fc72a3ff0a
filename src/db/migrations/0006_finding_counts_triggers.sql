-- finding_counts holds, per repository, company, status and severity, how many published findings
-- of a repository there are. Statement triggers keep it in the transaction of every write to
-- findings (service, scanner, cascaded deletes), one grouped upsert per statement. The keys are
-- upserted in a fixed order, so concurrent writers lock count rows in the same order.
CREATE FUNCTION finding_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO finding_counts AS c (repository_id, company_id, status, severity, n)
    SELECT repository_id, company_id, status, severity, count(*)::int
    FROM new_rows WHERE published AND repository_id IS NOT NULL
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (repository_id, company_id, status, severity) DO UPDATE SET n = c.n + excluded.n;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO finding_counts AS c (repository_id, company_id, status, severity, n)
    SELECT repository_id, company_id, status, severity, -count(*)::int
    FROM old_rows WHERE published AND repository_id IS NOT NULL
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (repository_id, company_id, status, severity) DO UPDATE SET n = c.n + excluded.n;
  ELSE
    INSERT INTO finding_counts AS c (repository_id, company_id, status, severity, n)
    SELECT repository_id, company_id, status, severity, sum(d)::int
    FROM (
      SELECT repository_id, company_id, status, severity, 1 AS d
      FROM new_rows WHERE published AND repository_id IS NOT NULL
      UNION ALL
      SELECT repository_id, company_id, status, severity, -1 AS d
      FROM old_rows WHERE published AND repository_id IS NOT NULL
    ) changes
    GROUP BY 1, 2, 3, 4 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4
    ON CONFLICT (repository_id, company_id, status, severity) DO UPDATE SET n = c.n + excluded.n;
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE FUNCTION finding_counts_clear() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM finding_counts;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER findings_counts_insert AFTER INSERT ON findings
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_counts_apply();--> statement-breakpoint
CREATE TRIGGER findings_counts_update AFTER UPDATE ON findings
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_counts_apply();--> statement-breakpoint
CREATE TRIGGER findings_counts_delete AFTER DELETE ON findings
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION finding_counts_apply();--> statement-breakpoint
CREATE TRIGGER findings_counts_truncate AFTER TRUNCATE ON findings
  FOR EACH STATEMENT EXECUTE FUNCTION finding_counts_clear();--> statement-breakpoint
INSERT INTO finding_counts (repository_id, company_id, status, severity, n)
SELECT repository_id, company_id, status, severity, count(*)::int
FROM findings WHERE published AND repository_id IS NOT NULL
GROUP BY 1, 2, 3, 4;
