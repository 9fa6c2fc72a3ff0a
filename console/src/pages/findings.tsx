import {
  keepPreviousData,
  useInfiniteQuery,
  useMutation,
  useQuery,
  useQueryClient,
} from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { type KeyboardEvent, useEffect, useId, useMemo, useRef, useState } from 'react';
import type { paths } from '../../../src/sdk/schema';
import { api, unwrap } from '../api.ts';
import { findingsQuery } from '../findings-query.ts';
import type { FindingsSearch } from '../router.tsx';
import { completions, FILTER_FOR, ORDERS, ROLES, SEVERITIES, STATUSES } from '../search.ts';
import { useSession } from '../session.tsx';
import { Chip, ErrorMessage, formatDate, usePlaceCaret } from '../ui.tsx';
import { AssigneeFilter, BulkBar, SortHeader, splitSearchKey } from './findings-controls.tsx';
import {
  useMayShareViews,
  useViewRepositories,
  ViewActions,
  type ViewRepository,
} from './findings-views.tsx';

type Finding =
  paths['/api/v0/repositories/all-findings']['get']['responses'][200]['content']['application/json']['findings'][number];

const ALL_COLUMNS = [
  'number',
  'title',
  'status',
  'severity',
  'commented_at',
  'created_by',
  'reward',
  'assigned_to',
  'labels',
  'likelihood',
  'note',
] as const;
type Column = (typeof ALL_COLUMNS)[number];
const DEFAULT_COLUMNS: Column[] = [
  'number',
  'title',
  'status',
  'severity',
  'created_by',
  'assigned_to',
  'labels',
];

/** The page's filters in the `s` syntax, which is what a saved view stores. */
function toViewFilter(search: FindingsSearch): string {
  const parts: string[] = [];
  if (search.status) parts.push(`status:${search.status}`);
  if (search.severity) parts.push(`severity:${search.severity}`);
  if (search.label) parts.push(`label:${search.label}`);
  if (search.created_by) parts.push(`created_by:${search.created_by}`);
  if (search.assigned_to) parts.push(`assigned_to:${search.assigned_to}`);
  if (search.path) parts.push(`path:${search.path}`);
  if (search.with_unread_comments === 'true') parts.push('is:unread');
  if (search.s) parts.push(search.s);
  return parts.join(' ');
}

/** The findings table over all-findings: filters, orders, `s` search, saved views, "load more". */
export function FindingsPage() {
  const search = useSearch({ from: '/findings' });
  const navigate = useNavigate({ from: '/findings' });
  const session = useSession();
  const set = (patch: Partial<FindingsSearch>) =>
    void navigate({ search: (prev) => ({ ...prev, ...patch }), replace: true });
  const findings = useInfiniteQuery({
    ...findingsQuery(search),
    placeholderData: keepPreviousData,
  });
  const viewRepos = useViewRepositories();
  const [chosenViewRepo, setViewRepo] = useState('');
  const viewRepo = chosenViewRepo || viewRepos[0]?.id || '';
  const views = useQuery({
    queryKey: ['views', viewRepo],
    enabled: Boolean(viewRepo),
    queryFn: () =>
      unwrap(
        api.GET('/api/v0/repositories/{repo_id}/finding-views', { params: { path: { repo_id: viewRepo } } }),
      ),
  });
  const activeView = views.data?.views.find((v) => v.id === search.view);
  const columns: Column[] = (activeView?.columns as Column[] | null | undefined) ?? DEFAULT_COLUMNS;
  const rows = useMemo(() => findings.data?.pages.flatMap((p) => p.findings) ?? [], [findings.data]);
  const total = findings.data?.pages[0]?.filteredTotal;
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [bulkMessage, setBulkMessage] = useState('');
  const selectedRows = rows.filter((f) => selected.has(f.id));

  return (
    <section>
      <h1>Findings</h1>
      <SearchBox value={search.s ?? ''} onSubmit={(s) => set({ s: s || undefined })} />
      <fieldset className="filters plain">
        <legend className="sr-only">Filters</legend>
        {(['status', 'severity'] as const).map((key) => {
          // The boxes show what the `s` search selects too; ticking moves its `key:` into the box.
          const fromSearch = splitSearchKey(search.s, key);
          const values = [...new Set([...(search[key]?.split(',') ?? []), ...fromSearch.values])];
          return (
            <MultiSelect
              key={key}
              label={key === 'status' ? 'Status' : 'Severity'}
              values={key === 'status' ? STATUSES : SEVERITIES}
              value={values.join(',') || undefined}
              onChange={(v) => set({ [key]: v, s: fromSearch.rest || undefined })}
            />
          );
        })}
        <AssigneeFilter value={search.assigned_to} rows={rows} onChange={(v) => set({ assigned_to: v })} />
        <label>
          Order
          <select
            value={search.order_by ?? ''}
            onChange={(e) => set({ order_by: e.target.value || undefined })}
          >
            <option value="">number (default)</option>
            {ORDERS.map((o) => (
              <option key={o} value={o}>
                {o.replace(/_/g, ' ')}
              </option>
            ))}
          </select>
        </label>
        <label>
          My role
          <select value={search.role ?? ''} onChange={(e) => set({ role: e.target.value || undefined })}>
            <option value="">any</option>
            {ROLES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </label>
        <details className="more-filters">
          <summary>More filters</summary>
          <div className="filters">
            <TextFilter label="Text (q)" value={search.q} onChange={(v) => set({ q: v })} />
            <TextFilter
              label="Labels"
              value={search.label}
              onChange={(v) => set({ label: v, unlabeled: undefined })}
            />
            <TextFilter label="Filed by" value={search.created_by} onChange={(v) => set({ created_by: v })} />
            <TextFilter label="File path" value={search.path} onChange={(v) => set({ path: v })} />
            <label>
              Repository
              <select
                value={search.repositories ?? ''}
                onChange={(e) => set({ repositories: e.target.value || undefined })}
              >
                <option value="">all</option>
                {session.repositories.map((r) => (
                  <option key={r.id} value={r.id}>
                    {r.name}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Preset
              <select
                value={search.filter_for ?? ''}
                onChange={(e) => set({ filter_for: e.target.value || undefined })}
              >
                <option value="">none</option>
                {FILTER_FOR.map((f) => (
                  <option key={f} value={f}>
                    {f.replace(/_/g, ' ')}
                  </option>
                ))}
              </select>
            </label>
            <TriState
              label="Unread comments"
              value={search.with_unread_comments}
              onChange={(v) => set({ with_unread_comments: v })}
            />
            <TriState
              label="Include duplicates"
              value={search.duplicates}
              onChange={(v) => set({ duplicates: v })}
            />
            <TriState
              label="Unlabeled only"
              value={search.unlabeled}
              onChange={(v) => set({ unlabeled: v, label: undefined })}
            />
          </div>
        </details>
      </fieldset>
      <Views
        repos={viewRepos}
        viewRepo={viewRepo}
        setViewRepo={setViewRepo}
        views={views.data?.views ?? []}
        viewsError={views.error}
        active={search.view}
        filter={toViewFilter(search)}
        open={(id, filter) =>
          // A view belongs to its repository: it lists that repository's findings only.
          void navigate({
            search: id ? { s: filter || undefined, view: id, repositories: viewRepo } : {},
            replace: false,
          })
        }
      />
      <p aria-live="polite" className="muted" data-testid="filtered-total">
        {total === undefined ? 'Loading…' : `${total} finding${total === 1 ? '' : 's'}`}
        {findings.isFetching && total !== undefined ? ' · updating…' : ''}
      </p>
      {total === 0 && toViewFilter(search) && (
        <p className="muted" data-testid="empty-hint">
          No finding matches all of <code>{toViewFilter(search)}</code> (filters combine with AND).{' '}
          <button type="button" onClick={() => void navigate({ search: {}, replace: false })}>
            Clear filters
          </button>
        </p>
      )}
      {bulkMessage && (
        <p role="status" className="small">
          {bulkMessage}
        </p>
      )}
      {selectedRows.length > 0 && (
        <BulkBar
          selected={selectedRows}
          onDone={(m) => {
            setSelected(new Set());
            setBulkMessage(m);
          }}
        />
      )}
      {findings.error ? <ErrorMessage error={findings.error} /> : null}
      <div className="table-wrap">
        <table className="findings">
          <caption className="sr-only">Findings</caption>
          <thead>
            <tr>
              <th scope="col">
                <input
                  type="checkbox"
                  aria-label="Select all shown findings"
                  checked={rows.length > 0 && selectedRows.length === rows.length}
                  onChange={(e) => setSelected(e.target.checked ? new Set(rows.map((f) => f.id)) : new Set())}
                />
              </th>
              {columns.map((c) => (
                <SortHeader
                  key={c}
                  column={c}
                  label={c.replace(/_/g, ' ')}
                  order={search.order_by}
                  onSort={(order_by) => set({ order_by })}
                />
              ))}
              <th scope="col">repository</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((f) => (
              <tr key={f.id} className={f.hasUnreadComments ? 'unread' : undefined}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select ${f.repository?.name ?? ''} #${f.number}`}
                    checked={selected.has(f.id)}
                    onChange={(e) => {
                      const next = new Set(selected);
                      if (e.target.checked) next.add(f.id);
                      else next.delete(f.id);
                      setSelected(next);
                    }}
                  />
                </td>
                {columns.map((c) => (
                  <td key={c}>
                    <Cell finding={f} column={c} />
                  </td>
                ))}
                <td>{f.repository?.name}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {findings.hasNextPage && (
        <button
          type="button"
          onClick={() => void findings.fetchNextPage()}
          disabled={findings.isFetchingNextPage}
        >
          {findings.isFetchingNextPage ? 'Loading…' : 'Load more'}
        </button>
      )}
    </section>
  );
}

function Cell({ finding: f, column }: { finding: Finding; column: Column }) {
  const link = (text: string) => (
    <Link
      to="/repositories/$repoId/findings/$findingRef"
      params={{ repoId: f.repository?.id ?? '', findingRef: String(f.number) }}
    >
      {text}
    </Link>
  );
  switch (column) {
    case 'number':
      // Numbers are per repository: the repository tells two #1 apart.
      return link(`${f.repository?.name ?? ''} #${f.number}`);
    case 'title':
      return (
        <>
          {link(f.title)}
          {f.unreadCommentsNumber > 0 && (
            <span className="badge" title="Unread comments">
              {f.unreadCommentsNumber} unread
            </span>
          )}
        </>
      );
    case 'status':
      return <Chip kind="status" value={(f as { status?: string }).status} />;
    case 'severity':
      return <Chip kind="severity" value={(f as { severity?: string }).severity} />;
    case 'commented_at':
      return <>{formatDate(f.lastCommentAt)}</>;
    case 'created_by':
      return <>{f.createdBy ? `@${f.createdBy.username}` : '—'}</>;
    case 'assigned_to':
      return <>{f.assignedTo ? `@${f.assignedTo.username}` : '—'}</>;
    case 'reward':
      return <>{f.reward ?? '—'}</>;
    case 'labels':
      return <>{f.labels.map((l) => l.name).join(', ') || '—'}</>;
    case 'note':
      return <>{f.note ?? '—'}</>;
    case 'likelihood':
      // The finding payload has no likelihood field (v0 §2.3); the column stays empty.
      return <span className="muted">—</span>;
  }
}

function TextFilter({
  label,
  value,
  onChange,
}: {
  label: string;
  value?: string;
  onChange: (v?: string) => void;
}) {
  return (
    <label>
      {label}
      <input
        defaultValue={value ?? ''}
        onBlur={(e) => onChange(e.target.value.trim() || undefined)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') onChange(e.currentTarget.value.trim() || undefined);
        }}
      />
    </label>
  );
}

function TriState({
  label,
  value,
  onChange,
}: {
  label: string;
  value?: string;
  onChange: (v?: string) => void;
}) {
  return (
    <label>
      {label}
      <select value={value ?? ''} onChange={(e) => onChange(e.target.value || undefined)}>
        <option value="">any</option>
        <option value="true">yes</option>
        <option value="false">no</option>
      </select>
    </label>
  );
}

/** A compact multi-choice filter: a list of checkboxes in a disclosure. */
function MultiSelect({
  label,
  values,
  value,
  onChange,
}: {
  label: string;
  values: readonly string[];
  value?: string;
  onChange: (v?: string) => void;
}) {
  const selected = new Set(value ? value.split(',') : []);
  return (
    <details className="multi">
      <summary>
        {label}: {selected.size === 0 ? 'any' : [...selected].join(', ').replace(/_/g, ' ')}
      </summary>
      <fieldset>
        <legend className="sr-only">{label}</legend>
        {values.map((v) => (
          <label key={v}>
            <input
              type="checkbox"
              checked={selected.has(v)}
              onChange={(e) => {
                const next = new Set(selected);
                if (e.target.checked) next.add(v);
                else next.delete(v);
                onChange(next.size ? values.filter((x) => next.has(x)).join(',') : undefined);
              }}
            />{' '}
            {v.replace(/_/g, ' ')}
          </label>
        ))}
      </fieldset>
    </details>
  );
}

/** The `s` search box with completion of keys and values (a combobox with a listbox). */
function SearchBox({ value, onSubmit }: { value: string; onSubmit: (s: string) => void }) {
  const session = useSession();
  const [text, setText] = useState(value);
  const [caret, setCaret] = useState(value.length);
  // A view opened or a link followed changes the search from outside the box.
  useEffect(() => {
    setText(value);
    setCaret(value.length);
  }, [value]);
  const [active, setActive] = useState(0);
  const [open, setOpen] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const placeCaret = usePlaceCaret(input);
  const listId = useId();
  const dynamic = {
    repository: session.repositories.map((r) => r.name),
    created_by: [session.username],
    assigned_to: [session.username],
  };
  const { start, options } = completions(text, caret, dynamic);
  const shown = open ? options : [];
  const accept = (option: string) => {
    const end = text.slice(caret).search(/\s|$/) + caret;
    const next = `${text.slice(0, start)}${option}${option.endsWith(':') ? '' : ' '}${text.slice(end).trimStart()}`;
    setText(next);
    const pos = start + option.length + (option.endsWith(':') ? 0 : 1);
    setCaret(pos);
    setActive(0);
    placeCaret(pos);
  };
  const onKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (shown.length > 0 && (e.key === 'ArrowDown' || e.key === 'ArrowUp')) {
      e.preventDefault();
      setActive((a) => (a + (e.key === 'ArrowDown' ? 1 : shown.length - 1)) % shown.length);
    } else if (shown.length > 0 && e.key === 'Tab' && !e.shiftKey) {
      e.preventDefault();
      accept(shown[active] ?? shown[0]!);
    } else if (e.key === 'Escape') {
      setOpen(false);
    } else if (e.key === 'Enter') {
      e.preventDefault();
      if (shown.length > 0 && e.altKey) accept(shown[active]!);
      else {
        setOpen(false);
        onSubmit(text.trim());
      }
    }
  };
  return (
    <form
      className="search"
      aria-label="Search findings"
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit(text.trim());
      }}
    >
      <label htmlFor="s">Search</label>
      <div className="combo">
        <input
          id="s"
          ref={input}
          role="combobox"
          aria-expanded={shown.length > 0}
          aria-controls={listId}
          aria-autocomplete="list"
          aria-activedescendant={shown.length > 0 ? `${listId}-${active}` : undefined}
          aria-describedby="s-help"
          value={text}
          autoComplete="off"
          spellCheck={false}
          placeholder="status:new severity:high,critical label:… is:unread free text"
          onChange={(e) => {
            setText(e.target.value);
            setCaret(e.target.selectionStart ?? e.target.value.length);
            setActive(0);
            setOpen(true);
          }}
          onSelect={(e) => setCaret(e.currentTarget.selectionStart ?? 0)}
          onFocus={() => setOpen(true)}
          onBlur={() => setTimeout(() => setOpen(false), 150)}
          onKeyDown={onKey}
        />
        <div
          id={listId}
          role="listbox"
          aria-label="Search suggestions"
          className="suggestions"
          hidden={shown.length === 0}
        >
          {shown.map((o, i) => (
            <div
              key={o}
              id={`${listId}-${i}`}
              role="option"
              tabIndex={-1}
              aria-selected={i === active}
              onMouseDown={(e) => {
                e.preventDefault();
                accept(o);
              }}
            >
              {o}
            </div>
          ))}
        </div>
      </div>
      <button type="submit">Search</button>
      <p id="s-help" className="muted small">
        Tab completes a key or value; Enter searches.
      </p>
    </form>
  );
}

function Views({
  repos,
  viewRepo,
  setViewRepo,
  views,
  viewsError,
  active,
  filter,
  open,
}: {
  repos: ViewRepository[];
  viewRepo: string;
  setViewRepo: (id: string) => void;
  views: Array<{ id: string; name: string; filter: string; personal: boolean; columns: string[] | null }>;
  viewsError: unknown;
  active?: string;
  filter: string;
  open: (id: string, filter: string) => void;
}) {
  const client = useQueryClient();
  const mayShare = useMayShareViews(repos.find((r) => r.id === viewRepo));
  const save = useMutation({
    mutationFn: (body: { name: string; personal: boolean; columns: Column[] }) =>
      unwrap(
        api.POST('/api/v0/repositories/{repo_id}/finding-views', {
          params: { path: { repo_id: viewRepo } },
          body: { ...body, filter, description: null },
        }),
      ),
    onSuccess: async (res) => {
      await client.invalidateQueries({ queryKey: ['views', viewRepo] });
      open(res.id, filter);
    },
  });
  if (repos.length === 0) return null;
  return (
    <details className="views">
      <summary>Saved views{active ? `: ${views.find((v) => v.id === active)?.name ?? ''}` : ''}</summary>
      <label>
        Views of
        <select value={viewRepo} onChange={(e) => setViewRepo(e.target.value)}>
          {repos.map((r) => (
            <option key={r.id} value={r.id}>
              {r.name}
            </option>
          ))}
        </select>
      </label>
      {viewsError ? <ErrorMessage error={viewsError} /> : null}
      <ul className="cards">
        {views.map((v) => (
          <li key={v.id}>
            <button type="button" onClick={() => open(v.id, v.filter)} aria-pressed={v.id === active}>
              {v.name}
            </button>{' '}
            <span className="muted">
              {v.personal ? 'personal' : 'shared'} · <code>{v.filter || '(everything)'}</code>
            </span>{' '}
            <ViewActions
              repositoryId={viewRepo}
              view={v}
              mayShare={mayShare}
              onDeleted={() => {
                if (v.id === active) open('', '');
              }}
            />
          </li>
        ))}
        {views.length === 0 && <li className="muted">No saved views for this repository.</li>}
      </ul>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          save.mutate({
            name: String(f.get('name')),
            personal: f.get('shared') !== 'on',
            columns: ALL_COLUMNS.filter((c) => f.get(`col-${c}`) === 'on'),
          });
        }}
      >
        <h3>Save the current filter as a view</h3>
        <p className="muted">
          Filter: <code>{filter || '(everything)'}</code>
        </p>
        <label>
          Name <input name="name" required />
        </label>
        {mayShare && (
          <label>
            <input type="checkbox" name="shared" /> Shared with the repository
          </label>
        )}
        <fieldset>
          <legend>Columns</legend>
          {ALL_COLUMNS.map((c) => (
            <label key={c}>
              <input type="checkbox" name={`col-${c}`} defaultChecked={DEFAULT_COLUMNS.includes(c)} />{' '}
              {c.replace(/_/g, ' ')}
            </label>
          ))}
        </fieldset>
        <button type="submit">Save view</button>
        {save.error ? <ErrorMessage error={save.error} /> : null}
      </form>
    </details>
  );
}
