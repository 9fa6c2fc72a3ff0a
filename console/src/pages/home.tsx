import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { api, unwrap } from '../api.ts';
import { useSession } from '../session.tsx';
import { ErrorMessage, formatDate } from '../ui.tsx';

/** The caller's pending invitations (those naming their username), to accept or decline. */
function MyInvitations() {
  const client = useQueryClient();
  const invitations = useQuery({
    queryKey: ['my-invitations'],
    queryFn: () => unwrap(api.GET('/api/v0/invitations')),
  });
  const answer = useMutation({
    mutationFn: ({ id, accept }: { id: string; accept: boolean }): Promise<unknown> =>
      accept
        ? unwrap(
            api.POST('/api/v0/invitations/{invitation_id}/accept', {
              params: { path: { invitation_id: id } },
              body: {},
            }),
          )
        : unwrap(
            api.POST('/api/v0/invitations/{invitation_id}/decline', {
              params: { path: { invitation_id: id } },
              body: {},
            }),
          ),
    // Accepting adds a company to the session.
    onSuccess: () =>
      client
        .invalidateQueries({ queryKey: ['my-invitations'] })
        .then(() => client.invalidateQueries({ queryKey: ['session'] })),
  });
  const list = invitations.data?.invitations ?? [];
  if (list.length === 0) return null;
  return (
    <>
      <h2>Invitations</h2>
      <ul className="cards">
        {list.map((i) => (
          <li key={i.id}>
            {i.company.name} <span className="muted">@{i.company.handle}</span>{' '}
            <span className="chip">{i.role}</span>{' '}
            <span className="muted">until {formatDate(i.expiresAt)}</span>{' '}
            <button type="button" onClick={() => answer.mutate({ id: i.id, accept: true })}>
              Accept
            </button>{' '}
            <button type="button" onClick={() => answer.mutate({ id: i.id, accept: false })}>
              Decline
            </button>
          </li>
        ))}
      </ul>
      {answer.error ? <ErrorMessage error={answer.error} /> : null}
    </>
  );
}

/** The companies and repositories of the signed-in user. */
export function HomePage() {
  const session = useSession();
  return (
    <section>
      <h1>Hello, {session.name}</h1>
      <MyInvitations />
      <h2>Companies</h2>
      {session.companies.length === 0 ? (
        <p className="muted">You are not a member of any company.</p>
      ) : (
        <ul className="cards">
          {session.companies.map((c) => (
            <li key={c.id}>
              <Link to="/companies/$companyId" params={{ companyId: c.id }}>
                {c.name}
              </Link>{' '}
              <span className="muted">@{c.handle}</span>{' '}
              {c.role ? <span className="chip">{c.role}</span> : null}
            </li>
          ))}
        </ul>
      )}
      <h2>Your repositories</h2>
      {session.repositories.length === 0 ? (
        <p className="muted">You take part in no repository.</p>
      ) : (
        <ul className="cards">
          {session.repositories.map((r) => (
            <li key={r.id}>
              <Link to="/repositories/$repoId" params={{ repoId: r.id }}>
                {r.name}
              </Link>{' '}
              <span className="chip">{r.role}</span>
            </li>
          ))}
        </ul>
      )}
      <p>
        <Link to="/findings">All findings you can see →</Link>
      </p>
    </section>
  );
}
