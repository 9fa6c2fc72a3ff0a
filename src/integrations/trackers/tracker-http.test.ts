import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.ts';
import { toTrackerAppError } from './tracker-errors.ts';
import {
  classifyLostCreate,
  classifyNoAnswer,
  computeBackoffMs,
  parseRetryAfter,
  sanitizeProviderText,
} from './tracker-http.ts';

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');

  it('reads whole seconds', () => {
    expect(parseRetryAfter('7', now)).toBe(7000);
  });

  it('reads an HTTP date as the time left until it', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now)).toBe(30_000);
  });

  it('never returns a negative wait for a date in the past', () => {
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:59:00 GMT', now)).toBe(0);
  });

  it('ignores an absent or unreadable value', () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
  });
});

describe('computeBackoffMs', () => {
  it('doubles per attempt within a half-to-full jitter band and stops at the cap', () => {
    expect(computeBackoffMs(0, 1000, 30_000, () => 0)).toBe(500);
    expect(computeBackoffMs(0, 1000, 30_000, () => 0.999_999)).toBe(1000);
    expect(computeBackoffMs(3, 1000, 30_000, () => 0)).toBe(4000);
    expect(computeBackoffMs(10, 1000, 30_000, () => 0)).toBe(15_000);
  });
});

describe('sanitizeProviderText', () => {
  it('removes secrets and markup and caps the length', () => {
    const text = sanitizeProviderText('<p>bad token sk-secret-123 </p>', ['sk-secret-123'], 300);
    expect(text).toBe('bad token [redacted]');
    expect(sanitizeProviderText('x'.repeat(500), [], 50)).toHaveLength(50);
  });
});

describe('toTrackerAppError', () => {
  it('maps each failed outcome to its error code', () => {
    expect(toTrackerAppError('tracker_b', { kind: 'not_found' }).code).toBe('TICKET_NOT_FOUND');
    expect(
      toTrackerAppError('tracker_b', {
        kind: 'ambiguous_key',
        siteUrls: ['https://a', 'https://b'],
        message: 'm',
      }),
    ).toMatchObject({ code: 'AMBIGUOUS_TICKET', details: { sites: ['https://a', 'https://b'] } });
    expect(toTrackerAppError('tracker_b', { kind: 'not_connected', message: 'm' }).code).toBe(
      'INTEGRATION_NOT_CONNECTED',
    );
    expect(toTrackerAppError('tracker_a', { kind: 'ambiguous', message: 'lost' })).toMatchObject({
      code: 'PROVIDER_ERROR',
      status: 502,
      details: { provider: 'tracker_a', ambiguous: true },
    });
  });

  it('passes the provider delay on as Retry-After', () => {
    const error = toTrackerAppError('tracker_a', {
      kind: 'error',
      reason: 'rate_limited',
      status: 400,
      message: 'limited',
      retryable: true,
      retryAfterSeconds: 30,
    });
    expect(error).toBeInstanceOf(AppError);
    expect(error.headers).toEqual({ 'Retry-After': '30' });
    expect(error.details).toEqual({ provider: 'tracker_a', reason: 'rate_limited', providerStatus: 400 });
  });
});

describe('classifyNoAnswer and classifyLostCreate', () => {
  const lost = { kind: 'transport', timedOut: false, message: 'the connection was reset' } as const;
  const limited = {
    kind: 'rate_limited',
    answer: { kind: 'answer', status: 429, headers: new Headers(), text: '', json: undefined },
    retryAfterSeconds: 30,
  } as const;

  it('classifies a lost answer the same way for both trackers, but for the name', () => {
    for (const provider of ['tracker_a', 'tracker_b'] as const) {
      expect(classifyNoAnswer(provider, lost, 'read the issue')).toEqual({
        kind: 'error',
        reason: 'unavailable',
        retryable: true,
        message: `${provider} did not answer the request to read the issue: the connection was reset`,
      });
      expect(classifyLostCreate(provider, lost)).toEqual({
        kind: 'ambiguous',
        message: `${provider} did not answer the create (the connection was reset); the issue may exist`,
      });
    }
  });

  it('reports a rate-limited request (a create too) as retryable with the wait, never as ambiguous', () => {
    for (const provider of ['tracker_a', 'tracker_b'] as const) {
      const expected = {
        kind: 'error',
        reason: 'rate_limited',
        status: 429,
        retryable: true,
        retryAfterSeconds: 30,
        message: `${provider} is rate limiting requests to create the issue`,
      };
      expect(classifyNoAnswer(provider, limited, 'create the issue')).toEqual(expected);
      expect(classifyLostCreate(provider, limited)).toEqual(expected);
    }
  });
});
