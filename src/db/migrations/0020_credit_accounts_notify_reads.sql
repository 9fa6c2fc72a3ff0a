-- getCreditBalances keeps its answers per caller like the list pages (src/auth/kept-reads.ts):
-- a change of a company's credit account notifies "vigil_reads" at commit (0019's function).
CREATE TRIGGER credit_accounts_notify_reads AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON credit_accounts
  FOR EACH STATEMENT EXECUTE FUNCTION vigil_notify_reads();
