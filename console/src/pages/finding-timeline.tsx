import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import type { paths } from '../../../src/sdk/schema';
import { api, unwrap } from '../api.ts';
import '../reading.css';
import { Async, Chip, formatDate, words } from '../ui.tsx';

type EventsPath = '/api/v0/repositories/{repo_id}/findings/{finding_ref}/events';
type FindingEvent =
  paths[EventsPath]['get']['responses'][200]['content']['application/json']['events'][number];

type Data = Record<string, unknown>;

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const obj = (value: unknown): Data | null =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Data) : null;

/** A user named by an event (`{username}`), nobody (null), or someone the reader may not see. */
function person(value: unknown): ReactNode {
  const user = obj(value);
  if (!user) return <em>nobody</em>;
  if (user.hidden) return <em>someone</em>;
  return <strong>@{str(user.username)}</strong>;
}

/** A finding named by a duplicate event, linked when the reader may see it. */
function findingLink(value: unknown, repositoryId: string): ReactNode {
  const f = obj(value);
  if (!f) return <em>none</em>;
  if (f.hidden || typeof f.number !== 'number') return <em>a finding you cannot see</em>;
  return (
    <Link
      to="/repositories/$repoId/findings/$findingRef"
      params={{ repoId: repositoryId, findingRef: String(f.number) }}
    >
      #{f.number} {str(f.title)}
    </Link>
  );
}

const shortCommit = (value: unknown) => str(value)?.slice(0, 12) ?? null;

/** A scan named by an event: a link to its page when the company is known. */
function scanRef(data: Data, companyId: string | undefined): ReactNode {
  const scanId = str(data.scanId);
  const commit = shortCommit(data.commit);
  const scan = scanId ? (
    companyId ? (
      <Link to="/companies/$companyId/scans/$scanId" params={{ companyId, scanId }}>
        scan {scanId.slice(0, 8)}
      </Link>
    ) : (
      <>scan {scanId.slice(0, 8)}</>
    )
  ) : (
    <>a scan</>
  );
  return (
    <>
      {scan}
      {commit && (
        <>
          {' '}
          at commit <code>{commit}</code>
        </>
      )}
    </>
  );
}

/** Facts of an event kind the console does not know, shown as they come. */
function genericFacts(data: Data): ReactNode {
  const entries = Object.entries(data).filter(([, v]) => v !== null && v !== undefined);
  if (entries.length === 0) return null;
  return (
    <dl className="event-facts">
      {entries.map(([k, v]) => (
        <div key={k}>
          <dt>{words(k)}</dt>
          <dd>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</dd>
        </div>
      ))}
    </dl>
  );
}

/** What happened, in words, for the kinds the API documents; null for other kinds. */
function describe(event: FindingEvent, repositoryId: string, companyId: string | undefined): ReactNode {
  const d = event.data as Data;
  switch (event.kind) {
    case 'created':
      return <>filed the finding</>;
    case 'status':
      return (
        <>
          changed the status from <Chip kind="status" value={str(d.from)} /> to{' '}
          <Chip kind="status" value={str(d.to)} />
          {str(d.reason) && <> — “{str(d.reason)}”</>}
        </>
      );
    case 'severity':
      return (
        <>
          changed the severity from <Chip kind="severity" value={str(d.from)} /> to{' '}
          <Chip kind="severity" value={str(d.to)} />
        </>
      );
    case 'assignee':
      return d.to ? (
        <>assigned the finding to {person(d.to)}</>
      ) : (
        <>unassigned the finding (was {person(d.from)})</>
      );
    case 'label_added':
      return (
        <>
          added the label <span className="chip">{str(obj(d.label)?.name) ?? '—'}</span>
        </>
      );
    case 'label_removed':
      return (
        <>
          removed the label <span className="chip">{str(obj(d.label)?.name) ?? '—'}</span>
        </>
      );
    case 'duplicate':
      return d.to ? (
        <>marked it a duplicate of {findingLink(d.to, repositoryId)}</>
      ) : (
        <>marked it not a duplicate (was of {findingLink(d.from, repositoryId)})</>
      );
    case 'ticket_linked':
    case 'ticket_unlinked': {
      const url = str(d.url);
      const key = str(d.key) ?? 'ticket';
      const link =
        url && /^https?:\/\//i.test(url) ? (
          <a href={url} target="_blank" rel="noopener noreferrer">
            {key}
          </a>
        ) : (
          key
        );
      return event.kind === 'ticket_linked' ? (
        <>
          {str(d.source) === 'created' ? 'created the ticket' : 'linked the ticket'} {link}
        </>
      ) : (
        <>unlinked the ticket {link}</>
      );
    }
    case 'scan_present':
      return <>still present in {scanRef(d, companyId)}</>;
    case 'scan_not_reproduced':
      return <>not reproduced since {scanRef(d, companyId)}</>;
    default:
      return null;
  }
}

/**
 * A finding's activity: its filing and every change since (status, severity, assignee, labels,
 * duplicates, tickets, scans), oldest first. Kinds the console does not know are shown by name
 * with their facts. `version` (the finding's last update time) refetches it after a change.
 */
export function FindingTimeline({
  repositoryId,
  findingId,
  companyId,
  version,
}: {
  repositoryId: string;
  findingId: string;
  companyId: string | undefined;
  version: string;
}) {
  const events = useQuery({
    queryKey: ['finding-events', repositoryId, findingId, version],
    queryFn: () =>
      unwrap(
        api.GET('/api/v0/repositories/{repo_id}/findings/{finding_ref}/events', {
          params: { path: { repo_id: repositoryId, finding_ref: findingId } },
        }),
      ),
    placeholderData: (previous) => previous,
  });
  return (
    <section className="timeline" aria-labelledby="activity-heading">
      <h2 id="activity-heading">Activity</h2>
      <Async query={events}>
        {({ events: list }) => (
          <ol className="timeline-list">
            {list.map((e) => {
              const known = describe(e, repositoryId, companyId);
              const system = e.kind.startsWith('scan_') ? 'Vigil scanner' : 'Vigil';
              return (
                <li key={e.id} className={`event event-${e.kind}`} data-kind={e.kind}>
                  <span className="event-actor">{e.actor ? `@${e.actor.username}` : system}</span>{' '}
                  {known ?? (
                    <>
                      <span className="event-kind">{words(e.kind)}</span>
                      {genericFacts(e.data as Data)}
                    </>
                  )}{' '}
                  <time className="muted" dateTime={e.createdAt}>
                    {formatDate(e.createdAt)}
                  </time>
                </li>
              );
            })}
          </ol>
        )}
      </Async>
    </section>
  );
}
