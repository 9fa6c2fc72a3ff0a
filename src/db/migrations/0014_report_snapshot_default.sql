ALTER TABLE "reports" ALTER COLUMN "snapshot" SET DEFAULT '{"teamMembers":[],"findings":[],"findingStats":[]}'::jsonb;--> statement-breakpoint
-- A snapshot always has its three lists: a report stored with an empty snapshot gets empty ones.
UPDATE reports SET snapshot = '{"teamMembers":[],"findings":[],"findingStats":[]}'::jsonb || snapshot
WHERE NOT (snapshot ?& array['teamMembers', 'findings', 'findingStats']);
