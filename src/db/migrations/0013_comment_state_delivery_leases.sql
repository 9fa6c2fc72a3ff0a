ALTER TABLE "notification_deliveries" ADD COLUMN "claimed_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "last_comment_author_id" uuid;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "last_comment_other_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "last_private_comment_author_id" uuid;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "last_private_comment_other_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "last_internal_comment_author_id" uuid;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "last_internal_comment_other_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "last_hidden_comment_author_id" uuid;--> statement-breakpoint
ALTER TABLE "findings" ADD COLUMN "last_hidden_comment_other_at" timestamp with time zone;--> statement-breakpoint
-- The comment columns of every commented finding, recomputed without deleted comments (the
-- statement refreshCommentStateSql of comments.repo.ts builds, over all findings).
UPDATE findings f SET
  last_comment_at = p.public_at, last_comment_author_id = p.public_author, last_comment_other_at = p.public_other,
  last_private_comment_at = p.private_at, last_private_comment_author_id = p.private_author, last_private_comment_other_at = p.private_other,
  last_internal_comment_at = p.internal_at, last_internal_comment_author_id = p.internal_author, last_internal_comment_other_at = p.internal_other,
  last_hidden_comment_at = p.hidden_at, last_hidden_comment_author_id = p.hidden_author, last_hidden_comment_other_at = p.hidden_other
FROM (
  SELECT t.id,
    max(o.last_at) FILTER (WHERE o.visibility = 'public') AS public_at,
    (array_agg(o.last_author) FILTER (WHERE o.visibility = 'public'))[1] AS public_author,
    max(o.other_at) FILTER (WHERE o.visibility = 'public') AS public_other,
    max(o.last_at) FILTER (WHERE o.visibility = 'private') AS private_at,
    (array_agg(o.last_author) FILTER (WHERE o.visibility = 'private'))[1] AS private_author,
    max(o.other_at) FILTER (WHERE o.visibility = 'private') AS private_other,
    max(o.last_at) FILTER (WHERE o.visibility = 'internal') AS internal_at,
    (array_agg(o.last_author) FILTER (WHERE o.visibility = 'internal'))[1] AS internal_author,
    max(o.other_at) FILTER (WHERE o.visibility = 'internal') AS internal_other,
    max(o.last_at) FILTER (WHERE o.visibility = 'hidden') AS hidden_at,
    (array_agg(o.last_author) FILTER (WHERE o.visibility = 'hidden'))[1] AS hidden_author,
    max(o.other_at) FILTER (WHERE o.visibility = 'hidden') AS hidden_other
  FROM (
    SELECT f2.id FROM findings f2
    WHERE EXISTS (SELECT 1 FROM comments c0 WHERE c0.finding_id = f2.id)
      OR f2.last_comment_at IS NOT NULL OR f2.last_private_comment_at IS NOT NULL
      OR f2.last_internal_comment_at IS NOT NULL OR f2.last_hidden_comment_at IS NOT NULL
  ) t
  LEFT JOIN (
    SELECT l.finding_id, l.visibility, l.last_at, l.last_author,
      (SELECT max(c.created_at) FROM comments c WHERE c.finding_id = l.finding_id AND c.visibility = l.visibility
         AND c.deleted_at IS NULL AND c.author_id IS DISTINCT FROM l.last_author) AS other_at
    FROM (
      SELECT c.finding_id, c.visibility, max(c.created_at) AS last_at,
        (array_agg(c.author_id ORDER BY c.created_at DESC, c.id DESC))[1] AS last_author
      FROM comments c WHERE c.deleted_at IS NULL
      GROUP BY c.finding_id, c.visibility
    ) l
  ) o ON o.finding_id = t.id
  GROUP BY t.id
) p
WHERE f.id = p.id;
--> statement-breakpoint
CREATE INDEX "findings_commented_company_idx" ON "findings" USING btree ("company_id","repository_id") WHERE "findings"."published" and "findings"."repository_id" is not null and ("findings"."last_comment_at" is not null or "findings"."last_private_comment_at" is not null or "findings"."last_internal_comment_at" is not null or "findings"."last_hidden_comment_at" is not null);--> statement-breakpoint
CREATE INDEX "findings_commented_repository_idx" ON "findings" USING btree ("repository_id","created_by") WHERE "findings"."published" and "findings"."repository_id" is not null and ("findings"."last_comment_at" is not null or "findings"."last_private_comment_at" is not null or "findings"."last_internal_comment_at" is not null or "findings"."last_hidden_comment_at" is not null);