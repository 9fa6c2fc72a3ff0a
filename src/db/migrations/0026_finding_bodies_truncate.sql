-- A TRUNCATE of a table whose rows a kept finding body holds (0025) clears every kept body and
-- moves every stamp on, as its row-level statements clear the bodies they concern: a TRUNCATE
-- fires no row triggers and has no transition tables, so it cannot tell which findings it
-- concerned. (A TRUNCATE of findings takes finding_bodies with it.)
DO $$
DECLARE
  source text;
BEGIN
  FOREACH source IN ARRAY ARRAY['finding_related_files', 'repositories', 'companies', 'users',
      'repository_members', 'safe_harbors', 'asset_groups', 'assets'] LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION vigil_finding_bodies_forget(%L)',
      source || '_bodies_truncate', source, 'select array_agg(finding_id) from finding_bodies');
  END LOOP;
END;
$$;
