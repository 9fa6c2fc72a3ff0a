import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, parseOutboundAllow } from '../../config.ts';
import { createObjectStore } from '../storage/object-store-url.ts';
import { createOutboundPolicy, type OutboundPolicy, OutboundRefusedError } from './outbound-policy.ts';

/** A loopback HTTP server that records what it receives; `/redirect?to=` answers a 302. */
async function startServer(): Promise<{ server: Server; port: number; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ path: url.pathname, authorization: req.headers.authorization ?? null }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, seen };
}

let target: Awaited<ReturnType<typeof startServer>>;
let closedPort: number;
const policies: OutboundPolicy[] = [];

function policy(options: Partial<Parameters<typeof createOutboundPolicy>[0]> = {}): OutboundPolicy {
  const created = createOutboundPolicy({
    allow: { hosts: [], cidrs: [] },
    // Names are resolved by the test, never by DNS: nothing leaves the machine.
    resolve: async (hostname) => {
      if (hostname === 'localhost' || hostname === 'loopback.vigil.test')
        return [{ address: '127.0.0.1', family: 4 }];
      if (hostname === 'mixed.vigil.test')
        return [
          { address: '93.184.216.34', family: 4 },
          { address: '10.0.0.7', family: 4 },
        ];
      throw new Error(`ENOTFOUND ${hostname}`);
    },
    ...options,
  });
  policies.push(created);
  return created;
}

async function refusal(p: OutboundPolicy, url: string): Promise<unknown> {
  const err = await p.fetch(url).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, url).toBeInstanceOf(TypeError);
  return (err as Error).cause;
}

beforeAll(async () => {
  target = await startServer();
  const probe = await startServer();
  closedPort = probe.port;
  await new Promise<void>((resolve) => probe.server.close(() => resolve()));
});
afterEach(() => {
  target.seen.length = 0;
});
afterAll(async () => {
  for (const p of policies) await p.close();
  await new Promise<void>((resolve) => target.server.close(() => resolve()));
});

describe('outbound policy', () => {
  it('refuses every internal address form without connecting', async () => {
    const p = policy();
    const port = target.port;
    const urls = [
      `http://127.0.0.1:${port}/`,
      `http://0x7f000001:${port}/`,
      `http://2130706433:${port}/`,
      `http://0177.0.0.1:${port}/`,
      `http://127.1:${port}/`,
      `http://[::1]:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://[::ffff:7f00:1]:${port}/`,
      `http://localhost:${port}/`,
      `http://loopback.vigil.test:${port}/`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://172.16.0.1/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://[fd00::1]/',
      'http://[fe80::1]/',
      'http://0.0.0.0/',
      'http://[::]/',
      'http://224.0.0.1/',
      'http://255.255.255.255/',
      'http://[2002:7f00:1::1]/',
      'http://[64:ff9b::7f00:1]/',
      'http://mixed.vigil.test/',
    ];
    for (const url of urls) {
      const cause = await refusal(p, url);
      expect(cause, url).toBeInstanceOf(OutboundRefusedError);
      await expect(p.checkUrl(url), url).rejects.toBeInstanceOf(OutboundRefusedError);
    }
    expect(target.seen).toHaveLength(0);
  });

  it('refuses the service itself: its public host and this machine’s addresses', async () => {
    const p = policy({ selfHosts: ['vigil.example.test'], selfAddresses: ['93.184.216.34'] });
    await expect(p.checkUrl('https://vigil.example.test/api')).rejects.toMatchObject({ reason: 'self' });
    await expect(p.checkUrl('https://93.184.216.34/')).rejects.toMatchObject({ reason: 'self' });
  });

  it('reads the same for an open and a closed port', async () => {
    const p = policy();
    const open = (await refusal(p, `http://127.0.0.1:${target.port}/`)) as Error;
    const closed = (await refusal(p, `http://127.0.0.1:${closedPort}/`)) as Error;
    expect(open.message).toBe(closed.message);
    expect(open.message).not.toMatch(/ECONN|connection refused|\d{4,5}/i);
  });

  it('connects to allowed addresses, by CIDR or by host name', async () => {
    const byCidr = policy({ allow: parseOutboundAllow('127.0.0.1/32') });
    const res = await byCidr.fetch(`http://127.0.0.1:${target.port}/ok`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ path: '/ok' });
    // The IPv4-mapped form is the same address, allowed by the same range.
    expect(byCidr.isAddressAllowed('::ffff:127.0.0.1')).toBe(true);
    const byHost = policy({ allow: parseOutboundAllow('loopback.vigil.test') });
    expect((await byHost.fetch(`http://loopback.vigil.test:${target.port}/named`)).status).toBe(200);
    expect(target.seen.map((r) => r.headers.host)).toEqual([
      `127.0.0.1:${target.port}`,
      `loopback.vigil.test:${target.port}`,
    ]);
  });

  it('checks every redirect: an allowed host that redirects to loopback is refused', async () => {
    const p = policy({ allow: parseOutboundAllow('loopback.vigil.test') });
    const to = encodeURIComponent(`http://127.0.0.1:${target.port}/secret`);
    const cause = await refusal(p, `http://loopback.vigil.test:${target.port}/redirect?to=${to}`);
    expect(cause).toBeInstanceOf(OutboundRefusedError);
    expect(target.seen.map((r) => r.url)).toEqual([`/redirect?to=${to}`]);
  });

  it('follows allowed redirects and drops credentials when the origin changes', async () => {
    const p = policy({ allow: parseOutboundAllow('127.0.0.1/32, loopback.vigil.test') });
    const to = encodeURIComponent(`http://127.0.0.1:${target.port}/landed`);
    const res = await p.fetch(`http://loopback.vigil.test:${target.port}/redirect?to=${to}`, {
      headers: { authorization: 'Bearer secret-token' },
    });
    expect(await res.json()).toEqual({ path: '/landed', authorization: null });
    const manual = await p.fetch(`http://127.0.0.1:${target.port}/redirect?to=/x`, { redirect: 'manual' });
    expect(manual.status).toBe(302);
  });

  it('connects to the address it checked: a name that rebinds to loopback is refused', async () => {
    let calls = 0;
    const p = policy({
      resolve: async () => {
        calls++;
        // Public when the settings are saved, loopback when the connection is made.
        return [calls === 1 ? { address: '93.184.216.34', family: 4 } : { address: '127.0.0.1', family: 4 }];
      },
    });
    await expect(p.checkUrl(`http://rebind.vigil.test:${target.port}/`)).resolves.toBeUndefined();
    const cause = await refusal(p, `http://rebind.vigil.test:${target.port}/`);
    expect(cause).toBeInstanceOf(OutboundRefusedError);
    expect(target.seen).toHaveLength(0);
  });

  it('gives Node agents a lookup that yields only allowed addresses', async () => {
    const p = policy();
    const result = await new Promise<{ err: Error | null }>((resolve) =>
      p.lookup('localhost', { all: true }, (err) => resolve({ err })),
    );
    expect(result.err).toBeInstanceOf(OutboundRefusedError);
  });

  it('refuses an S3 endpoint on an internal address, and resolves named endpoints through its lookup', async () => {
    const p = policy();
    expect(() => createObjectStore('s3://bucket-a?endpoint=http://169.254.169.254', p)).toThrow(
      /refused by the outbound policy/,
    );
    const store = createObjectStore(
      `s3://AKID:SECRET@bucket-a?endpoint=http://localhost:${target.port}&forcePathStyle=true`,
      p,
    );
    try {
      await expect(store.head('uploads/x')).rejects.toThrow(/not allowed/);
      expect(target.seen).toHaveLength(0);
    } finally {
      await store.close();
    }
  });

  it('refuses schemes other than http and https', async () => {
    const p = policy();
    await expect(p.checkUrl('file:///etc/passwd')).rejects.toMatchObject({ reason: 'scheme' });
    await expect(p.checkUrl('gopher://example.com/')).rejects.toMatchObject({ reason: 'scheme' });
  });
});

describe('VIGIL_OUTBOUND_ALLOW', () => {
  it('parses host names, addresses and CIDR ranges', () => {
    expect(
      parseOutboundAllow('10.0.0.0/8, tracker.corp.example 127.0.0.1 ::1 [fd00::]/8 ::ffff:10.1.0.0/112'),
    ).toEqual({
      hosts: ['tracker.corp.example'],
      cidrs: ['10.0.0.0/8', '127.0.0.1/32', '::1/128', 'fd00::/8', '10.1.0.0/16'],
    });
    expect(parseOutboundAllow(null)).toEqual({ hosts: [], cidrs: [] });
  });

  it('refuses entries that are none of them', () => {
    expect(() => parseOutboundAllow('10.0.0.0/33')).toThrow(ConfigError);
    expect(() => parseOutboundAllow('http://tracker')).toThrow(/VIGIL_OUTBOUND_ALLOW/);
    expect(() => parseOutboundAllow('2130706433')).toThrow(ConfigError);
  });
});
