import { type Static, Type } from '@sinclair/typebox';
import { DateTimeSchema, Nullable, ref } from '../../http/schemas.ts';
import { ShortUserSummarySchema } from '../users/users.schemas.ts';

/**
 * One entry of a finding's timeline (extension, ADR 0036). `kind` says what happened and `data`
 * carries its facts, names resolved for the reader:
 * - `created`: `{}` (the filing; `actor` is the author);
 * - `status`, `severity`: `{from, to}` values;
 * - `assignee`: `{from, to}`, each `{userId, username, name}` or null (nobody);
 * - `duplicate`: `{from, to}`, each `{id, number, title}`, or null (not a duplicate), or
 *   `{hidden: true}` for a finding the reader may not see;
 * - `label_added`, `label_removed`: `{label: {id, name}}`;
 * - `ticket_linked`, `ticket_unlinked`: `{provider, key, url, source}` (company users only);
 * - other kinds (the scanner's `scan_present`, `scan_not_reproduced`: `{scanId, commit, …}`)
 *   as written. Clients show kinds they do not know generically.
 */
export const FindingEventSchema = Type.Object(
  {
    id: Type.String({ description: 'Increasing within the finding; `created` has id "0"' }),
    kind: Type.String(),
    createdAt: DateTimeSchema,
    actor: Nullable(ref(ShortUserSummarySchema)),
    data: Type.Object({}, { additionalProperties: true }),
  },
  { $id: 'FindingEvent' },
);
export type FindingEvent = Static<typeof FindingEventSchema>;

export const FindingEventListSchema = Type.Object(
  { events: Type.Array(ref(FindingEventSchema)) },
  { $id: 'FindingEventList' },
);
export type FindingEventList = Static<typeof FindingEventListSchema>;
