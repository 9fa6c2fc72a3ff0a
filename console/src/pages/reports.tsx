import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { ApiError, api, unwrap } from '../api.ts';
import { Markdown } from '../markdown.tsx';
import { NotFound } from '../router.tsx';
import { mayMakeReports, useOptionalSession } from '../session.tsx';
import { Async, Chip, formatDate } from '../ui.tsx';
import { ReportStats } from './report-stats.tsx';
import { PrintButton, useReportTitle } from './report-view.tsx';

/**
 * Reports of finished engagements: public ones, and the private ones and drafts of the caller's
 * companies and of the repositories they administer; links to the report builder of the caller's
 * repositories whose reports they make.
 */
export function ReportsPage() {
  const session = useOptionalSession();
  const ownReportable = session
    ? session.repositories.filter((r) => mayMakeReports(session, r.id, r.companyId))
    : [];
  const [q, setQ] = useState('');
  const [guild, setGuild] = useState('');
  const reports = useInfiniteQuery({
    queryKey: ['reports', q, guild],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      unwrap(
        api.GET('/api/v0/reports', {
          params: { query: { limit: 25, next: pageParam, q: q || undefined, guild: guild || undefined } },
        }),
      ),
    getNextPageParam: (last) => last.nextValue || undefined,
  });
  return (
    <section>
      <h1>Reports</h1>
      {ownReportable.length > 0 && (
        <nav aria-label="Make a report" className="button-row">
          {ownReportable.map((r) => (
            <Link key={r.id} to="/repositories/$repoId/report" params={{ repoId: r.id }} className="button">
              New report of {r.name}
            </Link>
          ))}
        </nav>
      )}
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          setQ(String(f.get('q') ?? ''));
          setGuild(String(f.get('guild') ?? ''));
        }}
      >
        <label>
          Title or client <input name="q" type="search" />
        </label>
        <label>
          Guild <input name="guild" />
        </label>
        <button type="submit">Search</button>
      </form>
      <Async query={reports}>
        {(data) => {
          const list = data.pages.flatMap((p) => p.reports);
          return (
            <>
              <ul className="cards">
                {list.map((r) => (
                  <li key={r.id}>
                    <Link to="/reports/$reportId" params={{ reportId: r.id }}>
                      {r.projectTitle}
                    </Link>{' '}
                    <span className="muted">
                      {r.clientName} · {formatDate(r.publishedAt)}
                    </span>{' '}
                    <span className="chip">{r.isPrivate ? 'private' : 'public'}</span>
                  </li>
                ))}
              </ul>
              {list.length === 0 && <p className="muted">No reports.</p>}
              {reports.hasNextPage && (
                <button type="button" onClick={() => void reports.fetchNextPage()}>
                  Load more
                </button>
              )}
            </>
          );
        }}
      </Async>
    </section>
  );
}

export function ReportPage() {
  const session = useOptionalSession();
  const { reportId } = useParams({ from: '/reports/$reportId' });
  const report = useQuery({
    queryKey: ['report', reportId],
    queryFn: () =>
      unwrap(api.GET('/api/v0/reports/{report_id}', { params: { path: { report_id: reportId } } })),
  });
  useReportTitle(report.data?.projectTitle);
  if (report.error instanceof ApiError && report.error.status === 404) return <NotFound />;
  return (
    <Async query={report}>
      {(r) => (
        <article>
          <p className="no-print button-row">
            {session && <Link to="/reports">← Reports</Link>} <PrintButton />
          </p>
          <h1>{r.projectTitle}</h1>
          <p className="muted">
            {r.clientName} · {formatDate(r.engagementStartDate)} → {formatDate(r.engagementEndDate)} ·{' '}
            {r.isPrivate ? 'private' : 'public'}
          </p>
          {r.description && <Markdown source={r.description} className="description" />}
          <h2>Team</h2>
          <ul>
            {r.teamMembers.map((m) => (
              <li key={m.auditorPublicProfile?.id ?? m.reportId}>
                {m.auditorPublicProfile?.name}{' '}
                <span className="muted">@{m.auditorPublicProfile?.username}</span>
              </li>
            ))}
          </ul>
          <h2>Statistics</h2>
          <ReportStats stats={r.findingStats} />
          <h2>Findings</h2>
          <ol>
            {r.findings.map((f) => (
              <li key={f.id}>
                <strong>
                  #{f.number} {f.title}
                </strong>{' '}
                <Chip kind="severity" value={f.severity} /> <Chip kind="status" value={f.status} />
                <Markdown source={f.description} className="description" />
              </li>
            ))}
          </ol>
        </article>
      )}
    </Async>
  );
}
