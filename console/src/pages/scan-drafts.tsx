import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { type ReactNode, useId, useState } from 'react';
import type { components } from '../../../src/sdk/schema';
import { api, sessionState, unwrap } from '../api.ts';
import { Markdown } from '../markdown.tsx';
import { SEVERITIES } from '../search.ts';
import { Async, Chip, ErrorMessage, formatDate, words } from '../ui.tsx';
import '../drafts.css';

type Draft = components['schemas']['Draft'];
type DraftState = Draft['state'];
type Severity = Draft['severity'];
type BaselineState = NonNullable<Draft['baselineState']>;
type DismissalReason = components['schemas']['TriageDraftsRequest']['reason'] & string;
type PublishedDraft = components['schemas']['PublishedDraft'];

const STATES: readonly DraftState[] = ['open', 'dismissed', 'published', 'fixed', 'reopened'];
const BASELINE_STATES: readonly BaselineState[] = ['new', 'unchanged', 'reopened', 'fixed'];
const REASONS: ReadonlyArray<{ value: DismissalReason; label: string }> = [
  { value: 'false_positive', label: 'False positive' },
  { value: 'wont_fix', label: 'Won’t fix' },
  { value: 'used_in_tests', label: 'Used in tests' },
];

/** file:start–end, the lines once when the finding spans one line. */
function lines(location: Draft['location']): string {
  return location.endLine !== location.startLine
    ? `${location.file}:${location.startLine}–${location.endLine}`
    : `${location.file}:${location.startLine}`;
}

interface Filters {
  state: DraftState | '';
  severity: Severity | '';
  baselineState: BaselineState | '';
}

/**
 * A completed scan's drafts as a triage table: the comparison with the scan's baseline above,
 * filters (state, severity, how each compares with the baseline), many rows selected at once,
 * dismissed with a reason, reopened, or published to one of the company's repositories.
 * `details` renders what a row shows below its title when opened (the scan page's tickets).
 */
export function ScanDrafts({
  companyId,
  scanId,
  details,
}: {
  companyId: string;
  scanId: string;
  details?: (draftId: string) => ReactNode;
}) {
  sessionState.companyId = companyId;
  const client = useQueryClient();
  const [filters, setFilters] = useState<Filters>({ state: '', severity: '', baselineState: '' });
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const drafts = useInfiniteQuery({
    queryKey: ['scan-drafts', scanId, filters],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      unwrap(
        api.GET('/api/scanner/v1/scans/{scanId}/drafts', {
          params: {
            path: { scanId },
            query: {
              limit: 50,
              ...(filters.state ? { state: filters.state } : {}),
              ...(filters.severity ? { severity: filters.severity } : {}),
              ...(filters.baselineState ? { baselineState: filters.baselineState } : {}),
              ...(pageParam ? { next: pageParam } : {}),
            },
          },
        }),
      ),
    getNextPageParam: (last) => last.nextValue ?? undefined,
  });
  const rows = drafts.data?.pages.flatMap((p) => p.items) ?? [];
  const chosen = rows.filter((d) => selected.has(d.id));
  const refresh = async () => {
    setSelected(new Set());
    await Promise.all([
      client.invalidateQueries({ queryKey: ['scan-drafts', scanId] }),
      client.invalidateQueries({ queryKey: ['scan-comparison', scanId] }),
    ]);
  };
  const setFilter = (patch: Partial<Filters>) => {
    setSelected(new Set());
    setFilters((f) => ({ ...f, ...patch }));
  };
  const allOnPage = rows.length > 0 && rows.every((d) => selected.has(d.id));
  const toggle = (id: string) =>
    setSelected((s) => {
      const next = new Set(s);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

  return (
    <div className="scan-drafts">
      <Comparison companyId={companyId} scanId={scanId} />
      <fieldset className="draft-filters">
        <legend>Filter the drafts</legend>
        <label>
          State{' '}
          <select
            value={filters.state}
            onChange={(e) => setFilter({ state: e.target.value as Filters['state'] })}
          >
            <option value="">any</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Severity{' '}
          <select
            value={filters.severity}
            onChange={(e) => setFilter({ severity: e.target.value as Filters['severity'] })}
          >
            <option value="">any</option>
            {SEVERITIES.map((s) => (
              <option key={s} value={s}>
                {words(s)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Against the baseline{' '}
          <select
            value={filters.baselineState}
            onChange={(e) => setFilter({ baselineState: e.target.value as Filters['baselineState'] })}
          >
            <option value="">found by this scan</option>
            {BASELINE_STATES.map((s) => (
              <option key={s} value={s}>
                {s === 'new'
                  ? 'new in this scan'
                  : s === 'fixed'
                    ? 'fixed by this scan (not found again)'
                    : s}
              </option>
            ))}
          </select>
        </label>
      </fieldset>
      <TriageActions companyId={companyId} chosen={chosen} onDone={refresh} />
      <Async query={drafts}>
        {() =>
          rows.length === 0 ? (
            <p>
              No drafts
              {filters.state || filters.severity || filters.baselineState ? ' match the filters' : ''}.
            </p>
          ) : (
            <>
              <div className="table-wrap">
                <table className="drafts" data-testid="drafts-table">
                  <caption className="sr-only">The scan’s draft findings</caption>
                  <thead>
                    <tr>
                      <th scope="col">
                        <input
                          type="checkbox"
                          aria-label="Select every draft on the page"
                          checked={allOnPage}
                          onChange={() => setSelected(allOnPage ? new Set() : new Set(rows.map((d) => d.id)))}
                        />
                      </th>
                      <th scope="col">Severity</th>
                      <th scope="col">Title</th>
                      <th scope="col">Rule</th>
                      <th scope="col">Location</th>
                      <th scope="col">State</th>
                      <th scope="col">Baseline</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((d) => (
                      <DraftRow
                        key={d.id}
                        draft={d}
                        selected={selected.has(d.id)}
                        onToggle={() => toggle(d.id)}
                        details={details}
                      />
                    ))}
                  </tbody>
                </table>
              </div>
              {drafts.hasNextPage && (
                <button
                  type="button"
                  disabled={drafts.isFetchingNextPage}
                  onClick={() => void drafts.fetchNextPage()}
                >
                  Load more
                </button>
              )}
            </>
          )
        }
      </Async>
    </div>
  );
}

function DraftRow({
  draft: d,
  selected,
  onToggle,
  details,
}: {
  draft: Draft;
  selected: boolean;
  onToggle: () => void;
  details?: (draftId: string) => ReactNode;
}) {
  const [open, setOpen] = useState(false);
  const titleId = useId();
  return (
    <tr data-draft-id={d.id} className={selected ? 'selected' : undefined}>
      <td>
        <input type="checkbox" aria-labelledby={titleId} checked={selected} onChange={onToggle} />
      </td>
      <td>
        <Chip kind="severity" value={d.severity} />
      </td>
      <td>
        <span id={titleId}>{d.title}</span>{' '}
        <button type="button" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
          {open ? 'Hide details' : 'Details'}
        </button>
        {open && (
          <div className="draft-details">
            {d.contract && (
              <p className="muted small">
                In {d.contract}
                {d.function ? `.${d.function}` : ''}
              </p>
            )}
            {d.description && <Markdown source={d.description} className="description" />}
            {d.snippet && (
              <pre className="description">
                <code>{d.snippet}</code>
              </pre>
            )}
            <p className="muted small">First seen {formatDate(d.firstSeenAt)}</p>
            {details?.(d.id)}
          </div>
        )}
      </td>
      <td>
        <code>{d.ruleId}</code>
        {d.identifiers.length > 0 && <span className="muted small"> {d.identifiers.join(' · ')}</span>}
      </td>
      <td>
        <code>{lines(d.location)}</code>
      </td>
      <td data-testid="draft-state">
        <Chip kind="status" value={d.state} />
        {d.dismissal && (
          <span className="muted small">
            {' '}
            {words(d.dismissal.reason)}
            {d.dismissal.by.username ? ` by @${d.dismissal.by.username}` : ''}
            {d.dismissal.comment ? `: ${d.dismissal.comment}` : ''}
          </span>
        )}
        {d.publication?.repositoryId && d.publication.number !== null && (
          <>
            {' '}
            <Link
              to="/repositories/$repoId/findings/$findingRef"
              params={{ repoId: d.publication.repositoryId, findingRef: String(d.publication.number) }}
            >
              finding #{d.publication.number}
            </Link>
          </>
        )}
      </td>
      <td>
        {d.baselineState ? (
          <span className={`chip baseline-${d.baselineState}`}>{d.baselineState}</span>
        ) : (
          '—'
        )}
      </td>
    </tr>
  );
}

/** The scan against its baseline, as the commit status reads it, with every count. */
function Comparison({ companyId, scanId }: { companyId: string; scanId: string }) {
  const comparison = useQuery({
    queryKey: ['scan-comparison', scanId],
    queryFn: () =>
      unwrap(api.GET('/api/scanner/v1/scans/{scanId}/comparison', { params: { path: { scanId } } })),
  });
  return (
    <Async query={comparison}>
      {(c) => (
        <div className="comparison">
          <p data-testid="scan-comparison">
            <strong>{c.summary}</strong>{' '}
            <span className="muted">
              {c.baselineScanId ? (
                <>
                  against{' '}
                  <Link
                    to="/companies/$companyId/scans/$scanId"
                    params={{ companyId, scanId: c.baselineScanId }}
                  >
                    the baseline scan
                  </Link>
                </>
              ) : (
                'no earlier scan to compare with: every draft is new'
              )}
              {c.branch ? ` · branch ${c.branch}` : ''}
              {c.commit ? ` · commit ${c.commit.slice(0, 12)}` : ''}
            </span>
          </p>
          <dl className="facts comparison-counts">
            <dt>New</dt>
            <dd data-testid="count-new">{c.new}</dd>
            <dt>Unchanged</dt>
            <dd data-testid="count-unchanged">{c.unchanged}</dd>
            <dt>Reopened</dt>
            <dd data-testid="count-reopened">{c.reopened}</dd>
            <dt>Fixed</dt>
            <dd data-testid="count-fixed">{c.fixed}</dd>
            <dt>Dismissed</dt>
            <dd data-testid="count-dismissed">{c.dismissed}</dd>
          </dl>
        </div>
      )}
    </Async>
  );
}

/**
 * What can be done with the selected drafts: dismiss them with a reason and a comment, reopen
 * them, or publish them to a repository with a severity each (the draft's by default).
 */
function TriageActions({
  companyId,
  chosen,
  onDone,
}: {
  companyId: string;
  chosen: Draft[];
  onDone: () => Promise<void>;
}) {
  const [mode, setMode] = useState<'dismiss' | 'publish' | null>(null);
  const [reason, setReason] = useState<DismissalReason | ''>('');
  const [comment, setComment] = useState('');
  const [repositoryId, setRepositoryId] = useState('');
  const [severity, setSeverity] = useState<Record<string, Severity>>({});
  const [published, setPublished] = useState<{ items: PublishedDraft[]; repositoryId: string } | null>(null);
  const [done, setDone] = useState('');
  const repositories = useQuery({
    queryKey: ['repositories', companyId],
    enabled: mode === 'publish',
    queryFn: () =>
      unwrap(
        api.GET('/api/v0/companies/{company_id}/repositories', {
          params: { path: { company_id: companyId } },
        }),
      ),
  });
  const triage = useMutation({
    mutationFn: (action: 'dismiss' | 'reopen') =>
      unwrap(
        api.POST('/api/scanner/v1/drafts/triage', {
          body: {
            action,
            draftIds: chosen.map((d) => d.id),
            ...(action === 'dismiss' && reason ? { reason } : {}),
            ...(action === 'dismiss' && comment.trim() ? { comment: comment.trim() } : {}),
          },
        }),
      ),
    onSuccess: async (result, action) => {
      setMode(null);
      setReason('');
      setComment('');
      setPublished(null);
      await onDone();
      setDone(
        `${action === 'dismiss' ? 'Dismissed' : 'Reopened'} ${result.items.length} draft${result.items.length === 1 ? '' : 's'}.`,
      );
    },
  });
  const publish = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/scanner/v1/drafts/publish', {
          body: {
            repositoryId,
            drafts: chosen.map((d) => ({ draftId: d.id, severity: severity[d.id] ?? d.severity })),
          },
        }),
      ),
    onSuccess: async (result) => {
      setMode(null);
      setSeverity({});
      setDone('');
      setPublished({ items: result.items, repositoryId });
      await onDone();
    },
  });
  const busy = triage.isPending || publish.isPending;
  return (
    <section className="triage-actions" aria-label="Triage the selected drafts">
      <p role="status" className="muted" data-testid="triage-status">
        {chosen.length === 0
          ? done || 'Select drafts to dismiss, reopen or publish them.'
          : `${chosen.length} selected.`}
      </p>
      {published && (
        <ul className="published" data-testid="published">
          {published.items.map((p) => (
            <li key={p.draftId}>
              {p.created ? 'Published as ' : 'Already published as '}
              <Link
                to="/repositories/$repoId/findings/$findingRef"
                params={{ repoId: p.repositoryId, findingRef: String(p.number) }}
              >
                finding #{p.number}
              </Link>
            </li>
          ))}
        </ul>
      )}
      {chosen.length > 0 && (
        <div className="button-row">
          <button type="button" aria-expanded={mode === 'dismiss'} onClick={() => setMode('dismiss')}>
            Dismiss…
          </button>
          <button type="button" disabled={busy} onClick={() => triage.mutate('reopen')}>
            Reopen
          </button>
          <button type="button" aria-expanded={mode === 'publish'} onClick={() => setMode('publish')}>
            Publish…
          </button>
        </div>
      )}
      {chosen.length > 0 && mode === 'dismiss' && (
        <form
          className="stack"
          aria-label="Dismiss the selected drafts"
          onSubmit={(e) => {
            e.preventDefault();
            triage.mutate('dismiss');
          }}
        >
          <fieldset>
            <legend>Why are they dismissed?</legend>
            {REASONS.map((r) => (
              <label key={r.value}>
                <input
                  type="radio"
                  name="dismiss-reason"
                  value={r.value}
                  required
                  checked={reason === r.value}
                  onChange={() => setReason(r.value)}
                />{' '}
                {r.label}
              </label>
            ))}
          </fieldset>
          <label>
            Comment (optional)
            <textarea
              name="dismiss-comment"
              maxLength={2000}
              rows={2}
              value={comment}
              onChange={(e) => setComment(e.target.value)}
            />
          </label>
          <div className="button-row">
            <button type="submit" disabled={busy || !reason}>
              Dismiss {chosen.length} draft{chosen.length === 1 ? '' : 's'}
            </button>
            <button type="button" onClick={() => setMode(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {chosen.length > 0 && mode === 'publish' && (
        <form
          className="stack"
          aria-label="Publish the selected drafts"
          onSubmit={(e) => {
            e.preventDefault();
            publish.mutate();
          }}
        >
          <Async query={repositories}>
            {({ items }) => (
              <label>
                Repository
                <select
                  name="repository"
                  required
                  value={repositoryId}
                  onChange={(e) => setRepositoryId(e.target.value)}
                >
                  <option value="">choose a repository</option>
                  {items.map((r) => (
                    <option key={r.id} value={r.id}>
                      {r.name}
                    </option>
                  ))}
                </select>
              </label>
            )}
          </Async>
          <fieldset>
            <legend>Severity of each finding</legend>
            {chosen.map((d) => (
              <label key={d.id}>
                {d.title}{' '}
                <select
                  value={severity[d.id] ?? d.severity}
                  onChange={(e) => setSeverity((s) => ({ ...s, [d.id]: e.target.value as Severity }))}
                >
                  {SEVERITIES.map((s) => (
                    <option key={s} value={s}>
                      {words(s)}
                    </option>
                  ))}
                </select>
              </label>
            ))}
          </fieldset>
          <div className="button-row">
            <button type="submit" disabled={busy || !repositoryId}>
              Publish {chosen.length} draft{chosen.length === 1 ? '' : 's'}
            </button>
            <button type="button" onClick={() => setMode(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {triage.error ? <ErrorMessage error={triage.error} /> : null}
      {publish.error ? <ErrorMessage error={publish.error} /> : null}
    </section>
  );
}
