import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestApp } from '../../test/helpers/app.ts';
import { runVigil } from '../../test/helpers/cli.ts';
import { buildCompany, buildServiceKey, grantCredits } from '../../test/helpers/factories.ts';
import { SCOPES } from '../auth/credentials.ts';

let url: string;
let home: string;

/** Runs the real `vigil` binary in the test's home folder. */
function vigil(args: string[], env: Record<string, string> = {}) {
  return runVigil(args, { home, env });
}

const STACK_LINE = /^\s+at .+\(?.*:\d+:\d+\)?$/m;

const t = sharedTestApp({ worker: true });
beforeAll(async () => {
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  home = await mkdtemp(path.join(os.tmpdir(), 'vigil-cli-home-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('typical mistakes print one clear line, no stack trace', () => {
  it('a directory that does not exist (exit 2); --debug shows the trace', async () => {
    const r = await vigil(['scan', 'examples/nonexistent']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'vigil: examples/nonexistent: no such directory. Pass the folder holding your contracts.\n',
    );
    const debug = await vigil(['scan', 'examples/nonexistent', '--debug']);
    expect(debug.code).toBe(2);
    expect(debug.stderr).toMatch(STACK_LINE);
  });

  it('a .sol file instead of its directory (exit 2)', async () => {
    const r = await vigil(['scan', 'examples/sample-project/contracts/Vault.sol']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is a file, not a directory. Pass the folder that contains it/);
    expect(r.stderr).not.toMatch(STACK_LINE);
  });

  it('an unknown --fail-on, --format or --type lists the allowed values (exit 2)', async () => {
    for (const [flag, value, allowed] of [
      ['--fail-on', 'foo', 'Critical, High, Medium, Low, Info, never'],
      ['--format', 'xml', 'table, json, sarif, sast'],
      ['--type', 'bogus', 'lite, standard, audit'],
    ] as const) {
      const r = await vigil(['scan', 'examples/sample-project', flag, value]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${flag} must be one of ${allowed}`);
    }
  });

  it('an unreachable DATABASE_URL says what to check', async () => {
    const r = await vigil(['migrate'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/vigil' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^vigil: cannot reach the database at .*\(DATABASE_URL\).*ECONNREFUSED.*fix DATABASE_URL/,
    );
    expect(r.stderr).not.toMatch(STACK_LINE);
  });

  it('an unreachable server, after retrying', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const r = await vigil([
      'credits',
      '--url',
      `http://127.0.0.1:${port}`,
      '--key',
      `vgl_sk_${'a'.repeat(40)}`,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `vigil: Cannot reach http://127.0.0.1:${port} (ECONNREFUSED) after 5 attempts. Is the server running? Check --url, VIGIL_URL or "vigil login".\n`,
    );
  }, 60_000);

  it('an unknown command exits 2', async () => {
    const r = await vigil(['scna']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command 'scna'/);
  });
});

describe('login, then commands without flags', () => {
  it('stores the URL and credentials (0600) and runs scan, scans, credits, tickets and admin with them', async () => {
    const company = await buildCompany(t);
    const key = (await buildServiceKey(t, { companyId: company.id, scopes: [...SCOPES] })).key;
    await grantCredits(t, company.id, 10);

    const wrong = await vigil(['login', '--url', url, '--key', `vgl_sk_${'Z'.repeat(40)}`]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/Checking the service key failed \(401\): Unknown service key/);

    const login = await vigil(['login', '--url', url, '--key', key, '--token', t.adminToken]);
    expect(login.code, login.stderr).toBe(0);
    const file = path.join(home, 'config', 'config.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ url, key, token: t.adminToken });

    const credits = await vigil(['credits']);
    expect(credits.code, credits.stderr).toBe(0);
    expect(credits.stdout).toMatch(/purchased 10, used 0, reserved 0, remaining 10/);

    const report = path.join(home, 'report.json');
    const scan = await vigil(['scan', 'examples/sample-project', '--output', report]);
    expect(scan.code, scan.stderr).toBe(1);
    const vulnerabilities = JSON.parse(await readFile(report, 'utf8')).vulnerabilities as Array<{
      id: string;
    }>;
    const scanId = /scan ([0-9a-f-]{36}) accepted/.exec(scan.stderr)?.[1];
    expect(scanId).toBeDefined();

    const list = await vigil(['scans', 'list', '--json']);
    const listed = JSON.parse(list.stdout) as Array<{ id: string; workspaceId: string }>;
    expect(listed.map((s) => s.id)).toEqual([scanId]);
    const ofWorkspace = await vigil(['scans', 'list', '--workspace', listed[0]!.workspaceId, '--json']);
    expect(JSON.parse(ofWorkspace.stdout).map((s: { id: string }) => s.id)).toEqual([scanId]);
    const ofOther = await vigil(['scans', 'list', '--workspace', randomUUID(), '--json']);
    expect(ofOther.code, ofOther.stderr).toBe(0);
    expect(JSON.parse(ofOther.stdout)).toEqual([]);
    const badWorkspace = await vigil(['scans', 'list', '--workspace', 'nope']);
    expect(badWorkspace.code).toBe(2);
    expect(badWorkspace.stderr).toMatch(/The workspace id must be a UUID/);
    const show = await vigil(['scans', 'show', scanId!]);
    expect(show.stdout).toMatch(new RegExp(`${scanId}\\s+standard\\s+completed`));
    const cancel = await vigil(['scans', 'cancel', scanId!]);
    expect(cancel.code).toBe(1);
    expect(cancel.stderr).toMatch(/Cancelling the scan failed \(409\).*Only a queued or running scan/);
    const badId = await vigil(['scans', 'show', 'nope']);
    expect(badId.code).toBe(2);
    expect(badId.stderr).toMatch(/The scan id must be a UUID/);

    const findingId = vulnerabilities[0]!.id;
    const tickets = await vigil(['tickets', 'list', findingId]);
    expect(tickets.code, tickets.stderr).toBe(0);
    expect(tickets.stdout).toBe('(none)\n');
    const send = await vigil(['tickets', 'send', findingId, 'tracker_a']);
    expect(send.code).toBe(1);
    expect(send.stderr).toMatch(/Sending the finding failed \(409\).*Connect the tracker/);
    const link = await vigil(['tickets', 'link', findingId, 'jira', 'ENG-1']);
    expect(link.code).toBe(2);
    expect(link.stderr).toMatch(/provider must be one of tracker_a, tracker_b/);

    const companies = await vigil(['admin', 'companies', 'list']);
    expect(companies.code, companies.stderr).toBe(0);
    expect(companies.stdout).toContain(company.handle);
  }, 180_000);
});
