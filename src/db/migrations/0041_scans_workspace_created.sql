-- A workspace's scans newest first (listScans with workspaceId, the console's workspace overview):
-- without it the list walks every scan of the company to find those of a rarely scanned workspace.
CREATE INDEX IF NOT EXISTS "scans_workspace_created_idx" ON "scans" USING btree ("workspace_id","created_at","id");
