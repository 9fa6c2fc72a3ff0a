-- One function sends a notification and its copy on the sending session's own channel (0021),
-- instead of each notifying function writing both: vigil_notify(channel, payload) sends
-- "<payload>" on the channel and "<channel>:<payload>" on "vigil_own_<backend pid>". The
-- functions of 0021, 0022 and 0023 are redefined on it, unchanged in what they send.
--
-- A company's credit account concerns only the balances of that company's callers: a change of
-- credit_accounts now notifies "credit_accounts:c:<company id>" (0023's per-company function), and
-- processes forget only the kept balances of that company (src/auth/kept-reads.ts). Before, a
-- scan reserving credits in one company forgot every company's kept balances. A TRUNCATE still
-- names the table.
CREATE OR REPLACE FUNCTION vigil_notify(channel text, payload text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify(channel, payload);
  PERFORM pg_notify('vigil_own_' || pg_backend_pid(), channel || ':' || payload);
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION vigil_notify_reads() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM vigil_notify('vigil_reads', TG_TABLE_NAME);
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION vigil_notify_credentials() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM vigil_notify('vigil_credentials', TG_TABLE_NAME);
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION vigil_notify_reads_of_user() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    PERFORM vigil_notify('vigil_reads', TG_TABLE_NAME || ':u:' || OLD.user_id);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM vigil_notify('vigil_reads', TG_TABLE_NAME || ':u:' || NEW.user_id);
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION vigil_notify_reads_by_company() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed_rows text := CASE TG_OP WHEN 'INSERT' THEN 'new_rows' WHEN 'DELETE' THEN 'old_rows'
    ELSE '(select * from new_rows union all select * from old_rows)' END;
  companies uuid[];
  company uuid;
BEGIN
  -- TG_ARGV[0]: a query returning the companies of the changed rows %s as one array.
  EXECUTE format(TG_ARGV[0], changed_rows) INTO companies;
  IF companies IS NULL THEN
    RETURN NULL;
  END IF;
  IF array_position(companies, NULL) IS NOT NULL OR cardinality(companies) > 32 THEN
    PERFORM vigil_notify('vigil_reads', TG_TABLE_NAME);
    RETURN NULL;
  END IF;
  FOREACH company IN ARRAY companies LOOP
    PERFORM vigil_notify('vigil_reads', TG_TABLE_NAME || ':c:' || company);
  END LOOP;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
DROP TRIGGER credit_accounts_notify_reads ON credit_accounts;
--> statement-breakpoint
CREATE TRIGGER credit_accounts_insert_notify_reads AFTER INSERT ON credit_accounts REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct r.company_id) from %s r');
--> statement-breakpoint
CREATE TRIGGER credit_accounts_update_notify_reads AFTER UPDATE ON credit_accounts REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct r.company_id) from %s r');
--> statement-breakpoint
CREATE TRIGGER credit_accounts_delete_notify_reads AFTER DELETE ON credit_accounts REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads_by_company('select array_agg(distinct r.company_id) from %s r');
--> statement-breakpoint
CREATE TRIGGER credit_accounts_truncate_notify_reads AFTER TRUNCATE ON credit_accounts
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
