import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api.ts';
import { Async, ErrorMessage, formatDate } from '../ui.tsx';

const SESSIONS_KEY = ['sessions'];

/** The user's open console sessions (this one marked), each of which they may end. */
export function SessionsPage() {
  const client = useQueryClient();
  const sessions = useQuery({
    queryKey: SESSIONS_KEY,
    queryFn: () => unwrap(api.GET('/api/v0/sessions')),
  });
  const end = useMutation({
    mutationFn: (sessionId: string) =>
      unwrap(api.DELETE('/api/v0/sessions/{sessionId}', { params: { path: { sessionId } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: SESSIONS_KEY }),
  });
  return (
    <section aria-labelledby="sessions-h">
      <h1 id="sessions-h">Sessions</h1>
      <p className="muted">
        Where you are signed in to the console. Ending a session signs that browser out at once; your API
        token stays valid.
      </p>
      <Async query={sessions}>
        {({ sessions: items }) => (
          <div className="table-wrap">
            <table>
              <caption className="sr-only">Open console sessions</caption>
              <thead>
                <tr>
                  <th scope="col">Browser</th>
                  <th scope="col">Token</th>
                  <th scope="col">Signed in</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {items.map((s) => (
                  <tr key={s.id} data-testid="session-row">
                    <td>{s.userAgent ?? 'unknown'}</td>
                    <td>
                      <code>{s.tokenPrefix}…</code>
                    </td>
                    <td>{formatDate(s.createdAt)}</td>
                    <td>{formatDate(s.expiresAt)}</td>
                    <td>
                      {s.current ? (
                        'this session'
                      ) : (
                        <button
                          type="button"
                          onClick={() => end.mutate(s.id)}
                          aria-label={`End the session signed in ${formatDate(s.createdAt)}`}
                        >
                          End
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
      {end.error ? <ErrorMessage error={end.error} /> : null}
    </section>
  );
}
