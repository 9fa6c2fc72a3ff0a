import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../test/helpers/app.ts';
import { runCli } from '../../test/helpers/cli.ts';
import { buildRepositoryTeam, fileFinding } from '../../test/helpers/factories.ts';
import { registerCommentCommands } from './comments.ts';

let url: string;
const t = sharedTestApp();
beforeAll(async () => {
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
});

/** Runs `vigil <group> …` against the test server as the token's user; returns what it printed. */
async function vigil(token: string, group: string, ...args: string[]): Promise<string> {
  return runCli(
    (program) => registerCommentCommands(program, {}),
    [group, '--url', url, '--token', token, ...args],
  );
}

describe('vigil comments and vigil notifications', () => {
  it('adds comments and replies, lists the threads, and shows the pinged user their notification', async () => {
    const s = await buildRepositoryTeam(t);
    const finding = await fileFinding(t, s.reviewer.token, s.repository.id);
    const added = JSON.parse(
      await vigil(
        s.judge.token,
        'comments',
        '--json',
        'add',
        s.repository.id,
        String(finding.number),
        `Confirmed, @${s.triager.username} please triage.`,
      ),
    ) as { id: string };
    await vigil(
      s.triager.token,
      'comments',
      'add',
      s.repository.id,
      finding.id,
      'On it.',
      '--parent',
      added.id,
    );
    await vigil(
      s.judge.token,
      'comments',
      'add',
      s.repository.id,
      finding.id,
      'judges only',
      '--visibility',
      'private',
    );

    const asReviewerOther = await vigil(
      s.client.token,
      'comments',
      '--json',
      'list',
      s.repository.id,
      finding.id,
    );
    const threads = (
      JSON.parse(asReviewerOther) as {
        threads: Array<{ content: string; replies: Array<{ content: string }> }>;
      }
    ).threads;
    expect(threads.map((c) => [c.content, c.replies.map((r) => r.content)])).toEqual([
      [`Confirmed, @${s.triager.username} please triage.`, ['On it.']],
    ]);
    const table = await vigil(s.judge.token, 'comments', 'list', s.repository.id, String(finding.number));
    expect(table.split('\n')[0]).toMatch(/^id\s+reply\s+visibility\s+author\s+createdAt\s+content$/);
    expect(table).toContain('↳');
    expect(table).toContain('judges only');

    const listed = await vigil(s.triager.token, 'notifications', 'list', '--unread');
    expect(listed).toContain(`Confirmed, @${s.triager.username} please triage.`);
    expect(listed).toContain(s.judge.username);
    expect(JSON.parse(await vigil(s.triager.token, 'notifications', '--json', 'read'))).toEqual({
      marked: 1,
    });
    expect(await vigil(s.triager.token, 'notifications', 'list', '--unread')).toBe('(none)\n');

    await expect(
      vigil(s.reviewer.token, 'comments', 'add', s.repository.id, finding.id, 'x', '--visibility', 'hidden'),
    ).rejects.toThrow(/403: Reviewers may only write public comments/);
  });
});
