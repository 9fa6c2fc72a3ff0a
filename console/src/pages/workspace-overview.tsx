import { useQueries, useQuery } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
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
import { Bar } from 'react-chartjs-2';
import type { components } from '../../../src/sdk/schema';
import { api, sessionState, unwrap } from '../api.ts';
import { SEVERITIES } from '../search.ts';
import { Async, ErrorMessage, formatDate, words } from '../ui.tsx';
import { useWorkspace } from '../workspaces.tsx';

// Bars only: the chunk carries no chart type the page does not draw.
ChartJS.register(BarElement, CategoryScale, LinearScale, Legend, Tooltip);

type ScanStatus = components['schemas']['ScanStatus'];
type ScanComparison = components['schemas']['ScanComparison'];

/** The scans the overview follows: the latest completed ones of the workspace, oldest first. */
const SCANS_SHOWN = 20;

/** Severity colours that keep their contrast on the light and the dark theme. */
const SEVERITY_COLOURS: Record<(typeof SEVERITIES)[number], string> = {
  critical: '#b71c1c',
  high: '#e65100',
  medium: '#f9a825',
  low: '#1565c0',
  informational: '#546e7a',
  gas_optimization: '#6a1b9a',
};
const NEW_COLOUR = '#00838f';
const FIXED_COLOUR = '#2e7d32';

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((n, c) => n + c, 0);

interface ScanFigures {
  scan: ScanStatus;
  comparison: ScanComparison;
  label: string;
}

/**
 * A workspace's overview: for each of its latest completed scans, the open drafts by severity,
 * and how many were new and fixed, as a chart and as a table of the same figures.
 */
export function WorkspaceOverviewPage() {
  const { companyId, workspaceId } = useParams({ from: '/companies/$companyId/workspaces/$workspaceId' });
  sessionState.companyId = companyId;
  const { workspace } = useWorkspace(companyId, workspaceId);
  const scans = useQuery({
    queryKey: ['scans', companyId, 'completed', workspaceId],
    queryFn: () =>
      unwrap(
        api.GET('/api/scanner/v1/scans', {
          params: { query: { limit: SCANS_SHOWN, status: 'completed', workspaceId } },
        }),
      ),
  });
  const ofWorkspace = [...(scans.data?.scans ?? [])].sort((a, b) =>
    (a.completedAt ?? a.createdAt).localeCompare(b.completedAt ?? b.createdAt),
  );
  const comparisons = useQueries({
    queries: ofWorkspace.map((s) => ({
      queryKey: ['scan-comparison', s.id],
      queryFn: () =>
        unwrap(api.GET('/api/scanner/v1/scans/{scanId}/comparison', { params: { path: { scanId: s.id } } })),
    })),
  });
  const failed = comparisons.find((c) => c.error)?.error;
  const pending = scans.isPending || comparisons.some((c) => c.isPending);
  const figures: ScanFigures[] = ofWorkspace.flatMap((scan, i) => {
    const comparison = comparisons[i]?.data;
    return comparison ? [{ scan, comparison, label: formatDate(scan.completedAt) }] : [];
  });
  return (
    <section aria-labelledby="workspace-h">
      <p>
        <Link to="/companies/$companyId/$section" params={{ companyId, section: 'scans' }}>
          ← Scans
        </Link>
      </p>
      <h1 id="workspace-h">{workspace ? `Workspace ${workspace.name}` : 'Workspace overview'}</h1>
      {workspace && (
        <dl className="facts">
          <dt>Prefix</dt>
          <dd>
            {workspace.prefix === '' ? (
              <span className="muted">the root</span>
            ) : (
              <code>{workspace.prefix}</code>
            )}
          </dd>
          <dt>Repository</dt>
          <dd>{workspace.repository ?? <span className="muted">none (uploads)</span>}</dd>
          {!workspace.active && (
            <>
              <dt>State</dt>
              <dd>unlinked: takes no new scans</dd>
            </>
          )}
        </dl>
      )}
      <p className="muted small">
        Workspace <code>{workspaceId}</code>: the open drafts of its latest {SCANS_SHOWN} completed scans,
        with what each scan found new and fixed.
      </p>
      <Async query={scans}>
        {() =>
          ofWorkspace.length === 0 ? (
            <p>No completed scan of this workspace.</p>
          ) : failed ? (
            <ErrorMessage error={failed} />
          ) : pending ? (
            <p className="muted" role="status">
              Loading…
            </p>
          ) : (
            <>
              <OverviewChart figures={figures} />
              <FiguresTable companyId={companyId} figures={figures} />
            </>
          )
        }
      </Async>
    </section>
  );
}

function textColor(): string {
  return getComputedStyle(document.body).color || '#222';
}

function gridColor(): string {
  return document.documentElement.dataset.theme === 'dark' ? 'rgba(255,255,255,0.15)' : 'rgba(0,0,0,0.1)';
}

function OverviewChart({ figures }: { figures: ScanFigures[] }) {
  const data: ChartData<'bar'> = {
    labels: figures.map((f) => f.label),
    datasets: [
      ...SEVERITIES.map((s) => ({
        label: `Open: ${words(s)}`,
        data: figures.map((f) => f.comparison.openBySeverity[s]),
        backgroundColor: SEVERITY_COLOURS[s],
        stack: 'open',
      })),
      {
        label: 'New',
        data: figures.map((f) => f.comparison.new),
        backgroundColor: NEW_COLOUR,
        stack: 'new',
      },
      {
        label: 'Fixed',
        data: figures.map((f) => f.comparison.fixed),
        backgroundColor: FIXED_COLOUR,
        stack: 'fixed',
      },
    ],
  };
  // Counts are whole numbers: no 0.5 ticks.
  const axis = { stacked: true, grid: { color: gridColor() }, ticks: { color: textColor(), precision: 0 } };
  const options: ChartOptions<'bar'> = {
    responsive: true,
    maintainAspectRatio: false,
    animation: false,
    scales: { x: axis, y: { ...axis, beginAtZero: true } },
    plugins: { legend: { labels: { color: textColor() } } },
  };
  const last = figures.at(-1);
  const summary = last
    ? `latest scan: ${sum(last.comparison.openBySeverity)} open drafts, ${last.comparison.new} new, ${last.comparison.fixed} fixed; figures in the table below`
    : 'no scans';
  return (
    <section className="card overview-chart" aria-labelledby="overview-chart-h" data-testid="overview-chart">
      <h2 id="overview-chart-h">Open drafts by severity, new and fixed, per scan</h2>
      <div className="overview-chart-box">
        <Bar data={data} options={options} role="img" aria-label={`Open drafts per scan: ${summary}`} />
      </div>
    </section>
  );
}

function FiguresTable({ companyId, figures }: { companyId: string; figures: ScanFigures[] }) {
  return (
    <div className="table-wrap">
      <table data-testid="overview-table">
        <caption>Open drafts by severity, new and fixed, per scan (oldest first)</caption>
        <thead>
          <tr>
            <th scope="col">Scan</th>
            <th scope="col">Branch · commit</th>
            {SEVERITIES.map((s) => (
              <th scope="col" key={s}>
                {words(s)}
              </th>
            ))}
            <th scope="col">Open</th>
            <th scope="col">New</th>
            <th scope="col">Reopened</th>
            <th scope="col">Fixed</th>
            <th scope="col">Summary</th>
          </tr>
        </thead>
        <tbody>
          {figures.map(({ scan, comparison: c, label }) => (
            <tr key={scan.id} data-scan-id={scan.id}>
              <th scope="row">
                <Link to="/companies/$companyId/scans/$scanId" params={{ companyId, scanId: scan.id }}>
                  {label}
                </Link>
              </th>
              <td>
                {c.branch ?? '—'}
                {c.commit ? ` · ${c.commit.slice(0, 12)}` : ''}
                {c.pullRequest ? ' (pull request)' : ''}
              </td>
              {SEVERITIES.map((s) => (
                <td key={s} data-severity={s}>
                  {c.openBySeverity[s]}
                </td>
              ))}
              <td data-testid="open">{sum(c.openBySeverity)}</td>
              <td data-testid="new">{c.new}</td>
              <td data-testid="reopened">{c.reopened}</td>
              <td data-testid="fixed">{c.fixed}</td>
              <td>{c.summary}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
