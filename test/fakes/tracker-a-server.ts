/**
 * A tracker_a workspace that speaks Linear-style GraphQL as the adapters meet it: a personal API
 * key sent raw or an OAuth token sent as Bearer; `issue(id:)` by UUID or identifier (old
 * identifiers of moved issues included); "Entity not found" with `data: null`; RATELIMITED as
 * HTTP 400; `issueCreate` with a client-chosen id (a reused id is a conflict); `success: false`;
 * creates whose answer is lost after the issue was stored; `organization { urlKey }`.
 *
 * Operations are recognised by their top-level field (`issue`, `issueCreate`, `organization`);
 * arguments are read from the variables (or a string literal for `issue(id:)`).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One issue held by the fake workspace. */
export interface FakeTrackerAIssue {
  readonly id: string;
  identifier: string;
  teamKey: string;
  /** Identifiers the issue had before it moved team; they still resolve to it. */
  readonly formerIdentifiers: string[];
  readonly title: string;
  readonly description: string | null;
  readonly priority: number;
  readonly labelIds: readonly string[];
  state: { name: string; type: string };
  url: string;
}

/** What the fake does to the next requests; set with `setBehaviour`. */
export interface FakeTrackerABehaviour {
  /** The next N requests answer RATELIMITED (HTTP 400). */
  rateLimitNext: number;
  /** The retry-after header of those answers (seconds); null sends none. */
  retryAfter: string | null;
  /** The next N creates store the issue and then lose the answer. */
  loseCreateResponses: number;
  /** `hold` keeps the socket open without answering; `destroy` resets it. */
  lostResponseMode: 'hold' | 'destroy';
  /** The next N creates store the issue and then answer HTTP 500 INTERNAL_SERVER_ERROR. */
  failCreatesAfterStore: number;
  /** The next N creates answer `success: false` without storing anything. */
  createSuccessFalseNext: number;
  /** The next N requests are held without an answer. */
  holdNext: number;
  /** The HTTP status of authentication errors (the provider uses 401, sometimes 400). */
  authErrorStatus: 401 | 400;
  /** Authentication errors echo the Authorization header they received. */
  echoCredentials: boolean;
}

/** One request as received. */
export interface FakeTrackerARequest {
  readonly authorization: string | undefined;
  body: unknown;
  /** `issue`, `issueCreate`, `organization`, or null when not recognised. */
  operation: string | null;
  status: number | null;
}

export interface FakeTrackerAOptions {
  readonly apiKey?: string;
  readonly oauthToken?: string;
  readonly urlKey?: string;
  /** The origin of issue URLs (default `https://linear.app`). */
  readonly appUrl?: string;
  readonly teams?: ReadonlyArray<{ id: string; key: string }>;
  readonly labelIds?: readonly string[];
}

export interface FakeTrackerA {
  /** The GraphQL endpoint (`http://127.0.0.1:PORT/graphql`). */
  readonly url: string;
  readonly apiKey: string;
  readonly oauthToken: string;
  readonly urlKey: string;
  readonly appUrl: string;
  readonly teams: ReadonlyArray<{ id: string; key: string }>;
  readonly issues: { count(): number; list(): readonly FakeTrackerAIssue[] };
  readonly requests: FakeTrackerARequest[];
  setBehaviour(behaviour: Partial<FakeTrackerABehaviour>): void;
  /** Adds an issue as if created earlier. */
  seedIssue(input: { teamKey: string; title: string; id?: string; state?: string }): FakeTrackerAIssue;
  /** Moves an issue to another team: new identifier, the old one keeps resolving. */
  moveIssue(identifier: string, toTeamKey: string): FakeTrackerAIssue;
  close(): Promise<void>;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function graphqlError(message: string, extensions: Record<string, unknown>): unknown {
  return { message, locations: [{ line: 1, column: 1 }], extensions };
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

function notFound(entity: string): unknown {
  return {
    errors: [
      graphqlError(`Entity not found: ${entity}`, {
        type: 'invalid input',
        code: 'INPUT_ERROR',
        statusCode: 400,
        userError: true,
        userPresentableMessage: `Could not find referenced ${entity}.`,
      }),
    ],
    data: null,
  };
}

function validationError(message: string): unknown {
  return {
    errors: [
      graphqlError('Argument Validation Error', {
        type: 'invalid input',
        code: 'INVALID_INPUT',
        statusCode: 400,
        userError: true,
        userPresentableMessage: message,
      }),
    ],
    data: null,
  };
}

/** The operation type and top-level field of a GraphQL document. */
function recogniseOperation(query: string): { type: 'query' | 'mutation'; field: string } | null {
  const match = /^\s*(?:(query|mutation)\b[^{]*)?\{\s*(\w+)/.exec(query);
  if (!match) return null;
  return { type: match[1] === 'mutation' ? 'mutation' : 'query', field: match[2]! };
}

/** The value of argument `name` of `field`: a variable reference or a string literal. */
function readArgument(
  query: string,
  field: string,
  name: string,
  variables: Record<string, unknown>,
): unknown {
  const variable = new RegExp(`${field}\\s*\\([^)]*\\b${name}\\s*:\\s*\\$(\\w+)`).exec(query);
  if (variable) return variables[variable[1]!];
  const literal = new RegExp(`${field}\\s*\\([^)]*\\b${name}\\s*:\\s*"([^"]*)"`).exec(query);
  return literal ? literal[1] : undefined;
}

function slugify(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
}

/** Starts a fake tracker_a GraphQL endpoint on 127.0.0.1 at a random port. */
export async function startFakeTrackerA(options: FakeTrackerAOptions = {}): Promise<FakeTrackerA> {
  const apiKey = options.apiKey ?? 'lin_api_fakePersonalKey0123456789';
  const oauthToken = options.oauthToken ?? 'lin_oauth_fakeAccessToken0123456789';
  const urlKey = options.urlKey ?? 'acme';
  const appUrl = options.appUrl ?? 'https://linear.app';
  const teams = [...(options.teams ?? [{ id: randomUUID(), key: 'ENG' }])];
  const labelIds = new Set(options.labelIds ?? []);
  const issues: FakeTrackerAIssue[] = [];
  const nextNumber = new Map<string, number>();
  const requests: FakeTrackerARequest[] = [];
  const behaviour: FakeTrackerABehaviour = {
    rateLimitNext: 0,
    retryAfter: null,
    loseCreateResponses: 0,
    lostResponseMode: 'hold',
    failCreatesAfterStore: 0,
    createSuccessFalseNext: 0,
    holdNext: 0,
    authErrorStatus: 401,
    echoCredentials: false,
  };

  const allocateIdentifier = (teamKey: string): string => {
    const n = (nextNumber.get(teamKey) ?? 0) + 1;
    nextNumber.set(teamKey, n);
    return `${teamKey}-${n}`;
  };

  const storeIssue = (input: {
    id: string;
    teamKey: string;
    title: string;
    description: string | null;
    priority: number;
    labelIds: string[];
    state?: string;
  }): FakeTrackerAIssue => {
    const identifier = allocateIdentifier(input.teamKey);
    const issue: FakeTrackerAIssue = {
      id: input.id,
      identifier,
      teamKey: input.teamKey,
      formerIdentifiers: [],
      title: input.title,
      description: input.description,
      priority: input.priority,
      labelIds: input.labelIds,
      state: { name: input.state ?? 'Todo', type: 'unstarted' },
      url: `${appUrl}/${urlKey}/issue/${identifier}/${slugify(input.title)}`,
    };
    issues.push(issue);
    return issue;
  };

  const findIssue = (idOrIdentifier: string): FakeTrackerAIssue | undefined => {
    if (UUID_PATTERN.test(idOrIdentifier)) return issues.find((i) => i.id === idOrIdentifier.toLowerCase());
    const wanted = idOrIdentifier.toUpperCase();
    return issues.find((i) => i.identifier === wanted || i.formerIdentifiers.includes(wanted));
  };

  const issueJson = (issue: FakeTrackerAIssue): unknown => ({
    id: issue.id,
    identifier: issue.identifier,
    url: issue.url,
    title: issue.title,
    archivedAt: null,
    state: issue.state,
    team: { key: issue.teamKey },
  });

  const handleCreate = (
    req: IncomingMessage,
    res: ServerResponse,
    query: string,
    variables: Record<string, unknown>,
  ): void => {
    const input = readArgument(query, 'issueCreate', 'input', variables);
    if (!isRecord(input)) {
      sendJson(res, 400, validationError('input is required.'));
      return;
    }
    if (typeof input.teamId !== 'string') {
      sendJson(res, 400, validationError('teamId must be a UUID.'));
      return;
    }
    const team = teams.find((t) => t.id === input.teamId);
    if (!team) {
      sendJson(res, 400, notFound('Team'));
      return;
    }
    if (typeof input.title !== 'string' || input.title.trim().length === 0) {
      sendJson(res, 400, validationError('title must not be empty.'));
      return;
    }
    if (input.id !== undefined && (typeof input.id !== 'string' || !UUID_PATTERN.test(input.id))) {
      sendJson(res, 400, validationError('id must be a UUID.'));
      return;
    }
    if (
      input.priority !== undefined &&
      (typeof input.priority !== 'number' ||
        !Number.isInteger(input.priority) ||
        input.priority < 0 ||
        input.priority > 4)
    ) {
      sendJson(res, 400, validationError('priority must be an integer from 0 to 4.'));
      return;
    }
    const labels = input.labelIds ?? [];
    if (!Array.isArray(labels) || labels.some((l) => typeof l !== 'string' || !labelIds.has(l))) {
      sendJson(res, 400, notFound('IssueLabel'));
      return;
    }
    const id = typeof input.id === 'string' ? input.id.toLowerCase() : randomUUID();
    if (issues.some((i) => i.id === id)) {
      sendJson(res, 400, {
        errors: [
          graphqlError('Entity already exists: Issue', {
            type: 'invalid input',
            code: 'INPUT_ERROR',
            statusCode: 400,
            userError: true,
            userPresentableMessage: 'An issue with this id already exists.',
          }),
        ],
        data: null,
      });
      return;
    }
    if (behaviour.createSuccessFalseNext > 0) {
      behaviour.createSuccessFalseNext--;
      sendJson(res, 200, { data: { issueCreate: { success: false, issue: null } } });
      return;
    }
    const issue = storeIssue({
      id,
      teamKey: team.key,
      title: input.title,
      description: typeof input.description === 'string' ? input.description : null,
      priority: typeof input.priority === 'number' ? input.priority : 0,
      labelIds: labels as string[],
    });
    if (behaviour.loseCreateResponses > 0) {
      behaviour.loseCreateResponses--;
      // The issue exists; only the answer goes missing.
      if (behaviour.lostResponseMode === 'destroy') req.socket.destroy();
      return;
    }
    if (behaviour.failCreatesAfterStore > 0) {
      behaviour.failCreatesAfterStore--;
      sendJson(res, 500, {
        errors: [
          graphqlError('Internal server error', { type: 'internal error', code: 'INTERNAL_SERVER_ERROR' }),
        ],
      });
      return;
    }
    sendJson(res, 200, {
      data: {
        issueCreate: {
          success: true,
          issue: { id: issue.id, identifier: issue.identifier, url: issue.url, title: issue.title },
        },
      },
    });
  };

  const handle = (req: IncomingMessage, res: ServerResponse, record: FakeTrackerARequest): void => {
    const authorization = req.headers.authorization;
    // A personal key is only accepted raw; with "Bearer" it is an unknown OAuth token.
    const authenticated = authorization === apiKey || authorization === `Bearer ${oauthToken}`;
    if (!authenticated) {
      const message =
        behaviour.echoCredentials && authorization
          ? `Authentication required, not authenticated (received ${authorization})`
          : 'Authentication required, not authenticated';
      sendJson(res, behaviour.authErrorStatus, {
        errors: [
          graphqlError(message, {
            type: 'authentication error',
            code: 'AUTHENTICATION_ERROR',
            statusCode: 401,
            userError: true,
            userPresentableMessage: 'You need to authenticate to access this operation.',
          }),
        ],
      });
      return;
    }
    const body = record.body;
    const query = isRecord(body) && typeof body.query === 'string' ? body.query : '';
    const variables = isRecord(body) && isRecord(body.variables) ? body.variables : {};
    const operation = recogniseOperation(query);
    record.operation = operation?.field ?? null;
    if (operation?.type === 'query' && operation.field === 'issue') {
      const id = readArgument(query, 'issue', 'id', variables);
      if (typeof id !== 'string') {
        sendJson(res, 400, validationError('id is required.'));
        return;
      }
      const issue = findIssue(id);
      if (!issue) {
        sendJson(res, 400, notFound('Issue'));
        return;
      }
      sendJson(res, 200, { data: { issue: issueJson(issue) } });
      return;
    }
    if (operation?.type === 'query' && operation.field === 'organization') {
      sendJson(res, 200, { data: { organization: { urlKey, name: 'Acme' } } });
      return;
    }
    if (operation?.type === 'mutation' && operation.field === 'issueCreate') {
      handleCreate(req, res, query, variables);
      return;
    }
    sendJson(res, 400, {
      errors: [
        graphqlError('Cannot query this field.', {
          type: 'graphql error',
          code: 'GRAPHQL_VALIDATION_FAILED',
          statusCode: 400,
        }),
      ],
    });
  };

  const server = createServer((req, res) => {
    const record: FakeTrackerARequest = {
      authorization: req.headers.authorization,
      body: undefined,
      operation: null,
      status: null,
    };
    requests.push(record);
    res.on('finish', () => {
      record.status = res.statusCode;
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || new URL(req.url ?? '/', 'http://fake').pathname !== '/graphql') {
        sendJson(res, 404, { errors: [graphqlError('Not found', { code: 'NOT_FOUND' })] });
        return;
      }
      try {
        record.body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        sendJson(res, 400, { errors: [graphqlError('Body is not JSON', { code: 'BAD_REQUEST' })] });
        return;
      }
      if (behaviour.holdNext > 0) {
        behaviour.holdNext--;
        return;
      }
      if (behaviour.rateLimitNext > 0) {
        behaviour.rateLimitNext--;
        const headers: Record<string, string> = {
          'x-ratelimit-requests-limit': '1500',
          'x-ratelimit-requests-remaining': '0',
          'x-ratelimit-requests-reset': String(Date.now() + 60_000),
        };
        if (behaviour.retryAfter !== null) headers['retry-after'] = behaviour.retryAfter;
        // The provider reports a rate limit with HTTP 400; only the body says what it is.
        sendJson(
          res,
          400,
          {
            errors: [
              graphqlError('Rate limit exceeded', {
                type: 'ratelimited',
                code: 'RATELIMITED',
                statusCode: 429,
                userPresentableMessage: 'Too many requests.',
              }),
            ],
          },
          headers,
        );
        return;
      }
      handle(req, res, record);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;

  return {
    url,
    apiKey,
    oauthToken,
    urlKey,
    appUrl,
    teams,
    issues: { count: () => issues.length, list: () => [...issues] },
    requests,
    setBehaviour(update) {
      Object.assign(behaviour, update);
    },
    seedIssue(input) {
      if (!teams.some((t) => t.key === input.teamKey)) teams.push({ id: randomUUID(), key: input.teamKey });
      return storeIssue({
        id: input.id ?? randomUUID(),
        teamKey: input.teamKey,
        title: input.title,
        description: null,
        priority: 0,
        labelIds: [],
        ...(input.state !== undefined ? { state: input.state } : {}),
      });
    },
    moveIssue(identifier, toTeamKey) {
      const issue = findIssue(identifier);
      if (!issue) throw new Error(`no issue ${identifier}`);
      if (!teams.some((t) => t.key === toTeamKey)) teams.push({ id: randomUUID(), key: toTeamKey });
      issue.formerIdentifiers.push(issue.identifier);
      issue.identifier = allocateIdentifier(toTeamKey);
      issue.teamKey = toTeamKey;
      issue.url = `${appUrl}/${urlKey}/issue/${issue.identifier}/${slugify(issue.title)}`;
      return issue;
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
