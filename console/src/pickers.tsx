import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import type { paths } from '../../src/sdk/schema';
import { api, unwrap } from './api.ts';

type PeoplePath = '/api/v0/repositories/{repo_id}/findings/{finding_ref}/people';
/** One user who sees a finding, as the server's access policy lists them. */
export type FindingPerson =
  paths[PeoplePath]['get']['responses'][200]['content']['application/json']['people'][number];

/**
 * The people who see a finding (GET …/people): the assignee picker offers the assignable ones,
 * the mention completion the mentionable ones. The server decides both; the console only shows.
 */
export function useFindingPeople(repositoryId: string, findingId: string) {
  return useQuery({
    queryKey: ['finding-people', repositoryId, findingId],
    queryFn: () =>
      unwrap(
        api.GET('/api/v0/repositories/{repo_id}/findings/{finding_ref}/people', {
          params: { path: { repo_id: repositoryId, finding_ref: findingId } },
        }),
      ),
    staleTime: 60_000,
  });
}

/** The `@names` of a text that reach no one: not `@project` and not among the mentionable names. */
export function unreachedMentions(text: string, mentionable: readonly string[]): string[] {
  const known = new Set(mentionable.map((n) => n.toLowerCase()));
  known.add('project');
  const out = new Set<string>();
  for (const m of text.matchAll(/(^|[^\p{L}\p{N}_.@/-])@([A-Za-z0-9_.-]{1,39})/gu)) {
    const name = (m[2] ?? '').replace(/[.]+$/, '');
    if (name && !known.has(name.toLowerCase())) out.add(name);
  }
  return [...out];
}

/** Role and author marks of a person, for option labels. */
function describe(p: FindingPerson): string {
  return `${p.name}${p.role ? `, ${p.role}` : ''}${p.isFindingAuthor ? ', author' : ''}`;
}

/**
 * Picks the assignee of a finding among the users who see it (and so may be assigned), or
 * nobody. Applies only on the button: choosing in the list sends nothing.
 */
export function AssigneePicker({
  repositoryId,
  findingId,
  current,
  busy,
  onAssign,
}: {
  repositoryId: string;
  findingId: string;
  current: string | null;
  busy: boolean;
  onAssign: (username: string | null) => void;
}) {
  const id = useId();
  const people = useFindingPeople(repositoryId, findingId);
  const [choice, setChoice] = useState<string>(current ?? '');
  const assignable = people.data?.people.filter((p) => p.assignable) ?? [];
  return (
    <form
      className="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        onAssign(choice || null);
      }}
    >
      <label htmlFor={id}>Assign to</label>
      <select
        id={id}
        value={choice}
        onChange={(e) => setChoice(e.target.value)}
        disabled={people.isPending}
        aria-describedby={`${id}-help`}
      >
        <option value="">nobody</option>
        {assignable.map((p) => (
          <option key={p.userId} value={p.username}>
            @{p.username} ({describe(p)})
          </option>
        ))}
      </select>
      <button type="submit" disabled={busy || (choice || null) === current}>
        Assign
      </button>
      <p id={`${id}-help`} className="muted small">
        Only people who can see this finding are listed.
      </p>
    </form>
  );
}
