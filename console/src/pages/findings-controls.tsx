import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { statusChangeNeedsReason } from '../../../src/access/rules.ts';
import type { paths } from '../../../src/sdk/schema';
import { api, unwrap } from '../api.ts';
import { SEVERITIES, STATUSES } from '../search.ts';
import { useSession } from '../session.tsx';
import { ErrorMessage } from '../ui.tsx';

type Finding =
  paths['/api/v0/repositories/all-findings']['get']['responses'][200]['content']['application/json']['findings'][number];

/**
 * The values of one `key:` of an `s` search and the search without it: `status:confirmed foo`
 * gives `{ values: ['confirmed'], rest: 'foo' }`. The filter boxes show what the search selects.
 */
export function splitSearchKey(s: string | undefined, key: string): { values: string[]; rest: string } {
  const values: string[] = [];
  const rest: string[] = [];
  for (const token of (s ?? '').split(/\s+/).filter(Boolean)) {
    if (token.toLowerCase().startsWith(`${key}:`)) values.push(...token.slice(key.length + 1).split(','));
    else rest.push(token);
  }
  return { values: values.filter(Boolean), rest: rest.join(' ') };
}

/** The column → order pairs of the all-findings listing (v0 §4.4) that a header can sort by. */
export const SORTABLE: Record<string, string> = {
  number: 'number',
  status: 'status',
  severity: 'severity',
  created_by: 'username',
  reward: 'reward',
  commented_at: 'last_comment',
};

/** A column header that sorts the table by its column (ascending, then descending). */
export function SortHeader({
  column,
  label,
  order,
  onSort,
}: {
  column: string;
  label: string;
  order: string | undefined;
  onSort: (order: string | undefined) => void;
}) {
  const base = SORTABLE[column];
  if (!base) return <th scope="col">{label}</th>;
  const current = order ?? 'number_asc';
  const dir = current === `${base}_asc` ? 'ascending' : current === `${base}_desc` ? 'descending' : 'none';
  const next = dir === 'ascending' ? `${base}_desc` : `${base}_asc`;
  return (
    <th scope="col" aria-sort={dir}>
      <button
        type="button"
        className="sort"
        onClick={() => onSort(next === 'number_asc' ? undefined : next)}
        title={`Sort by ${label} ${dir === 'ascending' ? 'descending' : 'ascending'}`}
      >
        {label} <span aria-hidden="true">{dir === 'ascending' ? '▲' : dir === 'descending' ? '▼' : '↕'}</span>
      </button>
    </th>
  );
}

/**
 * The assignee filter: a list of the people the caller can name (themselves, and the assignees
 * and authors of the findings shown), or any username typed; "nobody" is not a filter the API has.
 */
export function AssigneeFilter({
  value,
  rows,
  onChange,
}: {
  value: string | undefined;
  rows: Finding[];
  onChange: (v?: string) => void;
}) {
  const session = useSession();
  const id = useId();
  const names = new Set<string>([session.username]);
  for (const f of rows) {
    if (f.assignedTo) names.add(f.assignedTo.username);
  }
  return (
    <label>
      Assignee
      <input
        key={value ?? ''}
        list={`${id}-people`}
        defaultValue={value ?? ''}
        placeholder="anyone"
        onChange={(e) => {
          // A name chosen from the list applies at once; typed names apply on Enter or leaving.
          if (names.has(e.target.value)) onChange(e.target.value);
        }}
        onBlur={(e) => onChange(e.target.value.trim() || undefined)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') onChange(e.currentTarget.value.trim() || undefined);
        }}
      />
      <datalist id={`${id}-people`}>
        {[...names].sort().map((n) => (
          <option key={n} value={n}>
            {n === session.username ? `${n} (me)` : n}
          </option>
        ))}
      </datalist>
    </label>
  );
}

/**
 * Bulk triage of the selected findings: status (with a reason when needed), severity, assignee
 * and label, applied all or nothing by the server (POST …/findings/bulk-triage).
 */
export function BulkBar({ selected, onDone }: { selected: Finding[]; onDone: (message: string) => void }) {
  const client = useQueryClient();
  const [status, setStatus] = useState('');
  const [reason, setReason] = useState('');
  const [severity, setSeverity] = useState('');
  const [assignee, setAssignee] = useState('');
  const [label, setLabel] = useState('');
  const repositories = [...new Set(selected.map((f) => f.repository?.id ?? ''))];
  const oneRepository = repositories.length === 1 ? repositories[0] : undefined;
  const labels = useQuery({
    queryKey: ['labels', oneRepository],
    enabled: Boolean(oneRepository),
    queryFn: () =>
      unwrap(
        api.GET('/api/v0/repositories/{repo_id}/labels', {
          params: { path: { repo_id: oneRepository ?? '' } },
        }),
      ),
  });
  const needsReason =
    status !== '' &&
    selected.some((f) =>
      statusChangeNeedsReason(
        (f as { status: (typeof STATUSES)[number] }).status,
        status as (typeof STATUSES)[number],
      ),
    );
  const apply = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/v0/repositories/findings/bulk-triage', {
          body: {
            findings: selected.map((f) => ({ repositoryId: f.repository?.id ?? '', finding: f.id })),
            ...(status ? { status: status as (typeof STATUSES)[number] } : {}),
            ...(status && reason.trim() ? { reason: reason.trim() } : {}),
            ...(severity ? { severity: severity as (typeof SEVERITIES)[number] } : {}),
            ...(assignee === '-' ? { assignee: null } : assignee.trim() ? { assignee: assignee.trim() } : {}),
            ...(label ? { addLabels: [label] } : {}),
          },
        }),
      ),
    onSuccess: (res) => {
      setStatus('');
      setReason('');
      setSeverity('');
      setAssignee('');
      setLabel('');
      void client.invalidateQueries({ queryKey: ['all-findings'] });
      onDone(`${res.findings.length} finding${res.findings.length === 1 ? '' : 's'} updated.`);
    },
  });
  const nothing = !status && !severity && !assignee.trim() && !label;
  return (
    <form
      className="bulk-bar"
      aria-label="Bulk triage"
      onSubmit={(e) => {
        e.preventDefault();
        apply.mutate();
      }}
    >
      <p>
        <strong data-testid="selected-count">{selected.length} selected</strong>
      </p>
      <label>
        Status
        <select value={status} onChange={(e) => setStatus(e.target.value)}>
          <option value="">unchanged</option>
          {STATUSES.filter((s) => s !== 'duplicate').map((s) => (
            <option key={s} value={s}>
              {s.replace(/_/g, ' ')}
            </option>
          ))}
        </select>
      </label>
      {status && (
        <label>
          Reason{needsReason ? ' (required)' : ''}
          <input value={reason} required={needsReason} onChange={(e) => setReason(e.target.value)} />
        </label>
      )}
      <label>
        Severity
        <select value={severity} onChange={(e) => setSeverity(e.target.value)}>
          <option value="">unchanged</option>
          {SEVERITIES.map((s) => (
            <option key={s} value={s}>
              {s.replace(/_/g, ' ')}
            </option>
          ))}
        </select>
      </label>
      <label>
        Assign to
        <input
          value={assignee}
          placeholder="username, - for nobody"
          onChange={(e) => setAssignee(e.target.value)}
        />
      </label>
      {oneRepository ? (
        <label>
          Add label
          <select value={label} onChange={(e) => setLabel(e.target.value)}>
            <option value="">none</option>
            {(labels.data?.labels ?? [])
              .filter((l) => !l.archivedAt)
              .map((l) => (
                <option key={l.id} value={l.id}>
                  {l.name}
                </option>
              ))}
          </select>
        </label>
      ) : (
        <p className="muted small">Labels: select findings of one repository.</p>
      )}
      <button type="submit" disabled={apply.isPending || nothing || (needsReason && !reason.trim())}>
        {apply.isPending ? 'Applying…' : `Apply to ${selected.length}`}
      </button>
      {apply.error ? <ErrorMessage error={apply.error} /> : null}
    </form>
  );
}
