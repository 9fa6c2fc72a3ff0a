/**
 * Parsing of the `issueRef` of a ticket link request: a key, an HTTPS issue URL of a connected
 * site or workspace, or (tracker_a) an issue UUID. Parsing never calls a provider; it only says
 * what to ask for and where. A URL whose host is no connected site is reported as such, never
 * resolved on another site.
 */
import { AppError } from '../../errors.ts';
import { isUuid } from '../../strings.ts';
import type { ParsedIssueRef, TrackerProvider } from './tracker.types.ts';

/** What the parser needs to know about the company's connections. */
export interface IssueRefContext {
  /** tracker_b: the URLs of the connected sites (`https://acme.atlassian.net`). */
  readonly sites?: readonly string[];
  /** tracker_a: the `urlKey` of the connected workspace, as `organization { urlKey }` returns it. */
  readonly workspaceUrlKey?: string | null;
  /** tracker_a: the origin of issue URLs (default `https://linear.app`). */
  readonly appUrl?: string;
}

/** The result of parsing an issue reference. */
export type IssueRefParseResult =
  | { readonly kind: 'ok'; readonly ref: ParsedIssueRef }
  /** Not a key, URL or UUID this provider accepts. */
  | { readonly kind: 'invalid'; readonly message: string }
  /** A well-formed URL of a site or workspace the company has not connected. */
  | { readonly kind: 'not_connected'; readonly message: string };

/** The tracker_b key pattern, applied after upper-casing. */
export const TRACKER_B_KEY_PATTERN = /^[A-Z][A-Z0-9_]+-[1-9][0-9]*$/;
/** The tracker_a identifier pattern (team key, dash, number), applied after upper-casing. */
export const TRACKER_A_IDENTIFIER_PATTERN = /^[A-Z][A-Z0-9_]*-[1-9][0-9]*$/;
const DEFAULT_APP_URL = 'https://linear.app';
const MAX_REF_LENGTH = 2048;

/**
 * Parses `issueRef` for `provider`. Keys are upper-cased; a tracker_b URL picks its site by host;
 * a tracker_a URL must name the connected workspace.
 */
export function parseIssueRef(
  provider: TrackerProvider,
  issueRef: string,
  context: IssueRefContext = {},
): IssueRefParseResult {
  const raw = issueRef.trim();
  if (raw.length === 0 || raw.length > MAX_REF_LENGTH) {
    return { kind: 'invalid', message: 'The issue reference must be 1 to 2048 characters.' };
  }
  const isUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw);
  if (provider === 'tracker_b')
    return isUrl ? parseTrackerBUrl(raw, context.sites ?? []) : parseTrackerBKey(raw);
  return isUrl ? parseTrackerAUrl(raw, context) : parseTrackerAKeyOrUuid(raw);
}

/** Like `parseIssueRef`, but throws `INVALID_ISSUE_REF` or `INTEGRATION_NOT_CONNECTED`. */
export function parseIssueRefOrThrow(
  provider: TrackerProvider,
  issueRef: string,
  context: IssueRefContext = {},
): ParsedIssueRef {
  const result = parseIssueRef(provider, issueRef, context);
  if (result.kind === 'ok') return result.ref;
  if (result.kind === 'invalid') throw new AppError('INVALID_ISSUE_REF', { message: result.message });
  throw new AppError('INTEGRATION_NOT_CONNECTED', { message: result.message });
}

function parseTrackerBKey(raw: string): IssueRefParseResult {
  const key = raw.toUpperCase();
  if (!TRACKER_B_KEY_PATTERN.test(key)) {
    return { kind: 'invalid', message: 'Expected an issue key such as PROJ-123 or an issue URL.' };
  }
  return { kind: 'ok', ref: { provider: 'tracker_b', form: 'key', key, siteUrl: null } };
}

function parseTrackerAKeyOrUuid(raw: string): IssueRefParseResult {
  if (isUuid(raw)) {
    return { kind: 'ok', ref: { provider: 'tracker_a', form: 'uuid', lookup: raw.toLowerCase() } };
  }
  const identifier = raw.toUpperCase();
  if (!TRACKER_A_IDENTIFIER_PATTERN.test(identifier)) {
    return {
      kind: 'invalid',
      message: 'Expected an issue identifier such as ENG-123, an issue URL or an issue UUID.',
    };
  }
  return { kind: 'ok', ref: { provider: 'tracker_a', form: 'key', lookup: identifier } };
}

function parseUrl(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function pathSegments(url: URL): string[] {
  return url.pathname
    .split('/')
    .filter((s) => s.length > 0)
    .map(decodeSegment);
}

/** The issue key a tracker_b URL names, or null. */
function extractTrackerBKey(url: URL): string | null {
  const segments = pathSegments(url);
  // /browse/KEY-1
  if (segments.length === 2 && segments[0] === 'browse') return segments[1]!;
  // /jira/software/c/projects/KEY/issues/KEY-1 (and the company-managed and other product forms)
  if (segments[0] === 'jira') {
    const issuesAt = segments.lastIndexOf('issues');
    if (issuesAt === segments.length - 2 && segments[issuesAt - 2] === 'projects')
      return segments[issuesAt + 1]!;
  }
  // Boards, backlogs, filters and search pages open an issue with ?selectedIssue=KEY-1.
  return url.searchParams.get('selectedIssue');
}

function parseTrackerBUrl(raw: string, sites: readonly string[]): IssueRefParseResult {
  const url = parseUrl(raw);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    return { kind: 'invalid', message: 'The issue URL is not a valid HTTPS URL.' };
  }
  const host = url.host.toLowerCase();
  const site = sites.find((s) => parseUrl(s)?.host.toLowerCase() === host);
  if (site === undefined) {
    if (url.protocol !== 'https:') return { kind: 'invalid', message: 'The issue URL must use HTTPS.' };
    return { kind: 'not_connected', message: `No connected site has the host ${host}.` };
  }
  // Production sites are HTTPS; the scheme must be the connected site's own.
  if (parseUrl(site)?.protocol !== url.protocol) {
    return { kind: 'invalid', message: 'The issue URL must use HTTPS.' };
  }
  const candidate = extractTrackerBKey(url);
  const key = candidate?.toUpperCase() ?? '';
  if (!TRACKER_B_KEY_PATTERN.test(key)) {
    return { kind: 'invalid', message: 'The URL does not name an issue (expected /browse/PROJ-123).' };
  }
  return { kind: 'ok', ref: { provider: 'tracker_b', form: 'url', key, siteUrl: site } };
}

function parseTrackerAUrl(raw: string, context: IssueRefContext): IssueRefParseResult {
  const url = parseUrl(raw);
  const app = parseUrl(context.appUrl ?? DEFAULT_APP_URL);
  if (!url || !app || url.protocol !== app.protocol || url.host.toLowerCase() !== app.host.toLowerCase()) {
    return {
      kind: 'invalid',
      message: `The issue URL must be an ${app?.origin ?? DEFAULT_APP_URL} issue URL.`,
    };
  }
  const segments = pathSegments(url);
  // /{urlKey}/issue/{IDENTIFIER}/{optional-slug}
  if (segments.length < 3 || segments.length > 4 || segments[1] !== 'issue') {
    return {
      kind: 'invalid',
      message: 'The URL does not name an issue (expected /workspace/issue/ENG-123).',
    };
  }
  const identifier = segments[2]!.toUpperCase();
  if (!TRACKER_A_IDENTIFIER_PATTERN.test(identifier)) {
    return {
      kind: 'invalid',
      message: 'The URL does not name an issue (expected /workspace/issue/ENG-123).',
    };
  }
  const urlKey = segments[0]!.toLowerCase();
  const connected = context.workspaceUrlKey?.toLowerCase();
  if (connected === undefined || connected !== urlKey) {
    return { kind: 'not_connected', message: `The workspace ${urlKey} is not the connected workspace.` };
  }
  return { kind: 'ok', ref: { provider: 'tracker_a', form: 'url', lookup: identifier } };
}
