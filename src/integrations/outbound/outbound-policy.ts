/**
 * The outbound policy: the one gate every connection the service opens to a destination it did
 * not choose itself goes through (issue trackers, the sourcehost, the LLM endpoint, webhooks, the
 * S3 endpoint).
 *
 * A destination is refused when any address it resolves to is loopback, link-local, private,
 * carrier-grade NAT, unique-local, unspecified, multicast, broadcast, reserved, an IPv4-in-IPv6
 * transition form (6to4, Teredo, NAT64) or one of this machine's own addresses, unless the host or
 * the address is allowed by `VIGIL_OUTBOUND_ALLOW`. Only global unicast addresses pass by default.
 *
 * The check runs where the socket is opened (undici's connector, Node's `lookup`), on the address
 * the socket is opened to: a name that resolves to a public address when checked and to loopback
 * when connected (DNS rebinding) is refused, because the name is resolved once and the checked
 * address is the one connected to. Redirects are followed by hand, each hop through the same gate.
 *
 * Refusals carry one message whatever lies behind the address: no connection is attempted, so
 * nothing tells an open port from a closed one.
 */

import type { LookupAddress, LookupAllOptions, LookupOneOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';
import {
  Agent,
  buildConnector,
  type Dispatcher,
  type Response as UndiciResponse,
  fetch as undiciFetch,
} from 'undici';

/** Statuses whose response has no body (the Fetch standard's null body statuses). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * undici's answer as the global `Response` the callers are typed against: the same status, status
 * text, headers and body stream (not read here). The package's `Response` and Node's global one
 * are separate classes with separate declarations, so it is handed out as a new global `Response`.
 */
function toGlobalResponse(response: UndiciResponse): Response {
  return new Response(NULL_BODY_STATUSES.has(response.status) ? null : response.body, {
    status: response.status,
    statusText: response.statusText,
    headers: [...response.headers],
  });
}

/** `VIGIL_OUTBOUND_ALLOW`, parsed: host names and address ranges the operator trusts. */
export interface OutboundAllowList {
  /** Lower-case host names, exact match (`tracker.corp.example`). */
  readonly hosts: readonly string[];
  /** CIDR ranges in canonical form (`10.0.0.0/8`, `127.0.0.1/32`, `fd00::/8`). */
  readonly cidrs: readonly string[];
}

/** Resolves a host name to every address it has (the default is the system resolver). */
export type OutboundResolver = (hostname: string) => Promise<readonly LookupAddress[]>;

export interface OutboundPolicyOptions {
  readonly allow: OutboundAllowList;
  /** Host names that are this service (the host of `VIGIL_PUBLIC_URL`): refused unless allowed. */
  readonly selfHosts?: readonly string[];
  /** Addresses that are this machine's; default: every address of its network interfaces. */
  readonly selfAddresses?: readonly string[];
  /** Replaces the system resolver (tests resolve names to loopback without DNS). */
  readonly resolve?: OutboundResolver;
  /** How many redirects `fetch` follows (default 5). */
  readonly maxRedirects?: number;
  /** Connect timeout of one connection (default 10 s). */
  readonly connectTimeoutMs?: number;
}

/** The message of every refusal: the same for every reason and every port. */
export const OUTBOUND_REFUSED_MESSAGE =
  'The destination is not allowed: it must be a public address (private, loopback, link-local and this service are refused unless listed in VIGIL_OUTBOUND_ALLOW).';

/** A destination the policy refuses. `code` is `OUTBOUND_REFUSED`; `reason` is for logs only. */
export class OutboundRefusedError extends Error {
  override name = 'OutboundRefusedError';
  readonly code = 'OUTBOUND_REFUSED';
  constructor(
    /** Why, for the logs (`loopback`, `private`, `self`, `unresolvable`, `scheme` …). */
    readonly reason: string,
    readonly host: string,
  ) {
    super(OUTBOUND_REFUSED_MESSAGE);
  }
}

/** True when `err` or one of its causes is an {@link OutboundRefusedError}. */
export function isOutboundRefused(err: unknown): err is Error {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof OutboundRefusedError || (e as { code?: unknown }).code === 'OUTBOUND_REFUSED')
      return true;
  }
  return false;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** What the policy gives: a checked `fetch`, its dispatcher, and the checks on their own. */
export interface OutboundPolicy {
  /**
   * A drop-in `fetch` whose connections go through the policy. Redirects are followed by hand
   * (`redirect: 'follow'`, the default), each hop checked, credentials dropped when the origin
   * changes; `manual` returns the 3xx as is.
   */
  readonly fetch: typeof globalThis.fetch;
  /** The undici dispatcher that checks the address of every connection it opens. */
  readonly dispatcher: Dispatcher;
  /** A `dns.lookup`-compatible function that only yields allowed addresses (Node `http.Agent`). */
  readonly lookup: (
    hostname: string,
    options: LookupOneOptions | LookupAllOptions,
    callback: LookupCallback,
  ) => void;
  /**
   * Checks an http(s) URL: resolves its host and throws {@link OutboundRefusedError} unless every
   * address is allowed. For settings being saved; connections are checked again when opened.
   */
  checkUrl(url: string | URL): Promise<void>;
  /** The allowed addresses of `hostname` (throws when refused), for clients that pin them (git). */
  resolve(hostname: string): Promise<LookupAddress[]>;
  /** True when the address literal may be connected to. */
  isAddressAllowed(address: string): boolean;
  close(): Promise<void>;
}

const defaultResolver: OutboundResolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      if (err) reject(err);
      else resolve(addresses);
    });
  });

function machineAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? []) out.push(entry.address);
  }
  return out;
}

/** `[::1]` → `::1`; host names lower-cased, without a trailing dot. */
function bareHost(hostname: string): string {
  const h = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return h.toLowerCase().replace(/\.$/, '');
}

function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bare = bareHost(address).replace(/%.*$/, '');
  if (!ipaddr.isValid(bare) || isIP(bare) === 0) return null;
  // `process` turns an IPv4-mapped IPv6 address (::ffff:127.0.0.1) into the IPv4 address it is.
  return ipaddr.process(bare);
}

/** Creates the policy; one per process (the container holds it). */
export function createOutboundPolicy(options: OutboundPolicyOptions): OutboundPolicy {
  const allowHosts = new Set(options.allow.hosts.map(bareHost));
  const allowRanges = options.allow.cidrs.map((cidr) => ipaddr.parseCIDR(cidr));
  const selfHosts = new Set((options.selfHosts ?? []).map(bareHost));
  const selfAddresses = new Set(
    (options.selfAddresses ?? machineAddresses())
      .map((a) => parseAddress(a)?.toNormalizedString())
      .filter((a): a is string => a !== undefined),
  );
  const resolver = options.resolve ?? defaultResolver;
  const maxRedirects = options.maxRedirects ?? 5;

  function addressVerdict(address: string): string | null {
    const parsed = parseAddress(address);
    if (!parsed) return 'not-an-address';
    for (const range of allowRanges) {
      if (range[0].kind() === parsed.kind() && parsed.match(range)) return null;
    }
    if (selfAddresses.has(parsed.toNormalizedString())) return 'self';
    const range = parsed.range();
    return range === 'unicast' ? null : range;
  }

  async function resolveChecked(hostname: string): Promise<LookupAddress[]> {
    const host = bareHost(hostname);
    if (host === '') throw new OutboundRefusedError('empty-host', host);
    const literal = parseAddress(host);
    if (literal) {
      const verdict = addressVerdict(host);
      if (verdict) throw new OutboundRefusedError(verdict, host);
      return [{ address: bareHost(hostname).replace(/%.*$/, ''), family: literal.kind() === 'ipv4' ? 4 : 6 }];
    }
    const trustedName = allowHosts.has(host);
    if (!trustedName && selfHosts.has(host)) throw new OutboundRefusedError('self', host);
    let addresses: readonly LookupAddress[];
    try {
      addresses = await resolver(host);
    } catch {
      throw new OutboundRefusedError('unresolvable', host);
    }
    if (addresses.length === 0) throw new OutboundRefusedError('unresolvable', host);
    if (!trustedName) {
      // Every address must pass: a name with one public and one internal address is refused, so
      // which one the client picks cannot matter.
      for (const entry of addresses) {
        const verdict = addressVerdict(entry.address);
        if (verdict) throw new OutboundRefusedError(verdict, host);
      }
    }
    return addresses.map((a) => ({ address: a.address, family: a.family }));
  }

  const baseConnector = buildConnector({ timeout: options.connectTimeoutMs ?? 10_000 });
  const connector: buildConnector.connector = (connectOptions, callback) => {
    resolveChecked(connectOptions.hostname).then(
      (addresses) => {
        const target = addresses[0]!;
        // `host` keeps the name, so TLS still checks the certificate against it (SNI too).
        baseConnector({ ...connectOptions, hostname: target.address }, callback);
      },
      (err: Error) => callback(err, null),
    );
  };
  const dispatcher = new Agent({ connect: connector });

  const lookup: OutboundPolicy['lookup'] = (hostname, lookupOptions, callback) => {
    resolveChecked(hostname).then(
      (addresses) => {
        const family = typeof lookupOptions === 'object' ? lookupOptions.family : undefined;
        const wanted =
          family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
        if (wanted.length === 0) {
          callback(new OutboundRefusedError('no-address-of-family', hostname), []);
        } else if (typeof lookupOptions === 'object' && lookupOptions.all) {
          callback(null, wanted);
        } else {
          callback(null, wanted[0]!.address, wanted[0]!.family);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };

  async function checkUrl(url: string | URL): Promise<void> {
    let parsed: URL;
    try {
      parsed = typeof url === 'string' ? new URL(url) : url;
    } catch {
      throw new OutboundRefusedError('invalid-url', '');
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
      throw new OutboundRefusedError('scheme', parsed.hostname);
    }
    await resolveChecked(parsed.hostname);
  }

  const policyFetch = (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    let url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    let method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    let headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    let body = init?.body ?? null;
    const mode = init?.redirect ?? 'follow';
    for (let hop = 0; ; hop++) {
      if (url.protocol !== 'https:' && url.protocol !== 'http:') {
        throw new TypeError('fetch failed', { cause: new OutboundRefusedError('scheme', url.hostname) });
      }
      const response = toGlobalResponse(
        await undiciFetch(url, {
          ...(init as Record<string, unknown>),
          method,
          headers,
          body: body as never,
          redirect: 'manual',
          dispatcher,
        } as never),
      );
      const location = response.headers.get('location');
      if (mode === 'manual' || response.status < 300 || response.status > 399 || location === null) {
        return response;
      }
      await response.body?.cancel().catch(() => undefined);
      if (mode === 'error') throw new TypeError('fetch failed', { cause: new Error('redirect refused') });
      if (hop >= maxRedirects)
        throw new TypeError('fetch failed', { cause: new Error('too many redirects') });
      const next = new URL(location, url);
      if (next.origin !== url.origin) {
        // Credentials were meant for the first origin only.
        for (const name of ['authorization', 'cookie', 'proxy-authorization', 'x-api-key'])
          headers.delete(name);
      }
      if (
        response.status === 303 ||
        ((response.status === 301 || response.status === 302) && method === 'POST')
      ) {
        method = method === 'HEAD' ? 'HEAD' : 'GET';
        body = null;
        headers = new Headers(headers);
        headers.delete('content-type');
        headers.delete('content-length');
      } else if (body instanceof ReadableStream) {
        throw new TypeError('fetch failed', {
          cause: new Error('cannot resend a streamed body on redirect'),
        });
      }
      url = next;
    }
  }) as typeof globalThis.fetch;

  return {
    fetch: policyFetch,
    dispatcher,
    lookup,
    checkUrl,
    resolve: resolveChecked,
    isAddressAllowed: (address) => addressVerdict(address) === null,
    async close() {
      await dispatcher.close();
    },
  };
}
