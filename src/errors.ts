import type { JsonObject } from './json.ts';

/**
 * The one error type of the service and the table of its codes.
 *
 * Services throw `new AppError('CODE', { details })`; the HTTP layer renders the code as
 * `{error, code, ...details}` on v1 routes and `{msg}` on v0 routes, with the status of the table.
 * A code is stable: clients act on it.
 */

interface ErrorDefinition {
  readonly status: number;
  readonly message: string;
}

/** Every error code the service answers with, its HTTP status and its default message. */
export const ERROR_CODES = {
  // --- request shape (both APIs) ---
  /** The body, a query parameter, a path parameter or a header failed validation. */
  VALIDATION_FAILED: { status: 400, message: 'The request is invalid.' },
  /** The body is not well-formed JSON. */
  MALFORMED_JSON: { status: 400, message: 'The request body is not valid JSON.' },
  /** A pagination cursor was reused with other filters, or is not one of ours. */
  INVALID_CURSOR: { status: 400, message: 'The pagination cursor is invalid for these filters.' },
  /** The body is larger than the server accepts. */
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  /** The Content-Type is not one the route accepts. */
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: 'The Content-Type is not supported; send application/json.',
  },
  /** A path parameter is longer than the server reads. */
  URI_TOO_LONG: { status: 414, message: 'A path parameter is too long.' },
  /** A request header is malformed or the headers are too large. */
  BAD_HEADERS: { status: 400, message: 'The request headers are malformed.' },
  /** No route has this path. */
  ROUTE_NOT_FOUND: { status: 404, message: 'No such route.' },
  /** The path exists but not with this method. */
  METHOD_NOT_ALLOWED: { status: 405, message: 'This method is not allowed on this route.' },

  // --- credentials ---
  /** No credential was presented. */
  UNAUTHENTICATED: { status: 401, message: 'A credential is required.' },
  /** The credential is malformed, unknown, expired or revoked. */
  INVALID_CREDENTIAL: { status: 401, message: 'The credential is malformed, expired or revoked.' },
  /** The credential lacks the scope the operation requires. */
  INSUFFICIENT_SCOPE: { status: 403, message: 'The credential lacks the required scope.' },
  /** The caller is known but may not do this. */
  FORBIDDEN: { status: 403, message: 'You are not allowed to do this.' },
  /** A cookie-authenticated write came without the session's CSRF token (X-CSRF-Token). */
  CSRF_TOKEN_INVALID: {
    status: 403,
    message: 'This request needs the X-CSRF-Token header of the console session.',
  },
  /** Too many requests for this credential. */
  RATE_LIMITED: {
    status: 429,
    message: 'Rate limit exceeded; retry after the number of seconds in Retry-After.',
  },

  // --- generic resources ---
  /** The resource does not exist or belongs to another organization. */
  NOT_FOUND: { status: 404, message: 'Not found.' },
  /** A unique value (handle, username, domain, name) is already taken. */
  ALREADY_EXISTS: { status: 409, message: 'A resource with this value already exists.' },
  /** The request conflicts with the resource's current state. */
  CONFLICT: { status: 409, message: 'The request conflicts with the current state.' },
  /** The request is understood but cannot be processed as given. */
  UNPROCESSABLE: { status: 422, message: 'The request cannot be processed.' },
  /** The invitation was already accepted, declined or revoked, or it expired: it takes no answer. */
  INVITATION_NOT_PENDING: { status: 409, message: 'This invitation is no longer pending.' },

  // --- scans, idempotency, credits ---
  /** createScan without an Idempotency-Key header. */
  IDEMPOTENCY_KEY_REQUIRED: { status: 400, message: 'The Idempotency-Key header is required.' },
  /** The key was used before with a different request. */
  IDEMPOTENCY_KEY_REUSED: {
    status: 409,
    message: 'This Idempotency-Key was used for a different request; use a new key for a new scan.',
  },
  /** The first request with this key is still executing. */
  IDEMPOTENCY_REQUEST_IN_PROGRESS: {
    status: 409,
    message: 'A request with this Idempotency-Key is still in progress; retry shortly.',
  },
  /** Not enough credits remain for the scan type. */
  INSUFFICIENT_CREDITS: { status: 402, message: 'Not enough scan credits remain for this scan type.' },
  /** Several workspaces match the repository and prefix. */
  AMBIGUOUS_WORKSPACE: {
    status: 409,
    message: 'Several workspaces match this repository; pass workspaceId or prefix.',
  },
  /** The repository kind or the scan type and source combination is not supported. */
  UNSUPPORTED_REPOSITORY_TYPE: {
    status: 422,
    message: 'This repository type is not supported for this scan.',
  },
  /** The scan is completed or failed and cannot be cancelled. */
  SCAN_NOT_CANCELLABLE: { status: 409, message: 'The scan is already completed or failed.' },
  /** The scan has not started in the backend yet. */
  SCAN_NOT_STARTED: { status: 409, message: 'The scan has not started yet; cancel it once it is queued.' },
  /** The scan report is read before the scan completed. */
  SCAN_NOT_COMPLETED: { status: 409, message: 'The scan has not completed.' },
  /** The threat model is not built yet. */
  THREAT_MODEL_NOT_READY: { status: 409, message: 'The threat model is not ready yet.' },
  /** The archive named in scanSources is unknown, incomplete or its sha256 differs. */
  ARCHIVE_NOT_FOUND: { status: 404, message: 'The archive was not found in this organization.' },
  /** The database or the queue cannot be reached; the identical retry is safe. */
  SERVICE_UNAVAILABLE: {
    status: 503,
    message: 'The service is temporarily unavailable; retry the identical request.',
  },

  // --- uploads and archives ---
  /** The upload URL is forged, expired or not for this upload. */
  UPLOAD_URL_INVALID: { status: 403, message: 'The upload URL is invalid or has expired.' },
  /** The upload body is larger than maxBytes. */
  UPLOAD_TOO_LARGE: { status: 413, message: 'The upload is larger than maxBytes.' },
  /** Completion was called before any archive was received. */
  UPLOAD_NOT_RECEIVED: { status: 409, message: 'No archive has been uploaded for this upload session yet.' },
  /** The upload session expired before completion. */
  UPLOAD_EXPIRED: { status: 410, message: 'The upload session has expired; create a new one.' },
  /** The archive is not a well-formed tar.gz. */
  INVALID_ARCHIVE: { status: 400, message: 'The archive is not a well-formed tar.gz.' },
  /** The archive exceeds a size, entry-count or expansion-ratio limit. */
  ARCHIVE_TOO_LARGE: { status: 400, message: 'The archive exceeds a size limit.' },
  /** The archive has too many entries. */
  ARCHIVE_TOO_MANY_ENTRIES: { status: 400, message: 'The archive has too many entries.' },
  /** The archive expands far more than real source code does. */
  ARCHIVE_EXPANSION_RATIO: { status: 400, message: 'The archive expands beyond the allowed ratio.' },
  /** The sources' `.vigilignore` or `vigil.toml` cannot be used (the message names the line). */
  INVALID_PROJECT_SETTINGS: {
    status: 400,
    message: 'The project settings (vigil.toml, .vigilignore) are invalid.',
  },
  /** An entry has an absolute path, a `..` segment or a drive letter. */
  UNSAFE_ARCHIVE_PATH: { status: 400, message: 'The archive has an entry with an unsafe path.' },
  /** An entry is a link leaving the root, a hard link, a device or a fifo. */
  UNSAFE_ARCHIVE_ENTRY: {
    status: 400,
    message: 'The archive has a link, device or fifo entry that is not allowed.',
  },
  /** The computed sha256 differs from the one given. */
  CHECKSUM_MISMATCH: { status: 400, message: 'The archive sha256 does not match the one given.' },

  // --- integrations and tickets ---
  /** The company has no integration of this provider. */
  INTEGRATION_NOT_CONNECTED: { status: 409, message: 'The integration is not connected.' },
  /** The integration has no destination for new tickets. */
  DESTINATION_NOT_CONFIGURED: { status: 409, message: 'No destination is configured for this integration.' },
  /** A different ticket is already linked for this finding and provider. */
  TICKET_ALREADY_LINKED: { status: 409, message: 'A different ticket is already linked to this finding.' },
  /** An export of this finding to this provider is running. */
  EXPORT_IN_PROGRESS: { status: 409, message: 'An export of this finding is in progress.' },
  /** A bare key matched issues on several connected sites. */
  AMBIGUOUS_TICKET: {
    status: 409,
    message: 'This key exists on several connected sites; use the full issue URL.',
  },
  /** The ticket was not found at the provider. */
  TICKET_NOT_FOUND: { status: 404, message: 'The ticket was not found.' },
  /** The issue reference is neither a key, a URL of a connected site nor a UUID. */
  INVALID_ISSUE_REF: { status: 400, message: 'The issue reference is not a valid key, URL or UUID.' },
  /** The provider refused or failed; see the export for details. */
  PROVIDER_ERROR: { status: 502, message: 'The issue tracker request failed.' },
  /** The sourcehost could not deliver the commit. */
  SOURCEHOST_ERROR: { status: 502, message: 'The source host request failed.' },

  // --- platform (v0) ---
  /** A reviewer's @project ping with no pings left. */
  NO_PINGS_LEFT: { status: 409, message: 'You have no @project pings left on this repository.' },
  /** The status or severity change is not allowed for this role or state. */
  TRANSITION_NOT_ALLOWED: { status: 409, message: 'This change is not allowed.' },
  /** The company's monthly token budget of the repository assistant is used up. */
  AI_BUDGET_EXHAUSTED: { status: 429, message: "The company's monthly AI token budget is used up." },
  /** The language model answered with an error or could not be reached. */
  AI_MODEL_FAILED: { status: 502, message: 'The language model request failed; try again.' },
  /** The language model is rate limiting this server; the identical retry later is safe. */
  AI_MODEL_BUSY: { status: 503, message: 'The language model is busy; retry after Retry-After seconds.' },
  /** The language model did not answer in time. */
  AI_MODEL_TIMEOUT: { status: 504, message: 'The language model did not answer in time; try again.' },

  /** An inbound source-host webhook whose `X-Hub-Signature-256` is missing or does not match. */
  WEBHOOK_SIGNATURE_INVALID: {
    status: 401,
    message: 'The webhook signature is missing or does not match the integration secret.',
  },

  // --- server ---
  /** An unexpected failure; the body carries a request id to quote. */
  INTERNAL: { status: 500, message: 'Internal server error.' },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface AppErrorOptions {
  /** Replaces the default message of the code. */
  message?: string;
  /** Extra fields rendered into the v1 error body (for example `workspaces`). */
  details?: JsonObject;
  /** Extra response headers (for example `Retry-After`). */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** The single error type services throw; the HTTP layer renders it in the API's shape. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: JsonObject | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    super(options.message ?? ERROR_CODES[code].message, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.details = options.details;
    this.headers = options.headers;
  }
}

/** True for an AppError with the given code (or any AppError when no code is given). */
export function isAppError(err: unknown, code?: ErrorCode): err is AppError {
  return err instanceof AppError && (code === undefined || err.code === code);
}
