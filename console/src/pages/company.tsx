import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { lazy, Suspense } from 'react';
import { ApiError, api, sessionState, unwrap } from '../api.ts';
import { NotFound } from '../router.tsx';
import { useSession } from '../session.tsx';
import { Async, formatDate } from '../ui.tsx';
import { AuditLog, Integrations, ServiceKeys, SsoRules, Users } from './company-admin.tsx';
import { NewScan } from './scans.tsx';

// Lazy: the chart library loads with the dashboard only.
const Dashboard = lazy(() => import('./dashboard.tsx').then((m) => ({ default: m.Dashboard })));

const SECTIONS = [
  { id: 'repositories', label: 'Repositories' },
  { id: 'dashboard', label: 'Dashboard' },
  { id: 'scans', label: 'Scans' },
  { id: 'users', label: 'Users' },
  { id: 'audit-log', label: 'Audit log' },
  { id: 'sso', label: 'SSO rules' },
  { id: 'service-keys', label: 'Service keys' },
  { id: 'integrations', label: 'Integrations' },
] as const;

/** A company: its repositories, scans, users and (for managers) its settings. */
export function CompanyPage() {
  const { companyId, section } = useParams({ strict: false }) as { companyId: string; section?: string };
  const session = useSession();
  sessionState.companyId = companyId;
  const company = useQuery({
    queryKey: ['company', companyId],
    queryFn: () => unwrap(api.GET('/api/v0/companies/{companyId}', { params: { path: { companyId } } })),
  });
  // A company the caller is not part of reads as a page that does not exist (the API answers 404 or 403).
  if (company.error instanceof ApiError && (company.error.status === 404 || company.error.status === 403))
    return <NotFound />;
  const current = section ?? 'repositories';
  if (!SECTIONS.some((s) => s.id === current)) return <NotFound />;
  const role = session.companies.find((c) => c.id === companyId)?.role ?? null;
  const manages = role === 'manager' || session.permissions.includes('admin');
  return (
    <Async query={company}>
      {(c) => (
        <section>
          <h1>{c.name}</h1>
          <p className="muted">
            @{c.handle} {role ? `· you are ${role === 'manager' ? 'a manager' : 'a member'}` : ''}
          </p>
          <nav aria-label="Company sections" className="tabs">
            {SECTIONS.map((s) => (
              <Link
                key={s.id}
                to="/companies/$companyId/$section"
                params={{ companyId, section: s.id }}
                aria-current={s.id === current ? 'page' : undefined}
              >
                {s.label}
              </Link>
            ))}
          </nav>
          {current === 'repositories' && <Repositories companyId={companyId} />}
          {current === 'dashboard' && (
            <Suspense
              fallback={
                <p className="muted" role="status">
                  Loading…
                </p>
              }
            >
              <Dashboard companyId={companyId} />
            </Suspense>
          )}
          {current === 'scans' && <NewScan companyId={companyId} />}
          {current === 'users' && <Users companyId={companyId} manages={manages} />}
          {current === 'audit-log' && <AuditLog companyId={companyId} />}
          {current === 'sso' && <SsoRules companyId={companyId} manages={manages} />}
          {current === 'service-keys' && <ServiceKeys companyId={companyId} manages={manages} />}
          {current === 'integrations' && <Integrations companyId={companyId} manages={manages} />}
        </section>
      )}
    </Async>
  );
}

function Repositories({ companyId }: { companyId: string }) {
  const repos = useQuery({
    queryKey: ['repositories', companyId],
    queryFn: () =>
      unwrap(
        api.GET('/api/v0/companies/{company_id}/repositories', {
          params: { path: { company_id: companyId } },
        }),
      ),
  });
  return (
    <Async query={repos}>
      {({ items }) =>
        items.length === 0 ? (
          <p className="muted">No repositories yet.</p>
        ) : (
          <div className="table-wrap">
            <table>
              <caption className="sr-only">Repositories</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Findings</th>
                  <th scope="col">Reward pot</th>
                  <th scope="col">Timeframe</th>
                </tr>
              </thead>
              <tbody>
                {items.map((r) => (
                  <tr key={r.id}>
                    <td>
                      <Link to="/repositories/$repoId" params={{ repoId: r.id }}>
                        {r.name}
                      </Link>
                    </td>
                    <td>{r.totalFindings}</td>
                    <td>
                      {r.totalRewardPot} {r.currencyCode}
                    </td>
                    <td>
                      {formatDate(r.timeframe?.start)} → {formatDate(r.timeframe?.end)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      }
    </Async>
  );
}
