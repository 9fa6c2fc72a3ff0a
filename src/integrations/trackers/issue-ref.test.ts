import { describe, expect, it } from 'vitest';
import { isAppError } from '../../errors.ts';
import { parseIssueRef, parseIssueRefOrThrow } from './issue-ref.ts';

const SITES = ['https://acme.atlassian.net', 'https://beta.atlassian.net/'];

describe('parseIssueRef for tracker_b', () => {
  it('upper-cases a bare key and leaves the site open', () => {
    expect(parseIssueRef('tracker_b', ' proj_2-17 ', { sites: SITES })).toEqual({
      kind: 'ok',
      ref: { provider: 'tracker_b', form: 'key', key: 'PROJ_2-17', siteUrl: null },
    });
  });

  it.each(['P-1', 'PROJ-0', 'PROJ-01', '1PROJ-3', 'PROJ 1', 'PROJ-1-2', ''])('rejects the key %j', (ref) => {
    expect(parseIssueRef('tracker_b', ref, { sites: SITES }).kind).toBe('invalid');
  });

  it('rejects a UUID', () => {
    expect(parseIssueRef('tracker_b', '8d7f5c1e-4c2b-4a55-9d0e-2f1b3c4d5e6f').kind).toBe('invalid');
  });

  it.each([
    ['https://acme.atlassian.net/browse/proj-1', 'https://acme.atlassian.net', 'PROJ-1'],
    ['https://ACME.atlassian.net/browse/PROJ-12/', 'https://acme.atlassian.net', 'PROJ-12'],
    [
      'https://beta.atlassian.net/jira/software/c/projects/PROJ/issues/PROJ-3',
      'https://beta.atlassian.net/',
      'PROJ-3',
    ],
    [
      'https://beta.atlassian.net/jira/software/projects/PROJ/issues/PROJ-4?filter=all',
      'https://beta.atlassian.net/',
      'PROJ-4',
    ],
    [
      'https://acme.atlassian.net/jira/software/c/projects/PROJ/boards/7?selectedIssue=PROJ-5',
      'https://acme.atlassian.net',
      'PROJ-5',
    ],
    [
      'https://acme.atlassian.net/issues/?jql=project%3DPROJ&selectedIssue=proj-6',
      'https://acme.atlassian.net',
      'PROJ-6',
    ],
  ])('reads %s as an issue of its site', (url, siteUrl, key) => {
    expect(parseIssueRef('tracker_b', url, { sites: SITES })).toEqual({
      kind: 'ok',
      ref: { provider: 'tracker_b', form: 'url', key, siteUrl },
    });
  });

  it('reports a URL of an unconnected site instead of trying another site', () => {
    const result = parseIssueRef('tracker_b', 'https://other.atlassian.net/browse/PROJ-1', { sites: SITES });
    expect(result).toEqual({
      kind: 'not_connected',
      message: 'No connected site has the host other.atlassian.net.',
    });
  });

  it.each([
    'http://acme.atlassian.net/browse/PROJ-1',
    'ftp://acme.atlassian.net/browse/PROJ-1',
    'https://acme.atlassian.net/projects/PROJ',
    'https://acme.atlassian.net/browse/not-a-key',
    'https://acme.atlassian.net/browse/PROJ-1/extra',
  ])('rejects %s', (url) => {
    expect(parseIssueRef('tracker_b', url, { sites: SITES }).kind).toBe('invalid');
  });

  it('accepts the scheme of a connected site that is not HTTPS', () => {
    expect(
      parseIssueRef('tracker_b', 'http://127.0.0.1:4000/browse/ENG-1', { sites: ['http://127.0.0.1:4000'] }),
    ).toMatchObject({ kind: 'ok', ref: { siteUrl: 'http://127.0.0.1:4000', key: 'ENG-1' } });
  });

  it('rejects references longer than 2048 characters', () => {
    expect(
      parseIssueRef('tracker_b', `https://acme.atlassian.net/browse/PROJ-1?x=${'a'.repeat(2048)}`, {
        sites: SITES,
      }).kind,
    ).toBe('invalid');
  });
});

describe('parseIssueRef for tracker_a', () => {
  const context = { workspaceUrlKey: 'acme' };

  it('upper-cases an identifier', () => {
    expect(parseIssueRef('tracker_a', 'eng-123', context)).toEqual({
      kind: 'ok',
      ref: { provider: 'tracker_a', form: 'key', lookup: 'ENG-123' },
    });
  });

  it('lower-cases a UUID', () => {
    expect(parseIssueRef('tracker_a', '8D7F5C1E-4C2B-4A55-9D0E-2F1B3C4D5E6F', context)).toEqual({
      kind: 'ok',
      ref: { provider: 'tracker_a', form: 'uuid', lookup: '8d7f5c1e-4c2b-4a55-9d0e-2f1b3c4d5e6f' },
    });
  });

  it.each([
    'https://linear.app/acme/issue/ENG-123/reentrancy-in-vault',
    'https://linear.app/acme/issue/eng-123',
    'https://linear.app/ACME/issue/ENG-123/',
    'https://linear.app/acme/issue/ENG-123/slug#comment-1',
  ])('reads %s as ENG-123', (url) => {
    expect(parseIssueRef('tracker_a', url, context)).toEqual({
      kind: 'ok',
      ref: { provider: 'tracker_a', form: 'url', lookup: 'ENG-123' },
    });
  });

  it('reports a URL of another workspace as not connected', () => {
    expect(parseIssueRef('tracker_a', 'https://linear.app/other/issue/ENG-123', context).kind).toBe(
      'not_connected',
    );
  });

  it('reports a URL as not connected when the workspace is unknown', () => {
    expect(parseIssueRef('tracker_a', 'https://linear.app/acme/issue/ENG-123', {}).kind).toBe(
      'not_connected',
    );
  });

  it('accepts a configured app host', () => {
    expect(
      parseIssueRef('tracker_a', 'https://tracker.example.test/acme/issue/ENG-1', {
        ...context,
        appUrl: 'https://tracker.example.test',
      }),
    ).toMatchObject({ kind: 'ok', ref: { lookup: 'ENG-1' } });
  });

  it.each([
    'https://evil.example/acme/issue/ENG-123',
    'http://linear.app/acme/issue/ENG-123',
    'https://linear.app/acme/project/foo',
    'https://linear.app/acme/issue/ENG-0',
    'ENG_123',
    'ENG-',
  ])('rejects %s', (ref) => {
    expect(parseIssueRef('tracker_a', ref, context).kind).toBe('invalid');
  });
});

describe('parseIssueRefOrThrow', () => {
  it('throws INVALID_ISSUE_REF for a malformed reference', () => {
    expect(() => parseIssueRefOrThrow('tracker_b', 'nonsense')).toThrow(
      expect.objectContaining({ code: 'INVALID_ISSUE_REF', status: 400 }),
    );
  });

  it('throws INTEGRATION_NOT_CONNECTED for a URL of an unconnected site', () => {
    let caught: unknown;
    try {
      parseIssueRefOrThrow('tracker_b', 'https://other.atlassian.net/browse/PROJ-1', { sites: SITES });
    } catch (err) {
      caught = err;
    }
    expect(isAppError(caught, 'INTEGRATION_NOT_CONNECTED')).toBe(true);
  });
});
