import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../test/helpers/app.ts';
import { runCli } from '../../test/helpers/cli.ts';
import { buildFinding, buildRepositoryTeam } from '../../test/helpers/factories.ts';
import { registerAiCommands } from './ai.ts';

let url: string;
const t = sharedTestApp();
beforeAll(async () => {
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
});

/** Runs `vigil ai …` against the test server and returns what it printed. */
async function vigil(token: string, ...args: string[]): Promise<string> {
  return runCli(
    (program) => registerAiCommands(program, {}),
    ['ai', '--url', url, '--token', token, ...args],
  );
}

describe('vigil ai', () => {
  it('asks a question, continues a conversation and shows the status', async () => {
    const team = await buildRepositoryTeam(t);
    const f = await buildFinding(t, {
      repositoryId: team.repository.id,
      title: 'Reentrancy in the vault',
      severity: 'high',
    });
    const conversation = randomUUID();
    const answer = await vigil(
      team.client.token,
      'ask',
      team.repository.id,
      'which',
      'reentrancy',
      'findings?',
      '--conversation',
      conversation,
    );
    expect(answer).toContain('No language model is configured');
    expect(answer).toContain(`#${f.number} [high, new] Reentrancy in the vault`);

    const shown = await vigil(team.client.token, 'conversation', team.repository.id, conversation);
    expect(shown).toContain('user: which reentrancy findings?');
    expect(shown).toContain(`assistant: No language model`);

    const status = JSON.parse(await vigil(team.client.token, '--json', 'status', team.repository.id));
    expect(status).toMatchObject({ available: true, mode: 'retrieval', model: null });
  });

  it('reports the server message of a refused question', async () => {
    const team = await buildRepositoryTeam(t);
    const other = await buildRepositoryTeam(t);
    await expect(vigil(other.client.token, 'ask', team.repository.id, 'anything?')).rejects.toThrow(
      /failed with 404: Repository not found\./,
    );
    await expect(vigil(other.client.token, 'ask', 'not-a-uuid', 'x')).rejects.toThrow(/must be a UUID/);
  });
});
