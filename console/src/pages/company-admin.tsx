import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api.ts';
import { CopyButton } from '../copy-button.tsx';
import { Async, ErrorMessage, formatDate } from '../ui.tsx';

/** A mutation whose error is shown beside the form that caused it. */
function useAction<A>(fn: (arg: A) => Promise<unknown>, invalidate: unknown[]) {
  const client = useQueryClient();
  return useMutation({ mutationFn: fn, onSuccess: () => client.invalidateQueries({ queryKey: invalidate }) });
}

const path = (company_id: string) => ({ params: { path: { company_id } } });
const pathC = (companyId: string) => ({ params: { path: { companyId } } });

export function Users({ companyId, manages }: { companyId: string; manages: boolean }) {
  const [q, setQ] = useState('');
  const [includeAll, setIncludeAll] = useState(false);
  const key = ['users', companyId];
  const users = useQuery({
    queryKey: [...key, q, includeAll],
    queryFn: () =>
      unwrap(
        api.GET('/api/v0/companies/{company_id}/users', {
          params: { path: { company_id: companyId }, query: { q: q || undefined, include_all: includeAll } },
        }),
      ),
  });
  const invite = useAction(
    (body: { username?: string; name: string; email?: string; role: 'manager' | 'member' }) =>
      unwrap(api.POST('/api/v0/companies/{company_id}/users', { ...path(companyId), body })),
    ['invitations', companyId],
  );
  const setRole = useAction(
    ({ userId, role }: { userId: string; role: 'manager' | 'member' }) =>
      unwrap(
        api.PATCH('/api/v0/companies/{company_id}/users/{user_id}', {
          params: { path: { company_id: companyId, user_id: userId } },
          body: { role },
        }),
      ),
    key,
  );
  const toggle = useAction(
    ({ userId, disable }: { userId: string; disable: boolean }) =>
      disable
        ? unwrap(
            api.POST('/api/v0/companies/{company_id}/users/{user_id}/disable', {
              params: { path: { company_id: companyId, user_id: userId } },
            }),
          )
        : unwrap(
            api.POST('/api/v0/companies/{company_id}/users/{user_id}/reenable', {
              params: { path: { company_id: companyId, user_id: userId } },
            }),
          ),
    key,
  );
  return (
    <section aria-labelledby="users-h">
      <h2 id="users-h">Users</h2>
      <div className="filters">
        <label>
          Search <input type="search" value={q} onChange={(e) => setQ(e.target.value)} />
        </label>
        <label>
          <input type="checkbox" checked={includeAll} onChange={(e) => setIncludeAll(e.target.checked)} />{' '}
          Include disabled
        </label>
      </div>
      <Async query={users}>
        {({ users: list }) => (
          <div className="table-wrap">
            <table>
              <caption className="sr-only">Company users</caption>
              <thead>
                <tr>
                  <th scope="col">User</th>
                  <th scope="col">Email</th>
                  <th scope="col">Joined</th>
                  <th scope="col">State</th>
                  {manages && <th scope="col">Actions</th>}
                </tr>
              </thead>
              <tbody>
                {list.map((u) => {
                  const role = (u as { companyRole?: 'manager' | 'member' }).companyRole;
                  return (
                    <tr key={u.userId}>
                      <td>
                        {u.name} <span className="muted">@{u.username}</span>{' '}
                        {role && <span className="chip">{role}</span>}
                      </td>
                      <td>{u.email ?? '—'}</td>
                      <td>{formatDate(u.createdAt)}</td>
                      <td>{u.disabledAt ? 'disabled' : 'active'}</td>
                      {manages && (
                        <td className="actions">
                          <button
                            type="button"
                            onClick={() =>
                              setRole.mutate({
                                userId: u.userId,
                                role: role === 'manager' ? 'member' : 'manager',
                              })
                            }
                          >
                            Make {role === 'manager' ? 'member' : 'manager'}
                          </button>
                          <button
                            type="button"
                            onClick={() => toggle.mutate({ userId: u.userId, disable: !u.disabledAt })}
                          >
                            {u.disabledAt ? 'Re-enable' : 'Disable'}
                          </button>
                        </td>
                      )}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </Async>
      {setRole.error ? <ErrorMessage error={setRole.error} /> : null}
      {toggle.error ? <ErrorMessage error={toggle.error} /> : null}
      {manages && (
        <form
          className="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            const f = new FormData(e.currentTarget);
            invite.mutate({
              username: String(f.get('username') || '') || undefined,
              name: String(f.get('name')),
              email: String(f.get('email') || '') || undefined,
              role: f.get('role') === 'manager' ? 'manager' : 'member',
            });
          }}
        >
          <h3>Invite a user</h3>
          <label>
            Username <input name="username" />
          </label>
          <label>
            Name <input name="name" required />
          </label>
          <label>
            Email <input name="email" type="email" />
          </label>
          <label>
            Role
            <select name="role" defaultValue="member">
              <option value="member">member</option>
              <option value="manager">manager</option>
            </select>
          </label>
          <button type="submit">Invite</button>
          {invite.error ? <ErrorMessage error={invite.error} /> : null}
        </form>
      )}
      {manages && <Invitations companyId={companyId} />}
    </section>
  );
}

/** The company's pending invitations: only what the inviter gave, until the invitee accepts. */
function Invitations({ companyId }: { companyId: string }) {
  const key = ['invitations', companyId];
  const invitations = useQuery({
    queryKey: key,
    queryFn: () =>
      unwrap(
        api.GET('/api/v0/companies/{company_id}/invitations', {
          params: { path: { company_id: companyId }, query: { state: 'pending' } },
        }),
      ),
  });
  const revoke = useAction(
    (invitationId: string) =>
      unwrap(
        api.POST('/api/v0/companies/{company_id}/invitations/{invitation_id}/revoke', {
          params: { path: { company_id: companyId, invitation_id: invitationId } },
        }),
      ),
    key,
  );
  return (
    <>
      <h3>Pending invitations</h3>
      <Async query={invitations}>
        {({ invitations: list }) =>
          list.length === 0 ? (
            <p className="muted">No pending invitations.</p>
          ) : (
            <div className="table-wrap">
              <table>
                <caption className="sr-only">Pending invitations</caption>
                <thead>
                  <tr>
                    <th scope="col">Invited</th>
                    <th scope="col">Role</th>
                    <th scope="col">Expires</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((i) => (
                    <tr key={i.id}>
                      <td>{[i.username && `@${i.username}`, i.email, i.name].filter(Boolean).join(' · ')}</td>
                      <td>{i.role}</td>
                      <td>{formatDate(i.expiresAt)}</td>
                      <td className="actions">
                        <button type="button" onClick={() => revoke.mutate(i.id)}>
                          Revoke
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Async>
      {revoke.error ? <ErrorMessage error={revoke.error} /> : null}
    </>
  );
}

const AUDIT_ACTIONS = [
  'user_invited',
  'user_auto_joined',
  'user_disabled',
  'user_reenabled',
  'company_role_changed',
  'sourcehost_integration_added',
  'sourcehost_integration_removed',
  'invitation_revoked',
  'invitation_declined',
  'service_key_created',
  'service_key_revoked',
  'sso_rule_added',
  'sso_rule_removed',
  'integration_connected',
  'integration_updated',
  'integration_disconnected',
  'sourcehost_repository_linked',
  'sourcehost_repository_unlinked',
  'notification_webhook_set',
  'notification_webhook_removed',
  'credits_granted',
  'repository_member_added',
  'repository_member_changed',
  'repository_member_removed',
  'session_signed_in',
] as const;
type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What an entry without a target user concerns, from its details (a key, a domain, an invitee …). */
function subjectOf(details: Record<string, unknown> | undefined): string {
  if (!details) return '—';
  const pick = (k: string) =>
    typeof details[k] === 'string' || typeof details[k] === 'number' ? String(details[k]) : null;
  return (
    pick('username') ??
    pick('email') ??
    pick('name') ??
    pick('domain') ??
    pick('repository') ??
    pick('destination') ??
    pick('site') ??
    pick('provider') ??
    (pick('amount') ? `${pick('amount')} credits` : null) ??
    '—'
  );
}

export function AuditLog({ companyId }: { companyId: string }) {
  const [action, setAction] = useState<AuditAction | ''>('');
  const [target, setTarget] = useState('');
  const [performer, setPerformer] = useState('');
  const [since, setSince] = useState('');
  const [order, setOrder] = useState<'created_at_desc' | 'created_at_asc'>('created_at_desc');
  const log = useInfiniteQuery({
    queryKey: ['audit', companyId, action, target, performer, since, order],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      unwrap(
        api.GET('/api/v0/companies/{company_id}/audit-log', {
          params: {
            path: { company_id: companyId },
            query: {
              limit: 25,
              order_by: order,
              next: pageParam,
              actions: action ? [action] : undefined,
              target_users: target ? [target] : undefined,
              performing_users: performer ? [performer] : undefined,
              since: since ? new Date(since).toISOString() : undefined,
            },
          },
        }),
      ),
    getNextPageParam: (last) => last.nextValue || undefined,
  });
  return (
    <section aria-labelledby="audit-h">
      <h2 id="audit-h">Audit log</h2>
      <div className="filters">
        <label>
          Action
          <select value={action} onChange={(e) => setAction(e.target.value as AuditAction | '')}>
            <option value="">any</option>
            {AUDIT_ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a.replace(/_/g, ' ')}
              </option>
            ))}
          </select>
        </label>
        <label>
          Target user{' '}
          <input value={target} onChange={(e) => setTarget(e.target.value)} placeholder="username" />
        </label>
        <label>
          Performed by{' '}
          <input value={performer} onChange={(e) => setPerformer(e.target.value)} placeholder="username" />
        </label>
        <label>
          Since <input type="date" value={since} onChange={(e) => setSince(e.target.value)} />
        </label>
        <label>
          Order
          <select value={order} onChange={(e) => setOrder(e.target.value as typeof order)}>
            <option value="created_at_desc">newest first</option>
            <option value="created_at_asc">oldest first</option>
          </select>
        </label>
      </div>
      <Async query={log}>
        {(data) => {
          const items = data.pages.flatMap((p) => p.items);
          return (
            <>
              <div className="table-wrap">
                <table>
                  <caption className="sr-only">Audit log entries</caption>
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Action</th>
                      <th scope="col">Target</th>
                      <th scope="col">By</th>
                    </tr>
                  </thead>
                  <tbody>
                    {items.map((e) => (
                      <tr key={e.id}>
                        <td>{formatDate(e.createdAt)}</td>
                        <td>{String((e as { action?: string }).action ?? '').replace(/_/g, ' ')}</td>
                        <td>
                          {e.target
                            ? `@${e.target.username}`
                            : (e.sourcehost_account_name ??
                              subjectOf((e as { details?: Record<string, unknown> }).details))}
                        </td>
                        <td>{e.createdBy ? `@${e.createdBy.username}` : '—'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {items.length === 0 && <p className="muted">No entries.</p>}
              {log.hasNextPage && (
                <button
                  type="button"
                  onClick={() => void log.fetchNextPage()}
                  disabled={log.isFetchingNextPage}
                >
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

export function SsoRules({ companyId, manages }: { companyId: string; manages: boolean }) {
  const key = ['sso', companyId];
  const rules = useQuery({
    queryKey: key,
    queryFn: () => unwrap(api.GET('/api/v0/companies/{company_id}/sso-enforcement-rules', path(companyId))),
  });
  const create = useAction(
    (domain: string) =>
      unwrap(
        api.POST('/api/v0/companies/{company_id}/sso-enforcement-rules', {
          ...path(companyId),
          body: { domain },
        }),
      ),
    key,
  );
  const remove = useAction(
    (ruleId: string) =>
      unwrap(
        api.DELETE('/api/v0/companies/{company_id}/sso-enforcement-rules/{rule_id}', {
          params: { path: { company_id: companyId, rule_id: ruleId } },
        }),
      ),
    key,
  );
  return (
    <section aria-labelledby="sso-h">
      <h2 id="sso-h">SSO enforcement rules</h2>
      <Async query={rules}>
        {(list) =>
          list.length === 0 ? (
            <p className="muted">No rules: users of any domain sign in with their own credentials.</p>
          ) : (
            <ul className="cards">
              {list.map((r) => (
                <li key={r.id}>
                  <strong>{r.domain}</strong>{' '}
                  <span className="muted">
                    by @{r.createdBy?.username ?? '—'} on {formatDate(r.createdAt)}
                  </span>{' '}
                  {manages && (
                    <button
                      type="button"
                      onClick={() => remove.mutate(r.id)}
                      aria-label={`Delete rule ${r.domain}`}
                    >
                      Delete
                    </button>
                  )}
                </li>
              ))}
            </ul>
          )
        }
      </Async>
      {remove.error ? <ErrorMessage error={remove.error} /> : null}
      {manages && (
        <form
          className="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate(String(new FormData(e.currentTarget).get('domain')));
          }}
        >
          <label>
            Domain <input name="domain" required placeholder="example.com" />
          </label>
          <button type="submit">Add rule</button>
          {create.error ? <ErrorMessage error={create.error} /> : null}
        </form>
      )}
    </section>
  );
}

const SCOPES = ['findings:read', 'findings:write', 'scans:read', 'scans:create', 'credits:read'] as const;
type Scope = (typeof SCOPES)[number];

export function ServiceKeys({ companyId, manages }: { companyId: string; manages: boolean }) {
  const key = ['service-keys', companyId];
  const [created, setCreated] = useState<string | null>(null);
  const keys = useQuery({
    queryKey: key,
    enabled: manages,
    queryFn: () => unwrap(api.GET('/api/v0/companies/{companyId}/service-keys', pathC(companyId))),
  });
  const create = useAction(async (body: { name: string; scopes: Scope[] }) => {
    const res = await unwrap(
      api.POST('/api/v0/companies/{companyId}/service-keys', { ...pathC(companyId), body }),
    );
    setCreated(res.key);
  }, key);
  const revoke = useAction(
    (keyId: string) =>
      unwrap(
        api.DELETE('/api/v0/companies/{companyId}/service-keys/{keyId}', {
          params: { path: { companyId, keyId } },
        }),
      ),
    key,
  );
  if (!manages) return <p className="muted">Only company managers see service keys.</p>;
  return (
    <section aria-labelledby="keys-h">
      <h2 id="keys-h">Service keys</h2>
      <Async query={keys}>
        {({ items }) => (
          <div className="table-wrap">
            <table>
              <caption className="sr-only">Service keys</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">State</th>
                </tr>
              </thead>
              <tbody>
                {items.map((k) => (
                  <tr key={k.id}>
                    <td>{k.name}</td>
                    <td>
                      <code>{k.prefix}…</code>
                    </td>
                    <td>{k.scopes.join(', ')}</td>
                    <td>{formatDate(k.createdAt)}</td>
                    <td>{k.lastUsedAt ? formatDate(k.lastUsedAt) : 'never'}</td>
                    <td>{formatDate(k.expiresAt)}</td>
                    <td>
                      {k.revokedAt ? (
                        'revoked'
                      ) : (
                        <button
                          type="button"
                          onClick={() => revoke.mutate(k.id)}
                          aria-label={`Revoke ${k.name}`}
                        >
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Async>
      {revoke.error ? <ErrorMessage error={revoke.error} /> : null}
      {created && (
        <div className="notice copy-row">
          <span>
            New key (shown once; store it now): <code data-testid="new-key">{created}</code>
          </span>
          <CopyButton text={created} label="Copy the new service key" />
        </div>
      )}
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          create.mutate({ name: String(f.get('name')), scopes: SCOPES.filter((s) => f.get(s) === 'on') });
        }}
      >
        <label>
          Name <input name="name" required />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          {SCOPES.map((s) => (
            <label key={s}>
              <input type="checkbox" name={s} defaultChecked={s !== 'findings:write'} /> {s}
            </label>
          ))}
        </fieldset>
        <button type="submit">Create key</button>
        {create.error ? <ErrorMessage error={create.error} /> : null}
      </form>
    </section>
  );
}

const PROVIDERS = ['tracker_a', 'tracker_b', 'sourcehost'] as const;
type Provider = (typeof PROVIDERS)[number];

export function Integrations({ companyId, manages }: { companyId: string; manages: boolean }) {
  const key = ['integrations', companyId];
  const [jsonError, setJsonError] = useState<string | null>(null);
  const list = useQuery({
    queryKey: key,
    enabled: manages,
    queryFn: () => unwrap(api.GET('/api/v0/companies/{companyId}/integrations', pathC(companyId))),
  });
  const put = useAction(
    ({
      provider,
      site,
      credentials,
      settings,
    }: {
      provider: Provider;
      site?: string;
      credentials: Record<string, string>;
      settings: Record<string, unknown>;
    }) =>
      unwrap(
        api.PUT('/api/v0/companies/{companyId}/integrations/{provider}', {
          params: { path: { companyId, provider } },
          body: { ...(site ? { site } : {}), credentials, settings },
        }),
      ),
    key,
  );
  const remove = useAction(
    (provider: Provider) =>
      unwrap(
        api.DELETE('/api/v0/companies/{companyId}/integrations/{provider}', {
          params: { path: { companyId, provider } },
        }),
      ),
    key,
  );
  if (!manages) return <p className="muted">Only company managers see integrations.</p>;
  return (
    <section aria-labelledby="int-h">
      <h2 id="int-h">Integrations</h2>
      <Async query={list}>
        {({ items }) =>
          items.length === 0 ? (
            <p className="muted">No integration is connected.</p>
          ) : (
            <ul className="cards">
              {items.map((i) => (
                <li key={i.id}>
                  <strong>{i.provider}</strong> {i.site && <span className="muted">{i.site}</span>}{' '}
                  <span className="muted">credentials: {i.credentialFields.join(', ') || '—'}</span>{' '}
                  <code>{JSON.stringify(i.settings)}</code>{' '}
                  <button
                    type="button"
                    onClick={() => remove.mutate(i.provider)}
                    aria-label={`Disconnect ${i.provider}`}
                  >
                    Disconnect
                  </button>
                </li>
              ))}
            </ul>
          )
        }
      </Async>
      {remove.error ? <ErrorMessage error={remove.error} /> : null}
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          const parse = (name: string) => {
            const raw = String(f.get(name) || '{}');
            return JSON.parse(raw) as Record<string, unknown>;
          };
          setJsonError(null);
          try {
            put.mutate({
              provider: f.get('provider') as Provider,
              site: String(f.get('site') || '') || undefined,
              credentials: parse('credentials') as Record<string, string>,
              settings: parse('settings'),
            });
          } catch (err) {
            setJsonError(`Credentials and settings must be JSON objects: ${(err as Error).message}`);
          }
        }}
      >
        <h3>Connect or update</h3>
        <label>
          Provider
          <select name="provider">
            {PROVIDERS.map((p) => (
              <option key={p}>{p}</option>
            ))}
          </select>
        </label>
        <label>
          Site (URL) <input name="site" placeholder="https://…" />
        </label>
        <label>
          Credentials (JSON) <textarea name="credentials" rows={2} defaultValue={'{"token": ""}'} />
        </label>
        <label>
          Settings (JSON) <textarea name="settings" rows={2} defaultValue="{}" />
        </label>
        <button type="submit">Save</button>
        {put.error ? <ErrorMessage error={put.error} /> : null}
        {jsonError ? <ErrorMessage error={new Error(jsonError)} /> : null}
      </form>
    </section>
  );
}
