import type { Redis } from 'ioredis';

/** The outcome of taking one token from a credential's bucket. */
export interface RateLimitDecision {
  allowed: boolean;
  /** Bucket size. */
  limit: number;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until the bucket is full again (≥ 0). */
  resetSeconds: number;
  /** Seconds until one token is available (≥ 1) when refused. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  take(key: string): Promise<RateLimitDecision>;
  /**
   * Whether a token is available in the bucket, without taking it: `allowed` false when it is
   * empty. For checks that must refuse before they do any work, and spend only when it failed.
   */
  peek(key: string): Promise<RateLimitDecision>;
  close(): Promise<void>;
}

export interface TokenBucketPolicy {
  /** Tokens added per minute. */
  requestsPerMinute: number;
  /** Bucket capacity. */
  burst: number;
}

function decide(policy: TokenBucketPolicy, tokens: number, allowed: boolean): RateLimitDecision {
  const perSecond = policy.requestsPerMinute / 60;
  const missing = policy.burst - tokens;
  return {
    allowed,
    limit: policy.burst,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.max(0, Math.ceil(missing / perSecond)),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / perSecond)),
  };
}

/** Token buckets in this process's memory (one API process). */
export function createMemoryRateLimiter(
  policy: TokenBucketPolicy,
  now: () => number = Date.now,
): RateLimiter {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const perMs = policy.requestsPerMinute / 60_000;
  let lastSweep = now();
  const take = (key: string, cost: 0 | 1): RateLimitDecision => {
    const t = now();
    if (t - lastSweep > 60_000) {
      // Full buckets carry no information; dropping them bounds memory.
      for (const [k, b] of buckets) if (b.tokens + (t - b.at) * perMs >= policy.burst) buckets.delete(k);
      lastSweep = t;
    }
    const bucket = buckets.get(key) ?? { tokens: policy.burst, at: t };
    const tokens = Math.min(policy.burst, bucket.tokens + (t - bucket.at) * perMs);
    const allowed = tokens >= 1;
    const left = allowed ? tokens - cost : tokens;
    if (cost > 0 || buckets.has(key)) buckets.set(key, { tokens: left, at: t });
    return decide(policy, left, allowed);
  };
  return {
    async take(key) {
      return take(key, 1);
    },
    async peek(key) {
      return take(key, 0);
    },
    async close() {},
  };
}

// Refill and take (cost 1) or look (cost 0) in one atomic script so that replicas sharing Redis share one bucket.
const TAKE_SCRIPT = `
local key = KEYS[1]
local capacity = tonumber(ARGV[1])
local per_ms = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local state = redis.call('HMGET', key, 'tokens', 'at')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil then
  if cost == 0 then return {1, tostring(capacity)} end
  tokens = capacity; at = now
end
tokens = math.min(capacity, tokens + math.max(0, now - at) * per_ms)
local allowed = 0
if tokens >= 1 then tokens = tokens - cost; allowed = 1 end
redis.call('HSET', key, 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', key, math.ceil(capacity / per_ms) + 1000)
return {allowed, tostring(tokens)}
`;

/** Token buckets in Redis, shared by every API replica. */
export function createRedisRateLimiter(
  redis: Redis,
  policy: TokenBucketPolicy,
  prefix = 'vigil:rl:',
): RateLimiter {
  const perMs = policy.requestsPerMinute / 60_000;
  const take = async (key: string, cost: 0 | 1) => {
    const [allowed, tokens] = (await redis.eval(TAKE_SCRIPT, 1, prefix + key, policy.burst, perMs, cost)) as [
      number,
      string,
    ];
    return decide(policy, Number(tokens), allowed === 1);
  };
  return {
    take: (key) => take(key, 1),
    peek: (key) => take(key, 0),
    async close() {
      redis.disconnect();
    },
  };
}

/** The IETF draft headers: `RateLimit-Policy` and `RateLimit` (structured fields). */
export function rateLimitHeaders(
  policy: TokenBucketPolicy,
  decision: RateLimitDecision,
): Record<string, string> {
  const windowSeconds = Math.ceil((policy.burst / policy.requestsPerMinute) * 60);
  return {
    'ratelimit-policy': `"default";q=${policy.burst};w=${windowSeconds}`,
    ratelimit: `"default";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}
