import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import type { RepositoryRole } from '../../../src/access/rules.ts';
import type { paths } from '../../../src/sdk/schema';
import { ApiError, api, sessionState, unwrap } from '../api.ts';
import { RelatedFiles } from '../code-view.tsx';
import { Markdown } from '../markdown.tsx';
import { AssigneePicker } from '../pickers.tsx';
import { NotFound } from '../router.tsx';
import { SEVERITIES, type STATUSES } from '../search.ts';
import { repositoryRole, useSession } from '../session.tsx';
import { trackerName, useConnectedTrackers } from '../trackers.ts';
import { Async, Chip, ErrorMessage, formatDate } from '../ui.tsx';
import { Comments } from './comments.tsx';
import { FindingTimeline } from './finding-timeline.tsx';
import { SeverityControl, StatusControl } from './finding-triage.tsx';
import { CreateLabel } from './label-create.tsx';

type FindingPath = '/api/v0/repositories/{repo_id}/findings/{finding_ref}';
type Finding = paths[FindingPath]['get']['responses'][200]['content']['application/json'];
type Status = (typeof STATUSES)[number];
type Severity = (typeof SEVERITIES)[number];
const JUDGING = new Set(['judge', 'triager', 'admin']);

/** A finding: description, files and lines, and the edits the caller's role allows. */
export function FindingPage() {
  const { repoId, findingRef } = useParams({ from: '/repositories/$repoId/findings/$findingRef' });
  const key = ['finding', repoId, findingRef];
  const finding = useQuery({
    queryKey: key,
    queryFn: () =>
      unwrap(
        api.GET('/api/v0/repositories/{repo_id}/findings/{finding_ref}', {
          params: { path: { repo_id: repoId, finding_ref: findingRef } },
        }),
      ),
  });
  if (finding.error instanceof ApiError && finding.error.status === 404) return <NotFound />;
  return <Async query={finding}>{(f) => <FindingView finding={f} queryKey={key} />}</Async>;
}

function FindingView({ finding: f, queryKey }: { finding: Finding; queryKey: unknown[] }) {
  const session = useSession();
  const client = useQueryClient();
  const role = repositoryRole(session, f.repository.id, f.company?.id);
  const judging = role !== null && JUDGING.has(role);
  const isAuthor = f.createdBy?.userId === session.userId;
  const status = (f as { status: Status }).status;
  const severity = (f as { severity: Severity | null }).severity;
  const params = { params: { path: { repo_id: f.repository.id, finding_ref: f.id } } };
  const done = (next: Finding) => {
    client.setQueryData(queryKey, next);
    void client.invalidateQueries({ queryKey: ['all-findings'] });
  };
  const setStatus = useMutation({
    mutationFn: (v: { status: Status; reason: string | undefined; then: () => void }) =>
      unwrap(
        api.PUT('/api/v0/repositories/{repo_id}/findings/{finding_ref}/status', {
          ...params,
          body: { status: v.status, ...(v.reason ? { reason: v.reason } : {}) },
        }),
      ),
    onSuccess: (next, v) => {
      done(next);
      v.then();
      // The reason is posted as a comment.
      if (v.reason) void client.invalidateQueries({ queryKey: ['comments', f.repository.id, f.id] });
    },
  });
  const setSeverity = useMutation({
    mutationFn: (s: Severity) =>
      unwrap(
        api.PUT('/api/v0/repositories/{repo_id}/findings/{finding_ref}/severity', {
          ...params,
          body: { severity: s },
        }),
      ),
    onSuccess: done,
  });
  const assign = useMutation({
    mutationFn: (assignee: string | null) =>
      unwrap(
        api.PUT('/api/v0/repositories/{repo_id}/findings/{finding_ref}/assignee', {
          ...params,
          body: { assignee },
        }),
      ),
    onSuccess: done,
  });
  const labels = useMutation({
    mutationFn: (body: { add?: string[]; remove?: string[] }) =>
      unwrap(api.PATCH('/api/v0/repositories/{repo_id}/findings/{finding_ref}/labels', { ...params, body })),
    onSuccess: done,
  });
  const duplicate = useMutation({
    mutationFn: (duplicateOf: string | null) =>
      unwrap(
        api.PUT('/api/v0/repositories/{repo_id}/findings/{finding_ref}/duplicate-of', {
          ...params,
          body: { duplicateOf },
        }),
      ),
    onSuccess: done,
  });
  const repoLabels = useQuery({
    queryKey: ['labels', f.repository.id],
    queryFn: () =>
      unwrap(
        api.GET('/api/v0/repositories/{repo_id}/labels', { params: { path: { repo_id: f.repository.id } } }),
      ),
  });
  const companyUser =
    session.permissions.includes('admin') || session.companies.some((c) => c.id === f.company?.id && c.role);

  return (
    <article className="finding">
      <p className="muted">
        <Link to="/repositories/$repoId" params={{ repoId: f.repository.id }}>
          {f.repository.name}
        </Link>{' '}
        · #{f.number} · filed by @{f.createdBy?.username ?? '—'} on {formatDate(f.createdAt)}
        {role ? ` · your role: ${role}` : ''}
      </p>
      <h1>
        #{f.number} {f.title}
      </h1>
      <p>
        <Chip kind="status" value={status} /> <Chip kind="severity" value={severity} />{' '}
        {f.locked && <span className="chip">locked</span>}
      </p>

      <div className="grid">
        <div>
          <h2>Description</h2>
          <Markdown source={f.description} className="description" />
          <h2>Files and lines</h2>
          <RelatedFiles files={f.relatedFiles} repositoryId={f.repository.id} />
          <Comments
            finding={{
              id: f.id,
              repositoryId: f.repository.id,
              companyId: f.company?.id,
              createdBy: f.createdBy?.userId ?? null,
            }}
          />
          <FindingTimeline
            repositoryId={f.repository.id}
            findingId={f.id}
            companyId={f.company?.id}
            version={f.lastUpdatedAt}
          />
        </div>

        <aside aria-label="Triage">
          <h2>Triage</h2>
          <StatusControl
            role={role as RepositoryRole | null}
            status={status}
            isAuthor={isAuthor}
            busy={setStatus.isPending}
            error={setStatus.error}
            onChange={(s, reason, then) => setStatus.mutate({ status: s, reason, then })}
          />

          {judging ? (
            <SeverityControl
              key={severity ?? ''}
              severity={severity}
              allowed={f.repository.allowedSeverities?.length ? f.repository.allowedSeverities : SEVERITIES}
              busy={setSeverity.isPending}
              error={setSeverity.error}
              onApply={(s) => setSeverity.mutate(s)}
            />
          ) : (
            <div className="field">
              <span className="label">Severity</span>
              <p id="severity">
                <Chip kind="severity" value={severity} />
              </p>
            </div>
          )}

          <div className="field">
            <span className="label">Assignee</span>
            <p>{f.assignedTo ? `@${f.assignedTo.username}` : 'nobody'}</p>
            {role !== null && role !== 'reviewer' && (
              <AssigneePicker
                key={f.assignedTo?.username ?? ''}
                repositoryId={f.repository.id}
                findingId={f.id}
                current={f.assignedTo?.username ?? null}
                busy={assign.isPending}
                onAssign={(username) => assign.mutate(username)}
              />
            )}
            {assign.error ? <ErrorMessage error={assign.error} /> : null}
          </div>

          <div className="field">
            <span className="label">Labels</span>
            <ul className="labels">
              {f.labels.map((l) => (
                <li key={l.id}>
                  <span className="chip">{l.name}</span>
                  {judging && (
                    <button
                      type="button"
                      onClick={() => labels.mutate({ remove: [l.id] })}
                      aria-label={`Remove label ${l.name}`}
                    >
                      ×
                    </button>
                  )}
                </li>
              ))}
              {f.labels.length === 0 && <li className="muted">none</li>}
            </ul>
            {judging && repoLabels.data && (
              <label>
                Add label
                <select
                  value=""
                  onChange={(e) => {
                    if (e.target.value) labels.mutate({ add: [e.target.value] });
                  }}
                >
                  <option value="">choose…</option>
                  {repoLabels.data.labels
                    .filter((l) => !l.archivedAt && !f.labels.some((x) => x.id === l.id))
                    .map((l) => (
                      <option key={l.id} value={l.id}>
                        {l.name}
                      </option>
                    ))}
                </select>
              </label>
            )}
            {role === 'admin' && (
              <CreateLabel repositoryId={f.repository.id} onCreated={(id) => labels.mutate({ add: [id] })} />
            )}
            {labels.error ? <ErrorMessage error={labels.error} /> : null}
          </div>

          <div className="field">
            <span className="label">Duplicates</span>
            {f.duplicateOf && (
              <p>
                Duplicate of{' '}
                <Link
                  to="/repositories/$repoId/findings/$findingRef"
                  params={{ repoId: f.repository.id, findingRef: String(f.duplicateOf.number) }}
                >
                  #{f.duplicateOf.number} {f.duplicateOf.title}
                </Link>
              </p>
            )}
            {f.duplicates.length > 0 && (
              <ul>
                {f.duplicates.map((d) => (
                  <li key={d.id}>
                    <Link
                      to="/repositories/$repoId/findings/$findingRef"
                      params={{ repoId: f.repository.id, findingRef: String(d.number) }}
                    >
                      #{d.number} {d.title}
                    </Link>
                  </li>
                ))}
              </ul>
            )}
            {f.duplicateGroup && (
              <p className="muted">
                Group: {f.duplicateGroup.description || '—'} (
                {f.duplicateGroup.findings.map((x) => `#${x.number}`).join(', ')})
              </p>
            )}
            {!f.duplicateOf && f.duplicates.length === 0 && <p className="muted">No duplicates.</p>}
            {judging && (
              <form
                className="inline-form"
                onSubmit={(e) => {
                  e.preventDefault();
                  const v = String(new FormData(e.currentTarget).get('dup') ?? '')
                    .trim()
                    .replace(/^#/, '');
                  duplicate.mutate(v || null);
                }}
              >
                <label>
                  Duplicate of <input name="dup" placeholder="number (empty: not a duplicate)" />
                </label>
                <button type="submit">Mark</button>
              </form>
            )}
            {duplicate.error ? <ErrorMessage error={duplicate.error} /> : null}
          </div>

          <div className="field">
            <span className="label">Details</span>
            <dl>
              <dt>Reward</dt>
              <dd>{f.reward ?? '—'}</dd>
              <dt>Category</dt>
              <dd>{f.category ?? '—'}</dd>
              <dt>Fixed by</dt>
              <dd>{f.fixedBy.join(', ') || '—'}</dd>
              <dt>Note</dt>
              <dd>{f.note ?? '—'}</dd>
              <dt>Last update</dt>
              <dd>{formatDate(f.lastUpdatedAt)}</dd>
            </dl>
          </div>
          {companyUser && f.company && <Tickets findingId={f.id} companyId={f.company.id} />}
        </aside>
      </div>
    </article>
  );
}

/** Tickets of the finding in the company's trackers: link an existing issue or send a new one. */
export function Tickets({ findingId, companyId }: { findingId: string; companyId: string }) {
  const client = useQueryClient();
  sessionState.companyId = companyId;
  const key = ['tickets', findingId];
  const tickets = useQuery({
    queryKey: key,
    queryFn: () =>
      unwrap(api.GET('/api/scanner/v1/findings/{findingId}/tickets', { params: { path: { findingId } } })),
  });
  const trackers = useConnectedTrackers(companyId);
  const connected = trackers.data?.items ?? [];
  const [chosen, setProvider] = useState<'tracker_a' | 'tracker_b' | null>(null);
  const provider = chosen ?? connected[0]?.provider ?? 'tracker_a';
  const link = useMutation({
    mutationFn: (issueRef: string) =>
      unwrap(
        api.POST('/api/scanner/v1/findings/{findingId}/tickets', {
          params: { path: { findingId } },
          body: { provider, issueRef },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: key }),
  });
  const send = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/api/scanner/v1/findings/{findingId}/issue-trackers/{provider}', {
          params: { path: { findingId, provider } },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: key }),
  });
  return (
    <div className="field">
      <span className="label">Tickets</span>
      <Async query={tickets}>
        {({ tickets: list }) => (
          <ul>
            {list.map((t) => (
              <li key={t.id}>
                <a href={t.url} rel="noreferrer noopener" target="_blank">
                  {t.key}
                </a>{' '}
                <span className="muted">
                  {trackerName(t.provider)} · {t.source === 'linked' ? 'linked' : 'created here'}
                  {t.status ? ` · ${t.status}` : ''}
                </span>
              </li>
            ))}
            {list.length === 0 && <li className="muted">No tickets.</li>}
          </ul>
        )}
      </Async>
      {connected.length === 0 ? (
        <p className="muted small" data-testid="no-tracker">
          {trackers.isPending
            ? 'Loading trackers…'
            : 'No issue tracker is connected to this company; a company manager connects one under Integrations.'}
        </p>
      ) : (
        <>
          {connected.length > 1 && (
            <label>
              Tracker
              <select value={provider} onChange={(e) => setProvider(e.target.value as typeof provider)}>
                {[...new Set(connected.map((c) => c.provider))].map((p) => (
                  <option key={p} value={p}>
                    {trackerName(p)}
                  </option>
                ))}
              </select>
            </label>
          )}
          <div className="button-row">
            <button type="button" onClick={() => send.mutate()} disabled={send.isPending}>
              {send.isPending ? 'Sending…' : `Send to ${trackerName(provider)}`}
            </button>
          </div>
          {send.error ? <ErrorMessage error={send.error} /> : null}
          <form
            className="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              link.mutate(String(new FormData(e.currentTarget).get('issueRef') ?? ''));
            }}
          >
            <label>
              Link issue <input name="issueRef" required placeholder="ENG-123 or URL" />
            </label>
            <button type="submit">Link</button>
          </form>
        </>
      )}
      {link.error ? <ErrorMessage error={link.error} /> : null}
    </div>
  );
}
