import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type KeyboardEvent, useId, useRef, useState } from 'react';
import {
  type CommentVisibility,
  creatableVisibilities,
  replyVisibilityAllowed,
} from '../../../src/access/rules.ts';
import type { paths } from '../../../src/sdk/schema';
import { api, unwrap } from '../api.ts';
import { Markdown } from '../markdown.tsx';
import { unreachedMentions, useFindingPeople } from '../pickers.tsx';
import { repositoryRole, useSession } from '../session.tsx';
import { Async, ErrorMessage, formatDate, usePlaceCaret } from '../ui.tsx';

type ThreadsPath = '/api/v0/repositories/{repo_id}/findings/{finding_ref}/comments';
type Thread = paths[ThreadsPath]['get']['responses'][200]['content']['application/json']['threads'][number];
type Comment = Thread['replies'][number];

const VISIBILITY_HELP: Record<CommentVisibility, string> = {
  public: 'everyone who sees the finding',
  private: 'its author, the company, judges, triagers and admins',
  internal: 'the company and admins',
  hidden: 'admins only',
};

interface FindingRef {
  id: string;
  repositoryId: string;
  companyId: string | undefined;
  createdBy: string | null;
}

/**
 * The comment threads of a finding: read (which marks them read), comment, reply, edit and delete
 * one's own, with `@` completion. Comments unread when the page opened keep their marker.
 */
export function Comments({ finding }: { finding: FindingRef }) {
  const session = useSession();
  const client = useQueryClient();
  const key = ['comments', finding.repositoryId, finding.id];
  const path = { params: { path: { repo_id: finding.repositoryId, finding_ref: finding.id } } };
  // Every comment seen unread during this visit: a refetch after a write reports them read.
  const unreadSeen = useRef(new Set<string>());
  const threads = useQuery({
    queryKey: key,
    queryFn: async () => {
      const data = await unwrap(
        api.GET('/api/v0/repositories/{repo_id}/findings/{finding_ref}/comments', path),
      );
      for (const t of data.threads) {
        for (const c of [t, ...t.replies]) if (c.unread) unreadSeen.current.add(c.id);
      }
      // Listing marked them read: the tables' unread counts change.
      void client.invalidateQueries({ queryKey: ['all-findings'] });
      return data;
    },
  });

  const role = repositoryRole(session, finding.repositoryId, finding.companyId);
  const reader = {
    platformAdmin: session.permissions.includes('admin'),
    companySide:
      session.permissions.includes('read_all_companies') ||
      session.companies.some((c) => c.id === finding.companyId && c.role),
    repositoryRole: (session.repositories.find((r) => r.id === finding.repositoryId)?.role ??
      null) as Parameters<typeof creatableVisibilities>[0],
    isFindingAuthor: finding.createdBy === session.userId,
  };
  const creatable = creatableVisibilities(role as Parameters<typeof creatableVisibilities>[0], reader);
  const mayModerate = role === 'admin';
  const candidates = useMentionCandidates(finding.repositoryId, finding.id, role === 'reviewer');
  const refresh = () => client.invalidateQueries({ queryKey: key });

  return (
    <section aria-labelledby="comments-h" className="comments">
      <h2 id="comments-h">Comments</h2>
      <Async query={threads}>
        {({ threads: list }) => (
          <>
            {list.length === 0 && <p className="muted">No comments yet.</p>}
            <ol className="threads">
              {list.map((t) => (
                <li key={t.id} className="thread">
                  <CommentItem
                    comment={t}
                    finding={finding}
                    unread={unreadSeen.current.has(t.id)}
                    mine={t.author?.userId === session.userId}
                    mayDelete={mayModerate || t.author?.userId === session.userId}
                    candidates={candidates}
                    onChanged={refresh}
                  />
                  {t.replies.length > 0 && (
                    <ol
                      className="replies"
                      aria-label={`Replies to ${t.author?.username ?? 'a deleted user'}`}
                    >
                      {t.replies.map((r) => (
                        <li key={r.id}>
                          <CommentItem
                            comment={r}
                            finding={finding}
                            unread={unreadSeen.current.has(r.id)}
                            mine={r.author?.userId === session.userId}
                            mayDelete={mayModerate || r.author?.userId === session.userId}
                            candidates={candidates}
                            onChanged={refresh}
                          />
                        </li>
                      ))}
                    </ol>
                  )}
                  {creatable.some((v) => replyVisibilityAllowed(t.visibility, v)) && !t.deletedAt && (
                    <ReplyBox
                      thread={t}
                      finding={finding}
                      visibilities={creatable.filter((v) => replyVisibilityAllowed(t.visibility, v))}
                      candidates={candidates}
                      onDone={refresh}
                    />
                  )}
                </li>
              ))}
            </ol>
          </>
        )}
      </Async>
      {creatable.length > 0 ? (
        <Composer
          finding={finding}
          parent={null}
          visibilities={creatable}
          candidates={candidates}
          onDone={refresh}
          label="New comment"
        />
      ) : (
        <p className="muted">You may read but not comment on this finding.</p>
      )}
    </section>
  );
}

/**
 * `@` completion candidates: `@project`, and exactly the users an `@username` reaches on this
 * finding (those who see it, by the server's access policy: GET …/people).
 */
function useMentionCandidates(repositoryId: string, findingId: string, reviewer: boolean): Candidate[] {
  const people = useFindingPeople(repositoryId, findingId);
  const out: Candidate[] = [
    {
      name: 'project',
      hint: reviewer ? 'the company’s users; spends one of your pings' : 'the company’s users',
    },
  ];
  for (const p of people.data?.people ?? []) {
    if (!p.mentionable) continue;
    out.push({
      name: p.username,
      hint: `${p.name}${p.role ? `, ${p.role}` : ''}${p.isFindingAuthor ? ', author' : ''}`,
    });
  }
  return out;
}

interface Candidate {
  name: string;
  hint: string;
}

function CommentItem({
  comment: c,
  finding,
  unread,
  mine,
  mayDelete,
  candidates,
  onChanged,
}: {
  comment: Comment;
  finding: FindingRef;
  unread: boolean;
  mine: boolean;
  mayDelete: boolean;
  candidates: Candidate[];
  onChanged: () => void;
}) {
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const path = {
    params: { path: { repo_id: finding.repositoryId, finding_ref: finding.id, comment_id: c.id } },
  };
  const edit = useMutation({
    mutationFn: (content: string) =>
      unwrap(
        api.PATCH('/api/v0/repositories/{repo_id}/findings/{finding_ref}/comments/{comment_id}', {
          ...path,
          body: { content },
        }),
      ),
    onSuccess: () => {
      setEditing(false);
      onChanged();
    },
  });
  const remove = useMutation({
    mutationFn: () =>
      unwrap(api.DELETE('/api/v0/repositories/{repo_id}/findings/{finding_ref}/comments/{comment_id}', path)),
    onSuccess: () => {
      setConfirming(false);
      onChanged();
    },
  });
  const deleted = c.deletedAt !== null;
  return (
    <article
      className={`comment${unread ? ' unread' : ''}`}
      aria-label={`Comment by ${c.author?.username ?? 'a deleted user'}`}
    >
      <header className="comment-head">
        <strong>{c.author ? `@${c.author.username}` : 'deleted user'}</strong>
        <span className="muted">{formatDate(c.createdAt)}</span>
        <span className={`chip visibility-${c.visibility}`} title={VISIBILITY_HELP[c.visibility]}>
          {c.visibility}
        </span>
        {c.editedAt && !deleted && <span className="muted small">edited {formatDate(c.editedAt)}</span>}
        {unread && <span className="badge unread-marker">unread</span>}
      </header>
      {deleted ? (
        <p className="muted">This comment was deleted.</p>
      ) : editing ? (
        <MentionForm
          initial={c.content ?? ''}
          candidates={candidates}
          label="Edit your comment"
          submitLabel="Save"
          busy={edit.isPending}
          onSubmit={(content) => edit.mutate(content)}
          onCancel={() => setEditing(false)}
        />
      ) : (
        <Markdown source={c.content ?? ''} className="comment-body" />
      )}
      {!deleted && !editing && (mine || mayDelete) && (
        <div className="button-row">
          {mine && (
            <button type="button" onClick={() => setEditing(true)}>
              Edit
            </button>
          )}
          {mayDelete &&
            (confirming ? (
              <>
                <button type="button" onClick={() => remove.mutate()} disabled={remove.isPending}>
                  Delete for good
                </button>
                <button type="button" onClick={() => setConfirming(false)}>
                  Keep it
                </button>
              </>
            ) : (
              <button type="button" onClick={() => setConfirming(true)}>
                Delete
              </button>
            ))}
        </div>
      )}
      {edit.error ? <ErrorMessage error={edit.error} /> : null}
      {remove.error ? <ErrorMessage error={remove.error} /> : null}
    </article>
  );
}

function ReplyBox({
  thread,
  finding,
  visibilities,
  candidates,
  onDone,
}: {
  thread: Thread;
  finding: FindingRef;
  visibilities: CommentVisibility[];
  candidates: Candidate[];
  onDone: () => void;
}) {
  const [open, setOpen] = useState(false);
  if (!open)
    return (
      <div className="button-row">
        <button type="button" onClick={() => setOpen(true)}>
          Reply
        </button>
      </div>
    );
  return (
    <Composer
      finding={finding}
      parent={thread}
      visibilities={visibilities}
      candidates={candidates}
      onDone={() => {
        setOpen(false);
        onDone();
      }}
      onCancel={() => setOpen(false)}
      label={`Reply to @${thread.author?.username ?? 'deleted user'}`}
    />
  );
}

/** A new comment or reply: its text with `@` completion and its visibility. */
function Composer({
  finding,
  parent,
  visibilities,
  candidates,
  onDone,
  onCancel,
  label,
}: {
  finding: FindingRef;
  parent: Thread | null;
  visibilities: CommentVisibility[];
  candidates: Candidate[];
  onDone: () => void;
  onCancel?: () => void;
  label: string;
}) {
  const [visibility, setVisibility] = useState<CommentVisibility>(
    parent && visibilities.includes(parent.visibility) ? parent.visibility : (visibilities[0] ?? 'public'),
  );
  const [formKey, setFormKey] = useState(0);
  const selectId = useId();
  const post = useMutation({
    mutationFn: (content: string) =>
      unwrap(
        api.POST('/api/v0/repositories/{repo_id}/findings/{finding_ref}/comment', {
          params: { path: { repo_id: finding.repositoryId, finding_ref: finding.id } },
          body: { content, visibility, ...(parent ? { parent: parent.id } : {}) },
        }),
      ),
    onSuccess: () => {
      setFormKey((k) => k + 1);
      onDone();
    },
  });
  return (
    <div className="composer">
      <MentionForm
        key={formKey}
        initial=""
        candidates={candidates}
        label={label}
        submitLabel={parent ? 'Reply' : 'Comment'}
        busy={post.isPending}
        onSubmit={(content) => post.mutate(content)}
        onCancel={onCancel}
        extra={
          <label htmlFor={selectId}>
            Visibility{' '}
            <select
              id={selectId}
              value={visibility}
              onChange={(e) => setVisibility(e.target.value as CommentVisibility)}
            >
              {visibilities.map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </select>{' '}
            <span className="muted small">read by {VISIBILITY_HELP[visibility]}</span>
          </label>
        }
      />
      {post.error ? <ErrorMessage error={post.error} /> : null}
    </div>
  );
}

/** The `@name` being typed just before the caret, if any. */
function mentionAt(text: string, caret: number): { start: number; prefix: string } | null {
  const match = /(^|[^\p{L}\p{N}_.@/-])@([A-Za-z0-9_.-]{0,39})$/u.exec(text.slice(0, caret));
  if (!match) return null;
  return { start: caret - (match[2]?.length ?? 0) - 1, prefix: (match[2] ?? '').toLowerCase() };
}

/** A textarea whose `@` opens a list of the candidates; arrows choose, Enter or Tab accept. */
function MentionForm({
  initial,
  candidates,
  label,
  submitLabel,
  busy,
  onSubmit,
  onCancel,
  extra,
}: {
  initial: string;
  candidates: Candidate[];
  label: string;
  submitLabel: string;
  busy: boolean;
  onSubmit: (content: string) => void;
  onCancel?: (() => void) | undefined;
  extra?: React.ReactNode;
}) {
  const id = useId();
  const listId = `${id}-mentions`;
  const area = useRef<HTMLTextAreaElement>(null);
  const placeCaret = usePlaceCaret(area);
  const [text, setText] = useState(initial);
  const [caret, setCaret] = useState(initial.length);
  const [active, setActive] = useState(0);
  const [dismissed, setDismissed] = useState(false);
  // `@names` that reach no one, shown before posting; a second submit posts anyway.
  const [unreached, setUnreached] = useState<string[]>([]);
  const at = mentionAt(text, caret);
  const shown =
    at && !dismissed ? candidates.filter((c) => c.name.toLowerCase().startsWith(at.prefix)).slice(0, 8) : [];
  const accept = (c: Candidate) => {
    if (!at) return;
    const next = `${text.slice(0, at.start)}@${c.name} ${text.slice(caret)}`;
    const pos = at.start + c.name.length + 2;
    setText(next);
    setCaret(pos);
    placeCaret(pos);
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (shown.length === 0) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      setActive((a) => (a + (e.key === 'ArrowDown' ? 1 : shown.length - 1)) % shown.length);
    } else if ((e.key === 'Enter' || e.key === 'Tab') && !e.shiftKey) {
      e.preventDefault();
      accept(shown[active] ?? shown[0]!);
    } else if (e.key === 'Escape') {
      e.preventDefault();
      setDismissed(true);
    }
  };
  return (
    <form
      className="stack mention-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (!text.trim()) return;
        const missing = unreachedMentions(
          text,
          candidates.map((c) => c.name),
        );
        if (missing.length > 0 && missing.join() !== unreached.join()) {
          setUnreached(missing);
          return;
        }
        setUnreached([]);
        onSubmit(text);
      }}
    >
      <label htmlFor={id}>{label}</label>
      <div className="combo">
        <textarea
          id={id}
          ref={area}
          rows={4}
          value={text}
          required
          maxLength={65536}
          aria-autocomplete="list"
          aria-controls={listId}
          aria-activedescendant={shown.length > 0 ? `${listId}-${active}` : undefined}
          aria-describedby={`${id}-help`}
          onChange={(e) => {
            setText(e.target.value);
            setCaret(e.target.selectionStart ?? e.target.value.length);
            setActive(0);
            setDismissed(false);
          }}
          onSelect={(e) => setCaret(e.currentTarget.selectionStart ?? 0)}
          onBlur={() => setTimeout(() => setDismissed(true), 150)}
          onFocus={() => setDismissed(false)}
          onKeyDown={onKey}
        />
        <div
          id={listId}
          role="listbox"
          aria-label="People to mention"
          className="suggestions"
          hidden={shown.length === 0}
        >
          {shown.map((c, i) => (
            <div
              key={c.name}
              id={`${listId}-${i}`}
              role="option"
              tabIndex={-1}
              aria-selected={i === active}
              onMouseDown={(e) => {
                e.preventDefault();
                accept(c);
              }}
            >
              @{c.name} <span className="small">{c.hint}</span>
            </div>
          ))}
        </div>
      </div>
      <p id={`${id}-help`} className="muted small">
        Markdown. Type @ to mention: @project pings the company’s users, @username a reviewer, judge or
        triager of the repository.
      </p>
      {unreached.length > 0 && (
        <p className="warning" role="alert">
          {unreached.map((n) => `@${n}`).join(', ')} cannot see this finding or cannot be mentioned here, so{' '}
          they will not be notified. Submit again to post anyway.
        </p>
      )}
      <div className="button-row">
        {extra}
        <button type="submit" disabled={busy}>
          {busy ? 'Sending…' : unreached.length > 0 ? `${submitLabel} anyway` : submitLabel}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
