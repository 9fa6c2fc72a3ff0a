import { loadFindingAccessForRead, requireVisibleRepository } from '../../access/access.service.ts';
import { can, type FindingAccess } from '../../access/policy.ts';
import type { Actor } from '../../auth/actor.ts';
import type { Database } from '../../db/client.ts';
import type { JsonObject, JsonValue } from '../../json.ts';
import { toShortUserSummary } from '../users/users.views.ts';
import { type FindingEventRow, findingEventsRepo } from './finding-events.repo.ts';
import type { FindingEvent, FindingEventList } from './finding-events.schemas.ts';
import { requireFinding } from './findings.service.ts';

type Repository = Awaited<ReturnType<typeof requireVisibleRepository>>;

const TICKET_KINDS = new Set(['ticket_linked', 'ticket_unlinked']);
const LABEL_KINDS = new Set(['label_added', 'label_removed']);

const idOf = (value: JsonValue | undefined): string | null => (typeof value === 'string' ? value : null);

/**
 * A finding's timeline: its change log (`finding_events`) as the reader may see it. Ticket events
 * only for those who see the finding's tickets, label events only for labels the reader may read,
 * duplicate targets only when the reader may see them (`finding.read`), as the finding payload does.
 */
export function createFindingEventsService(deps: { database: Database }) {
  const { database } = deps;

  async function resolve(
    access: FindingAccess,
    repository: Repository,
    rows: FindingEventRow[],
  ): Promise<FindingEvent[]> {
    const repo = findingEventsRepo(database.db);
    const userIds = new Set<string>();
    const labelIds = new Set<string>();
    const findingIds = new Set<string>();
    for (const row of rows) {
      const from = idOf(row.data.from);
      const to = idOf(row.data.to);
      if (row.kind === 'assignee') for (const id of [from, to]) if (id) userIds.add(id);
      if (row.kind === 'duplicate') for (const id of [from, to]) if (id) findingIds.add(id);
      if (LABEL_KINDS.has(row.kind)) {
        const id = idOf(row.data.labelId);
        if (id) labelIds.add(id);
      }
    }
    const [people, labelRows, targets] = await Promise.all([
      repo.users([...userIds]),
      repo.labels(repository, [...labelIds]),
      repo.findings(repository.id, [...findingIds]),
    ]);
    const userById = new Map(people.map((u) => [u.id, u]));
    const labelById = new Map(labelRows.map((l) => [l.id, l]));
    const findingById = new Map(targets.map((f) => [f.id, f]));
    const mayReadTickets = can(access, 'finding.read_tickets', { repository });

    const person = (id: string | null): JsonValue => {
      if (id === null) return null;
      const u = userById.get(id);
      return u ? { userId: u.id, username: u.username, name: u.name } : { hidden: true };
    };
    const findingRef = (id: string | null): JsonValue => {
      if (id === null) return null;
      const f = findingById.get(id);
      if (!f || !can(access, 'finding.read', { repository, finding: f })) return { hidden: true };
      return { id: f.id, number: f.number, title: f.title };
    };

    const events: FindingEvent[] = [];
    for (const row of rows) {
      let data: JsonObject = row.data;
      if (TICKET_KINDS.has(row.kind) && !mayReadTickets) continue;
      if (LABEL_KINDS.has(row.kind)) {
        const label = labelById.get(idOf(row.data.labelId) ?? '');
        if (!label || !can(access, 'label.read', { repository, label })) continue;
        data = { label: { id: label.id, name: label.name } };
      } else if (row.kind === 'assignee') {
        data = { from: person(idOf(row.data.from)), to: person(idOf(row.data.to)) };
      } else if (row.kind === 'duplicate') {
        data = { from: findingRef(idOf(row.data.from)), to: findingRef(idOf(row.data.to)) };
      }
      events.push({
        id: String(row.id),
        kind: row.kind,
        createdAt: row.createdAt.toISOString(),
        actor: row.actor ? toShortUserSummary(row.actor) : null,
        data,
      });
    }
    return events;
  }

  return {
    /**
     * GET …/findings/{finding_ref}/events: the filing, then every recorded change the reader may
     * see, oldest first. 404 for a finding (or repository) the reader may not see.
     */
    async listFindingEvents(actor: Actor, repositoryId: string, ref: string): Promise<FindingEventList> {
      const access = await loadFindingAccessForRead(database.db, actor);
      const repository = await requireVisibleRepository(database.db, access, repositoryId);
      const finding = await requireFinding(database.db, access, repositoryId, ref);
      const [rows, author] = await Promise.all([
        findingEventsRepo(database.db).list(finding.id),
        finding.createdBy ? findingEventsRepo(database.db).users([finding.createdBy]) : Promise.resolve([]),
      ]);
      const created: FindingEvent = {
        id: '0',
        kind: 'created',
        createdAt: finding.createdAt.toISOString(),
        actor: author[0] ? toShortUserSummary(author[0]) : null,
        data: {},
      };
      return { events: [created, ...(await resolve(access, repository, rows))] };
    },
  };
}

export type FindingEventsService = ReturnType<typeof createFindingEventsService>;
