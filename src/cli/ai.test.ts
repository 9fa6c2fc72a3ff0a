import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/helpers/app.ts';
import { runCli } from '../../test/helpers/cli.ts';
import { buildRepositoryTeam, insertFinding } from '../../test/helpers/findings-factories.ts';
import { registerAiCommands } from './ai.ts';

let t: TestApp;
let url: string;
beforeAll(async () => {
  t = await createTestApp();
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
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
    const f = await insertFinding(t, team.repository, { title: 'Reentrancy in the vault', severity: 'high' });
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
