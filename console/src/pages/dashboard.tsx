import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import {
  BarElement,
  CategoryScale,
  type ChartData,
  Chart as ChartJS,
  type ChartOptions,
  Legend,
  LinearScale,
  Tooltip,
} from 'chart.js';
import type { ReactNode } from 'react';
import { Bar } from 'react-chartjs-2';
import type { paths } from '../../../src/sdk/schema';
import { api, unwrap } from '../api.ts';
import type { FindingsSearch } from '../router.tsx';
import { SEVERITIES } from '../search.ts';
import { Async } from '../ui.tsx';

// Only the parts the charts use, so that the chunk carries no unused chart types.
ChartJS.register(BarElement, CategoryScale, LinearScale, Legend, Tooltip);

type Dashboard =
  paths['/api/v0/companies/{company_id}/dashboard']['get']['responses'][200]['content']['application/json'];

const STATUSES = [
  'new',
  'in_review',
  'disputed',
  'confirmed',
  'acknowledged',
  'fixed',
  'rejected',
  'spam',
  'duplicate',
  'withdrawn',
] as const;

/** Colours that keep their contrast on the light and the dark theme. */
const PALETTE = [
  '#c62828',
  '#ef6c00',
  '#f9a825',
  '#2e7d32',
  '#1565c0',
  '#6a1b9a',
  '#00838f',
  '#6d4c41',
  '#546e7a',
  '#ad1457',
];

const label = (value: string) => value.replace(/_/g, ' ');

/** A duration in seconds as people say it: minutes, hours or days. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null) return '—';
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 2 * 86_400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} days`;
}

function gridColor(): string {
  return document.documentElement.dataset.theme === 'dark' ? 'rgba(255,255,255,0.15)' : 'rgba(0,0,0,0.1)';
}

function textColor(): string {
  return getComputedStyle(document.body).color || '#222';
}

function options(
  onPick: (datasetIndex: number, index: number) => void,
  stacked: boolean,
  horizontal = false,
): ChartOptions<'bar'> {
  // Counts are whole numbers: no 0.5 ticks.
  const axis = { stacked, grid: { color: gridColor() }, ticks: { color: textColor(), precision: 0 } };
  return {
    responsive: true,
    maintainAspectRatio: false,
    animation: false,
    indexAxis: horizontal ? 'y' : 'x',
    scales: { x: { ...axis, beginAtZero: true }, y: { ...axis, beginAtZero: true } },
    plugins: { legend: { labels: { color: textColor() } } },
    onHover: (event, elements) => {
      const target = event.native?.target as HTMLElement | undefined;
      if (target) target.style.cursor = elements.length > 0 ? 'pointer' : 'default';
    },
    onClick: (_event, elements) => {
      const first = elements[0];
      if (first) onPick(first.datasetIndex, first.index);
    },
  };
}

/** A chart with its figures as a table of links: the keyboard's and the screen reader's way in. */
function ChartCard({
  id,
  title,
  summary,
  data,
  chartOptions,
  table,
}: {
  id: string;
  title: string;
  summary: string;
  data: ChartData<'bar'>;
  chartOptions: ChartOptions<'bar'>;
  table: ReactNode;
}) {
  return (
    <section className="card chart-card" aria-labelledby={`${id}-title`} data-testid={`chart-${id}`}>
      <h2 id={`${id}-title`}>{title}</h2>
      <div className="chart-box">
        <Bar data={data} options={chartOptions} aria-label={`${title}: ${summary}`} role="img" />
      </div>
      <details>
        <summary>Figures and links</summary>
        {table}
      </details>
    </section>
  );
}

/**
 * The company dashboard: open findings by severity and status, findings by status, new and fixed
 * per week, the median time to fix and findings per repository. Every bar and every figure leads
 * to the findings table filtered to what it counts.
 */
export function Dashboard({ companyId }: { companyId: string }) {
  const navigate = useNavigate();
  const query = useQuery({
    queryKey: ['dashboard', companyId],
    queryFn: () =>
      unwrap(
        api.GET('/api/v0/companies/{company_id}/dashboard', {
          params: { path: { company_id: companyId }, query: { weeks: 12 } },
        }),
      ),
  });
  return (
    <Async query={query}>
      {(d) => <DashboardCharts d={d} go={(search) => void navigate({ to: '/findings', search })} />}
    </Async>
  );
}

function DashboardCharts({ d, go }: { d: Dashboard; go: (search: FindingsSearch) => void }) {
  // The company's findings: its repositories (the all-findings listing spans every company the
  // user sees). A company with no repository has no findings to link to.
  const repositories = d.repositories.map((r) => r.id).join(',') || undefined;
  const open = d.openStatuses.join(',');
  const count = (status: string, severity: string) =>
    d.byStatusAndSeverity.find((c) => c.status === status && c.severity === severity)?.count ?? 0;
  const severities = SEVERITIES.filter((s) => d.byStatusAndSeverity.some((c) => c.severity === s));
  const openStatuses = d.openStatuses.filter((s) => d.byStatusAndSeverity.some((c) => c.status === s));
  const statuses = STATUSES.filter((s) => d.byStatusAndSeverity.some((c) => c.status === s));
  const byStatus = (status: string) =>
    d.byStatusAndSeverity.filter((c) => c.status === status).reduce((n, c) => n + c.count, 0);
  const openOf = (severity: string) => openStatuses.reduce((n, s) => n + count(s, severity), 0);
  const weekLabel = (w: string) => w.slice(0, 10);

  return (
    <div className="dashboard">
      <dl className="facts dashboard-totals">
        <dt>Open findings</dt>
        <dd>
          <Link to="/findings" search={{ repositories, status: open }}>
            {d.totals.open}
          </Link>
        </dd>
        <dt>Fixed</dt>
        <dd>
          <Link to="/findings" search={{ repositories, status: 'fixed' }}>
            {d.totals.fixed}
          </Link>
        </dd>
        <dt>All findings</dt>
        <dd>
          <Link to="/findings" search={{ repositories }}>
            {d.totals.findings}
          </Link>
        </dd>
        <dt>Median time to fix</dt>
        <dd data-testid="median-time-to-fix">
          <Link to="/findings" search={{ repositories, status: 'fixed' }}>
            {formatDuration(d.timeToFix.medianSeconds)}
          </Link>{' '}
          <span className="muted small">over {d.timeToFix.fixedCount} fixed</span>
        </dd>
      </dl>
      <div className="chart-grid">
        <ChartCard
          id="open-by-severity"
          title="Open findings by severity and status"
          summary={severities.map((s) => `${label(s)} ${openOf(s)}`).join(', ') || 'none'}
          data={{
            labels: severities.map(label),
            datasets: openStatuses.map((status, i) => ({
              label: label(status),
              data: severities.map((s) => count(status, s)),
              backgroundColor: PALETTE[(i + 4) % PALETTE.length],
            })),
          }}
          chartOptions={options(
            (ds, i) => go({ repositories, status: openStatuses[ds], severity: severities[i] }),
            true,
          )}
          table={
            <table>
              <thead>
                <tr>
                  <th scope="col">Severity</th>
                  {openStatuses.map((s) => (
                    <th key={s} scope="col">
                      {label(s)}
                    </th>
                  ))}
                  <th scope="col">Open</th>
                </tr>
              </thead>
              <tbody>
                {severities.map((sev) => (
                  <tr key={sev}>
                    <th scope="row">{label(sev)}</th>
                    {openStatuses.map((s) => (
                      <td key={s}>
                        <Link to="/findings" search={{ repositories, status: s, severity: sev }}>
                          {count(s, sev)}
                        </Link>
                      </td>
                    ))}
                    <td>
                      <Link to="/findings" search={{ repositories, status: open, severity: sev }}>
                        {openOf(sev)}
                      </Link>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          }
        />
        <ChartCard
          id="by-status"
          title="Findings by status"
          summary={statuses.map((s) => `${label(s)} ${byStatus(s)}`).join(', ') || 'none'}
          data={{
            labels: statuses.map(label),
            datasets: [{ label: 'Findings', data: statuses.map(byStatus), backgroundColor: PALETTE[4] }],
          }}
          chartOptions={options((_ds, i) => go({ repositories, status: statuses[i] }), false)}
          table={
            <ul>
              {statuses.map((s) => (
                <li key={s}>
                  <Link to="/findings" search={{ repositories, status: s }}>
                    {label(s)}: {byStatus(s)}
                  </Link>
                </li>
              ))}
            </ul>
          }
        />
        <ChartCard
          id="weekly"
          title="New and fixed per week"
          summary={`${d.weekly.reduce((n, w) => n + w.new, 0)} new and ${d.weekly.reduce((n, w) => n + w.fixed, 0)} fixed over ${d.weekly.length} weeks`}
          data={{
            labels: d.weekly.map((w) => weekLabel(w.weekStart)),
            datasets: [
              { label: 'New', data: d.weekly.map((w) => w.new), backgroundColor: PALETTE[0] },
              { label: 'Fixed', data: d.weekly.map((w) => w.fixed), backgroundColor: PALETTE[3] },
            ],
          }}
          chartOptions={options(
            (ds) =>
              go(
                ds === 0
                  ? { repositories, order_by: 'created_at_desc' }
                  : { repositories, status: 'fixed', order_by: 'last_updated_at_desc' },
              ),
            false,
          )}
          table={
            <table>
              <thead>
                <tr>
                  <th scope="col">Week of</th>
                  <th scope="col">New</th>
                  <th scope="col">Fixed</th>
                </tr>
              </thead>
              <tbody>
                {d.weekly.map((w) => (
                  <tr key={w.weekStart}>
                    <th scope="row">{weekLabel(w.weekStart)}</th>
                    <td>
                      <Link to="/findings" search={{ repositories, order_by: 'created_at_desc' }}>
                        {w.new}
                      </Link>
                    </td>
                    <td>
                      <Link
                        to="/findings"
                        search={{ repositories, status: 'fixed', order_by: 'last_updated_at_desc' }}
                      >
                        {w.fixed}
                      </Link>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          }
        />
        <ChartCard
          id="per-repository"
          title="Findings per repository"
          summary={
            d.repositories.map((r) => `${r.name}: ${r.open} open, ${r.fixed} fixed`).join('; ') || 'none'
          }
          data={{
            labels: d.repositories.map((r) => r.name),
            datasets: [
              { label: 'Open', data: d.repositories.map((r) => r.open), backgroundColor: PALETTE[1] },
              { label: 'Fixed', data: d.repositories.map((r) => r.fixed), backgroundColor: PALETTE[3] },
              {
                label: 'Closed otherwise',
                data: d.repositories.map((r) => r.total - r.open - r.fixed),
                backgroundColor: PALETTE[8],
              },
            ],
          }}
          chartOptions={options(
            (ds, i) => {
              const repo = d.repositories[i];
              if (!repo) return;
              go({ repositories: repo.id, status: ds === 0 ? open : ds === 1 ? 'fixed' : undefined });
            },
            true,
            true,
          )}
          table={
            <table>
              <thead>
                <tr>
                  <th scope="col">Repository</th>
                  <th scope="col">Open</th>
                  <th scope="col">Fixed</th>
                  <th scope="col">All</th>
                </tr>
              </thead>
              <tbody>
                {d.repositories.map((r) => (
                  <tr key={r.id}>
                    <th scope="row">{r.name}</th>
                    <td>
                      <Link to="/findings" search={{ repositories: r.id, status: open }}>
                        {r.open}
                      </Link>
                    </td>
                    <td>
                      <Link to="/findings" search={{ repositories: r.id, status: 'fixed' }}>
                        {r.fixed}
                      </Link>
                    </td>
                    <td>
                      <Link to="/findings" search={{ repositories: r.id }}>
                        {r.total}
                      </Link>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          }
        />
      </div>
    </div>
  );
}
