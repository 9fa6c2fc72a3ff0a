import ipaddr from 'ipaddr.js';
import { AppError, type ErrorCode, isAppError } from '../errors.ts';
import {
  type RateLimitDecision,
  type RateLimiter,
  rateLimitHeaders,
  type TokenBucketPolicy,
} from '../rate-limit.ts';
import { hashSecret } from './credentials.ts';

/** One kind of credential the server verifies. */
export interface CredentialCheck {
  /** What is verified, and where the caller presents it. */
  description: string;
  /** The security schemes of openapi.json whose credential this check verifies. */
  securitySchemes: readonly string[];
  /** Operations that verify a credential of this kind outside a security scheme (body, URL). */
  operations: readonly string[];
  /** What the per-target bucket counts failures against. */
  target: string;
  /** The error codes that mean the presented credential failed this check (they spend). */
  failures: readonly ErrorCode[];
}

/**
 * Every credential check of the server. Each is throttled per source address (one bucket shared
 * by all checks) and per target; a check added to the server is added here, and
 * `test/security/credential-throttle.test.ts` walks this table over HTTP.
 */
export const CREDENTIAL_CHECKS = {
  'user-token': {
    description: 'A user API token (`vgl_u_…`) in `Authorization: Bearer`',
    securitySchemes: ['UserBearer'],
    operations: [],
    target: 'the presented token',
    failures: ['INVALID_CREDENTIAL'],
  },
  'service-key': {
    description: 'An organization service key (`vgl_sk_…`) in `Authorization: Bearer` or `X-API-Key`',
    securitySchemes: ['ServiceBearer', 'ServiceApiKey'],
    operations: [],
    target: 'the presented key',
    failures: ['INVALID_CREDENTIAL'],
  },
  'console-session': {
    description: 'A console session id in the `vigil_session` cookie',
    securitySchemes: ['ConsoleSession'],
    operations: [],
    target: 'the presented session id',
    failures: ['INVALID_CREDENTIAL'],
  },
  'console-sign-in': {
    description: 'A user API token in the body of `POST /api/v0/session` (console sign-in)',
    securitySchemes: [],
    operations: ['openSession'],
    target: 'the presented token',
    failures: ['INVALID_CREDENTIAL'],
  },
  'sourcehost-webhook': {
    description: 'The `X-Hub-Signature-256` of an inbound source-host webhook',
    securitySchemes: ['WebhookSignature'],
    operations: ['receiveSourcehostWebhook'],
    target: 'the integration named in the path',
    failures: ['WEBHOOK_SIGNATURE_INVALID'],
  },
  'invitation-secret': {
    description:
      'The one-time secret of an invitation by e-mail, in the body of `acceptInvitation` and `declineInvitation`',
    securitySchemes: [],
    operations: ['acceptInvitation', 'declineInvitation'],
    target: 'the invitation named in the path',
    failures: ['NOT_FOUND'],
  },
  'upload-signature': {
    description: 'The signature of a signed upload URL of the embedded store',
    securitySchemes: [],
    operations: ['putSourceUpload'],
    target: 'the upload named in the path',
    failures: ['UPLOAD_URL_INVALID'],
  },
} as const satisfies Record<string, CredentialCheck>;

export type CredentialCheckName = keyof typeof CREDENTIAL_CHECKS;

/** Who attempts a check: the source address and the credential or integration aimed at. */
export interface CredentialAttempt {
  /** The caller's address (the request's `ip`). */
  address: string;
  /**
   * The credential or integration the attempt is aimed at. Secrets are hashed before they name a
   * bucket, so that no store (Redis included) holds a presented secret.
   */
  target: { secret: string } | { id: string };
}

/**
 * The source-address bucket of an address: an IPv4 address (IPv4-mapped IPv6 included) whole, an
 * IPv6 address by its /64 — one host or site usually holds a whole /64 and could otherwise take a
 * fresh address for every attempt.
 */
export function addressBucketOf(address: string): string {
  if (!ipaddr.isValid(address)) return address.slice(0, 64);
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}

/** The Redis (or memory) key of an attempt's per-target bucket. */
function targetKey(check: CredentialCheckName, target: CredentialAttempt['target']): string {
  return 'secret' in target
    ? `${check}:h:${hashSecret(target.secret).slice(0, 32)}`
    : `${check}:id:${target.id.slice(0, 64)}`;
}

/** The errors of attempts the throttle counted or refused (see {@link isThrottleOutcome}). */
const counted = new WeakSet<object>();

/**
 * True when `err` is a failed check the throttle counted, or its 429: the caller's buckets have
 * been spent for it already.
 */
export function isThrottleOutcome(err: unknown): boolean {
  return typeof err === 'object' && err !== null && counted.has(err);
}

function refused(check: CredentialCheckName, decision: RateLimitDecision): AppError {
  return mark(
    new AppError('RATE_LIMITED', {
      message: `Too many failed attempts (${CREDENTIAL_CHECKS[check].description.replace(/`/g, '')}); retry after the number of seconds in Retry-After.`,
      headers: { 'retry-after': String(decision.retryAfterSeconds) },
    }),
  );
}

function mark<E extends object>(err: E): E {
  counted.add(err);
  return err;
}

/**
 * The throttle of failed credential checks. Before a check, an empty bucket (the address's or the
 * target's) refuses with 429 and `Retry-After` without verifying anything — a refused guess
 * learns nothing, not even whether it was right. A failed check takes a token from both buckets;
 * a successful one takes none. With Redis the buckets are shared by every replica.
 */
export function createCredentialThrottle(deps: { limiter: RateLimiter; policy: TokenBucketPolicy }) {
  const headersOf = (decision: RateLimitDecision) => rateLimitHeaders(deps.policy, decision);

  return {
    policy: deps.policy,

    /**
     * Runs `verify` for `attempt` unless its buckets are empty. `setHeaders` receives the
     * RateLimit headers of a refused or failed attempt.
     */
    async attempt<T>(
      check: CredentialCheckName,
      attempt: CredentialAttempt,
      verify: () => Promise<T>,
      setHeaders: (headers: Record<string, string>) => void = () => {},
    ): Promise<T> {
      const keys = [`address:${addressBucketOf(attempt.address)}`, targetKey(check, attempt.target)];
      const looks = await Promise.all(keys.map((key) => deps.limiter.peek(key)));
      const empty = looks.find((d) => !d.allowed);
      if (empty) {
        setHeaders(headersOf(empty));
        throw refused(check, empty);
      }
      try {
        return await verify();
      } catch (err) {
        if (
          !isAppError(err) ||
          !(CREDENTIAL_CHECKS[check].failures as readonly ErrorCode[]).includes(err.code)
        ) {
          throw err;
        }
        const taken = await Promise.all(keys.map((key) => deps.limiter.take(key)));
        // The tighter bucket speaks for the attempt.
        const tightest = taken.reduce((a, b) => (b.remaining < a.remaining || !b.allowed ? b : a));
        setHeaders(headersOf(tightest));
        // Another replica emptied a bucket between the look and the take.
        if (!tightest.allowed) throw refused(check, tightest);
        throw mark(err);
      }
    },
  };
}

export type CredentialThrottle = ReturnType<typeof createCredentialThrottle>;
