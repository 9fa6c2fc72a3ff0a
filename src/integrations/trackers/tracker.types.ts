/**
 * The shapes shared by the issue-tracker adapters: what a provider answer means (the outcome),
 * what an issue looks like once verified or created, where new issues go (the destination) and
 * what a parsed issue reference holds.
 *
 * Every provider answer is classified into exactly one outcome so that the ticket service can
 * decide between linking, failing the export, or marking it unknown and reconciling later.
 */

/** The two issue-tracker providers, as they appear on the wire of the v1 API. */
export type TrackerProvider = 'tracker_a' | 'tracker_b';

/** Why a provider request failed definitively (or could not be completed at all). */
export type ProviderErrorReason =
  /** The credential was refused (bad, expired or revoked key or token). */
  | 'auth'
  /** The credential is valid but lacks permission for this project, team or issue. */
  | 'forbidden'
  /** The provider rejected the request as invalid (bad field, unknown project, ADF rejected…). */
  | 'rejected'
  /** Still rate limited after the bounded retries; the request was not processed. */
  | 'rate_limited'
  /** Timeout, connection reset or 5xx on a read: nothing changed, retrying is safe. */
  | 'unavailable'
  /** The provider answered something this adapter does not understand. */
  | 'protocol'
  /** The adapter was called with a reference or destination of another site or provider. */
  | 'misconfigured';

/**
 * The classification of one provider interaction.
 * - `ok`: the provider answered with the value.
 * - `not_found`: the provider says (with working credentials) that the issue does not exist.
 * - `error`: the provider said no, or a read could not be completed; nothing was created.
 *   `retryable` is true when the identical call may succeed later (rate limit, outage on a read).
 * - `ambiguous`: a write may or may not have happened (timeout, reset or 5xx on create);
 *   reconcile with `findCreated` before any new create.
 */
export type ProviderOutcome<T> =
  | { readonly kind: 'ok'; readonly value: T }
  | { readonly kind: 'not_found' }
  | {
      readonly kind: 'error';
      readonly reason: ProviderErrorReason;
      /** The provider's HTTP status when there was an answer. */
      readonly status?: number;
      /** A message safe to store and show: never holds a credential. */
      readonly message: string;
      readonly retryable: boolean;
      /** Seconds the provider asked to wait, when it said so. */
      readonly retryAfterSeconds?: number;
    }
  | { readonly kind: 'ambiguous'; readonly message: string };

/** The error branch of a provider outcome. */
export type ProviderError = Extract<ProviderOutcome<unknown>, { kind: 'error' }>;

/** An issue as the provider reports it; what the ticket service stores as a FindingTicket. */
export interface TrackerIssue {
  /** The provider's stable id: tracker_a issue UUID, tracker_b numeric issue id. */
  readonly externalId: string;
  /** The human key as the provider returns it now (`ENG-123`); may differ from the one asked for. */
  readonly key: string;
  /** The browse URL of the issue. */
  readonly url: string;
  readonly title: string;
  /** The workflow state name, when the provider returned it. */
  readonly status: string | null;
}

/** Where tracker_a creates issues. */
export interface TrackerADestination {
  readonly provider: 'tracker_a';
  /** The team UUID (required by issueCreate). */
  readonly teamId: string;
  /** Label UUIDs to attach. */
  readonly labelIds?: readonly string[];
  /** 0 none, 1 urgent, 2 high, 3 normal, 4 low; derived from the severity when absent. */
  readonly priority?: 0 | 1 | 2 | 3 | 4;
}

/** Where tracker_b creates issues. */
export interface TrackerBDestination {
  readonly provider: 'tracker_b';
  /** The site the project lives on, as connected (`https://acme.atlassian.net`). */
  readonly siteUrl: string;
  readonly projectKey: string;
  /** The issue type name; `Bug` when absent. */
  readonly issueType?: string;
}

/** A configured destination of either provider. */
export type Destination = TrackerADestination | TrackerBDestination;

/** A finding's content as sent to a tracker. */
export interface TicketFindingContent {
  readonly id: string;
  readonly title: string;
  /** Markdown text; may be empty. */
  readonly description: string | null;
  /** `critical`, `high`, `medium`, `low`, `informational` … in any case. */
  readonly severity: string;
  readonly location?: { readonly file: string; readonly startLine: number; readonly endLine: number };
  readonly identifiers: ReadonlyArray<{
    readonly type: string;
    readonly name: string;
    readonly value: string;
  }>;
  /** The finding's page in Vigil. */
  readonly url: string;
}

/**
 * A tracker_a issue reference: `lookup` is what `issue(id:)` accepts, the issue UUID (lower case)
 * or the identifier (upper case).
 */
export interface TrackerAIssueRef {
  readonly provider: 'tracker_a';
  readonly form: 'key' | 'uuid' | 'url';
  readonly lookup: string;
}

/**
 * A tracker_b issue reference: the upper-cased key and, when the reference was a URL, the
 * connected site it names. A bare key (`siteUrl: null`) is resolved across every connected site.
 */
export interface TrackerBIssueRef {
  readonly provider: 'tracker_b';
  readonly form: 'key' | 'url';
  readonly key: string;
  readonly siteUrl: string | null;
}

/** A parsed, syntactically valid issue reference. */
export type ParsedIssueRef = TrackerAIssueRef | TrackerBIssueRef;

/** What `createIssue` needs. */
export interface CreateIssueInput {
  /**
   * A UUID v4 chosen by the caller and stored before the call. tracker_a creates the issue with
   * this id, so that `findCreated` can ask for it after an ambiguous failure.
   */
  readonly clientId: string;
  readonly finding: TicketFindingContent;
  readonly destination: Destination;
}

/** What `findCreated` needs to find an issue whose create was ambiguous. */
export interface FindCreatedInput {
  /** The UUID sent with the create (tracker_a). */
  readonly clientId: string;
  /** The finding whose deterministic label was sent with the create (tracker_b). */
  readonly findingId: string;
  readonly destination: Destination;
}

/** The operations the ticket service uses, the same for both providers. */
export interface TrackerAdapter {
  readonly provider: TrackerProvider;
  /** Reads the issue the reference names; never changes anything at the provider. */
  verifyIssue(ref: ParsedIssueRef): Promise<ProviderOutcome<TrackerIssue>>;
  /** Creates an issue for the finding in the destination. */
  createIssue(input: CreateIssueInput): Promise<ProviderOutcome<TrackerIssue>>;
  /**
   * Looks for the issue an earlier ambiguous create may have made. `not_found` means it was
   * searched for successfully and is not there, so a new create is safe.
   */
  findCreated(input: FindCreatedInput): Promise<ProviderOutcome<TrackerIssue>>;
}
