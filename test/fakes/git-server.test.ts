import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGitServer, startFakeGitServer } from './git-server.ts';

const TOKEN = 'fake-host-token';
const ADVERTISEMENT = '/acme/tool.git/info/refs?service=git-upload-pack';

let server: FakeGitServer;

beforeAll(async () => {
  server = await startFakeGitServer({ token: TOKEN });
  await server.createRepository('acme/tool', { 'index.js': 'export {};\n' });
});

afterAll(async () => {
  await server.close();
});

describe('fake git server', () => {
  it('asks for Basic credentials when none or wrong ones are sent', async () => {
    const wrong = `Basic ${Buffer.from('x-access-token:nope').toString('base64')}`;
    const attempts: Array<Record<string, string>> = [
      {},
      { Authorization: wrong },
      { Authorization: 'Bearer nope' },
    ];
    for (const headers of attempts) {
      const response = await fetch(`${server.baseUrl}${ADVERTISEMENT}`, { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="git"');
    }
  });

  it('serves the smart HTTP advertisement through git http-backend for either scheme', async () => {
    const basic = `Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`;
    for (const authorization of [basic, `Bearer ${TOKEN}`]) {
      const response = await fetch(`${server.baseUrl}${ADVERTISEMENT}`, {
        headers: { Authorization: authorization },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/x-git-upload-pack-advertisement');
      expect(await response.text()).toContain('# service=git-upload-pack');
    }
  });

  it('answers 404 for a repository it does not have and records every request line', async () => {
    const seen = server.requests.length;
    const response = await fetch(`${server.baseUrl}/acme/none.git/info/refs?service=git-upload-pack`, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(response.status).toBe(404);
    await response.arrayBuffer();
    expect(server.requests.slice(seen)).toEqual([
      { method: 'GET', url: '/acme/none.git/info/refs?service=git-upload-pack', status: 404 },
    ]);
  });
});
