import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { ApiError, api, unwrap } from '../api.ts';
import { NotFound } from '../router.tsx';
import { Async, formatDate } from '../ui.tsx';
import { RepositoryJobs } from './repository-jobs.tsx';

const ROLE_ORDER = ['admin', 'client', 'judge', 'triager', 'reviewer'] as const;

/** A repository: scope (asset groups and assets), safe harbor, members by role. */
export function RepositoryPage() {
  const { repoId } = useParams({ from: '/repositories/$repoId' });
  const repo = useQuery({
    queryKey: ['repository', repoId],
    queryFn: () =>
      unwrap(api.GET('/api/v0/repositories/{repo_id}', { params: { path: { repo_id: repoId } } })),
  });
  const members = useQuery({
    queryKey: ['members', repoId],
    queryFn: () =>
      unwrap(api.GET('/api/v0/repositories/{repo_id}/members', { params: { path: { repo_id: repoId } } })),
  });
  if (repo.error instanceof ApiError && repo.error.status === 404) return <NotFound />;
  return (
    <Async query={repo}>
      {(r) => (
        <section>
          <p className="muted">
            <Link to="/companies/$companyId" params={{ companyId: r.company.id }}>
              {r.company.name}
            </Link>
          </p>
          <h1>{r.name}</h1>
          <p>
            <Link to="/findings" search={{ repositories: r.id }}>
              {r.totalFindings} findings →
            </Link>
          </p>
          <RepositoryJobs repository={r} />
          <dl className="facts">
            <dt>Timeframe</dt>
            <dd>
              {formatDate(r.timeframe.start)} → {formatDate(r.timeframe.end)}
            </dd>
            <dt>Reward pot</dt>
            <dd>
              {r.totalRewardPot} {r.currencyCode}
            </dd>
            <dt>Submission fee</dt>
            <dd>{r.submissionFee}</dd>
            <dt>KYC</dt>
            <dd>{r.kycRequired ? 'required' : 'not required'}</dd>
            <dt>Severities</dt>
            <dd>{r.allowedSeverities.join(', ') || 'all'}</dd>
            <dt>Your role</dt>
            <dd>{(r as { role?: string | null }).role ?? '—'}</dd>
          </dl>
          {r.instructions && (
            <>
              <h2>Instructions</h2>
              <pre className="description">{r.instructions}</pre>
            </>
          )}
          <h2>Scope</h2>
          {r.assetGroups.length === 0 && <p className="muted">No asset groups.</p>}
          {r.assetGroups.map((g) => (
            <div key={g.id} className="card">
              <h3>
                {g.name} {g.outOfScope && <span className="chip">out of scope</span>}
              </h3>
              {g.description && <p>{g.description}</p>}
              {g.rewards.length > 0 && (
                <p className="muted">
                  Rewards: {g.rewards.map((x) => `${x.minReward}–${x.maxReward}`).join(', ')} {r.currencyCode}
                </p>
              )}
              <ul>
                {[...g.assets, ...g.subGroups.flatMap((s) => s.assets)].map((a) => (
                  <li key={a.id}>
                    <strong>{a.name}</strong> {a.reference && <code>{a.reference}</code>} {a.description}
                  </li>
                ))}
              </ul>
            </div>
          ))}
          <h2>Safe harbor</h2>
          {r.safeHarbor ? (
            <div className="card">
              <p>{r.safeHarbor.description}</p>
              <p className="muted">
                Reward {r.safeHarbor.reward} · cap {r.safeHarbor.cap}
              </p>
              <p>Return addresses: {r.safeHarbor.returnAddresses.map((a) => a.address).join(', ') || '—'}</p>
              <p>Assets: {r.safeHarbor.assets.map((a) => a.name).join(', ') || '—'}</p>
            </div>
          ) : (
            <p className="muted">No safe harbor.</p>
          )}
          <h2>Members</h2>
          <Async query={members}>
            {({ members: list }) => (
              <div className="columns">
                {ROLE_ORDER.map((role) => {
                  const people = list.filter((m) => m.role === role && !m.deletedAt);
                  return (
                    <div key={role}>
                      <h3>
                        {role}s ({people.length})
                      </h3>
                      <ul>
                        {people.map((m) => (
                          <li key={m.user.userId}>
                            {m.user.name} <span className="muted">@{m.user.username}</span>
                            {role === 'reviewer' ? (
                              <span className="muted"> · {m.pingsLeft} pings left</span>
                            ) : null}
                          </li>
                        ))}
                        {people.length === 0 && <li className="muted">none</li>}
                      </ul>
                    </div>
                  );
                })}
              </div>
            )}
          </Async>
        </section>
      )}
    </Async>
  );
}
