import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useContext, useState } from 'react';
import { ApiError, api, type Session, sessionState, unwrap } from './api.ts';
import { ErrorMessage } from './ui.tsx';

const SessionContext = createContext<Session | null>(null);

/** The signed-in user; only used below <SessionGate>. */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside the session gate');
  return session;
}

/** The session, or null on a page read without signing in (a public report). */
export function useOptionalSession(): Session | null {
  return useContext(SessionContext);
}

/**
 * The caller's effective role in a repository, as the server decides it: platform admins act as
 * admins, a repository role other than reviewer wins, then company users act as the client.
 */
export function repositoryRole(session: Session, repositoryId: string, companyId: string | undefined) {
  if (session.permissions.includes('admin')) return 'admin';
  const own = session.repositories.find((r) => r.id === repositoryId)?.role ?? null;
  if (own && own !== 'reviewer') return own;
  if (companyId && session.companies.some((c) => c.id === companyId && c.role)) return 'client';
  return own;
}

/**
 * Whether the caller makes, changes and publishes the reports of a repository (the server's
 * `report.manage`): platform admins, the company's managers, the repository's admins.
 */
export function mayMakeReports(session: Session, repositoryId: string, companyId: string): boolean {
  return (
    session.permissions.includes('admin') ||
    session.companies.some((c) => c.id === companyId && c.role === 'manager') ||
    session.repositories.some((r) => r.id === repositoryId && r.role === 'admin')
  );
}

/** Shows the sign-in form until a session exists, then its children with the session. */
export function SessionGate({ children, anonymous }: { children: ReactNode; anonymous?: ReactNode }) {
  const query = useQuery({
    queryKey: ['session'],
    queryFn: async () => {
      const session = await unwrap(api.GET('/api/v0/session'));
      sessionState.csrfToken = session.csrfToken;
      return session;
    },
    retry: false,
    staleTime: 5 * 60_000,
  });
  if (query.isPending)
    return (
      <p className="muted" role="status">
        Loading…
      </p>
    );
  if (query.error) {
    // A page anyone may read (a public report) is shown without signing in.
    if (query.error instanceof ApiError && query.error.status === 401) return anonymous ?? <SignIn />;
    return <ErrorMessage error={query.error} />;
  }
  return <SessionContext.Provider value={query.data}>{children}</SessionContext.Provider>;
}

/** Exchanges a user API token for the session cookie; the token is never stored by the page. */
export function SignIn() {
  const client = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <main className="sign-in" id="main">
      <h1>Sign in to Vigil</h1>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const form = event.currentTarget;
          const token = new FormData(form).get('token');
          setBusy(true);
          setError(null);
          try {
            const session = await unwrap(
              api.POST('/api/v0/session', { body: { token: String(token ?? '') } }),
            );
            sessionState.csrfToken = session.csrfToken;
            form.reset();
            client.setQueryData(['session'], session);
          } catch (err) {
            setError(err);
          } finally {
            setBusy(false);
          }
        }}
      >
        <label htmlFor="token">User API token</label>
        <input id="token" name="token" type="password" autoComplete="off" required placeholder="vgl_u_…" />
        <p className="muted">
          The token is exchanged for a session cookie the page cannot read; it is not kept in the browser.
        </p>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {error ? <ErrorMessage error={error} /> : null}
      </form>
    </main>
  );
}

/** Clears the session cookie and every cached answer. */
export async function signOut(client: ReturnType<typeof useQueryClient>) {
  await unwrap(api.DELETE('/api/v0/session'));
  sessionState.csrfToken = null;
  sessionState.companyId = null;
  client.clear();
  // A fresh page: nothing of the previous user stays in memory.
  window.location.assign('/app/');
}
