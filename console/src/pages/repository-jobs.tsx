import { Link } from '@tanstack/react-router';
import { mayMakeReports, useSession } from '../session.tsx';
import { canFile } from './new-finding-roles.ts';

/**
 * The work a repository page offers its reader: filing a finding (its reviewers, judges, triagers
 * and admins) and making its report once it is finished (its company's managers and its admins).
 */
export function RepositoryJobs({
  repository: r,
}: {
  repository: { id: string; company: { id: string }; finishedAt?: string | null; role?: string | null };
}) {
  const session = useSession();
  const manages = mayMakeReports(session, r.id, r.company.id);
  if (!canFile(r.role) && !(manages && r.finishedAt)) return null;
  return (
    <p className="button-row">
      {canFile(r.role) && (
        <Link to="/repositories/$repoId/findings/new" params={{ repoId: r.id }} className="button">
          File a finding
        </Link>
      )}
      {manages && r.finishedAt && (
        <Link to="/repositories/$repoId/report" params={{ repoId: r.id }} className="button">
          Make the report
        </Link>
      )}
    </p>
  );
}
