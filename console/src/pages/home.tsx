import { Link } from '@tanstack/react-router';
import { useSession } from '../session.tsx';

/** The companies and repositories of the signed-in user. */
export function HomePage() {
  const session = useSession();
  return (
    <section>
      <h1>Hello, {session.name}</h1>
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
