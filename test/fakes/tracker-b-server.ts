/**
 * A tracker_b site that speaks Jira Cloud REST v3 as the adapters meet it, odd corners included:
 * Basic `email:token` on the site paths and Bearer on the gateway prefix `/ex/jira/{cloudId}`;
 * 401 with an HTML body; a 404 (not a 401) for issue reads with bad or missing credentials;
 * case-insensitive keys and moved issues; the ADF 400s; 429 with and without Retry-After;
 * creates whose answer is lost after the issue was stored; `/search/jql` with an indexing delay;
 * 410 on the removed `/search`. Start two instances for two sites sharing a project key.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One issue held by the fake site. */
export interface FakeTrackerBIssue {
  readonly id: string;
  key: string;
  projectKey: string;
  /** Keys the issue had before it was moved; they still resolve to it. */
  readonly formerKeys: string[];
  readonly summary: string;
  readonly description: unknown;
  readonly labels: string[];
  readonly issueType: string;
  status: string;
  /** When the issue becomes visible to `/search/jql` (epoch ms). */
  readonly searchableAt: number;
}

/** What the fake does to the next requests; set with `setBehaviour`. */
export interface FakeTrackerBBehaviour {
  /** The next N requests (of any kind) answer 429. */
  rateLimitNext: number;
  /** The Retry-After of those 429s (seconds or an HTTP date); null sends none. */
  retryAfter: string | null;
  /** The next N creates store the issue and then lose the answer. */
  loseCreateResponses: number;
  /** `hold` keeps the socket open without answering until the client gives up; `destroy` resets it. */
  lostResponseMode: 'hold' | 'destroy';
  /** The next N creates store the issue and then answer 502 (a gateway failing after the write). */
  failCreatesAfterStore: number;
  /** The next N requests (of any kind) are held without an answer. */
  holdNext: number;
  /** New issues become searchable this many milliseconds after their creation. */
  indexDelayMs: number;
  /** Error pages echo the Authorization header they received (a provider leaking it back). */
  echoCredentials: boolean;
  /**
   * Fails every `every`-th request (one in five with 5), in a way drawn with `random`: a 429, a
   * 502 before anything happens, or, for a create, the issue stored and then a 502 or a reset
   * connection.
   */
  failEvery: { every: number; random: () => number } | null;
}

/** One request as received. */
export interface FakeTrackerBRequest {
  readonly method: string;
  /** Path and query, the gateway prefix included. */
  readonly url: string;
  body: unknown;
  status: number | null;
}

export interface FakeTrackerBOptions {
  readonly email?: string;
  readonly apiToken?: string;
  readonly bearerToken?: string;
  readonly cloudId?: string;
  /** Project keys that exist (default `['ENG']`). */
  readonly projects?: readonly string[];
  readonly issueTypes?: readonly string[];
}

export interface FakeTrackerB {
  /** The site's base URL (`http://127.0.0.1:PORT`), for Basic auth. */
  readonly url: string;
  /** The gateway base URL (`${url}/ex/jira/${cloudId}`), for Bearer auth. */
  readonly gatewayUrl: string;
  readonly email: string;
  readonly apiToken: string;
  readonly bearerToken: string;
  readonly cloudId: string;
  readonly issues: { count(): number; list(): readonly FakeTrackerBIssue[] };
  readonly requests: FakeTrackerBRequest[];
  setBehaviour(behaviour: Partial<FakeTrackerBBehaviour>): void;
  /** Adds an issue as if created earlier (searchable at once). */
  seedIssue(input: {
    projectKey: string;
    summary: string;
    status?: string;
    labels?: string[];
  }): FakeTrackerBIssue;
  /** Moves an issue to another project; its old key keeps resolving. Returns the issue. */
  moveIssue(key: string, toProjectKey: string): FakeTrackerBIssue;
  close(): Promise<void>;
}

const ADF_STRING_ERROR = 'Operation value must be an Atlassian Document (see the Atlassian Document Format)';
const NOT_FOUND_MESSAGE = 'Issue does not exist or you do not have permission to see it.';
const BLOCK_TYPES = new Set([
  'paragraph',
  'heading',
  'bulletList',
  'orderedList',
  'codeBlock',
  'blockquote',
  'rule',
  'panel',
]);
const MARK_TYPES = new Set(['strong', 'em', 'code', 'link', 'strike', 'underline']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function validateInline(node: unknown, inCodeBlock: boolean): string | null {
  if (!isRecord(node)) return 'a node is not an object';
  if (node.type === 'hardBreak' && !inCodeBlock) return null;
  if (node.type !== 'text') return `node type ${String(node.type)} is not allowed here`;
  if (typeof node.text !== 'string' || node.text.length === 0) return 'text nodes must not be empty';
  if (node.marks !== undefined) {
    if (inCodeBlock) return 'text in a codeBlock cannot have marks';
    if (!Array.isArray(node.marks)) return 'marks must be an array';
    for (const mark of node.marks) {
      if (!isRecord(mark) || typeof mark.type !== 'string' || !MARK_TYPES.has(mark.type))
        return 'unknown mark';
      if (mark.type === 'link' && (!isRecord(mark.attrs) || typeof mark.attrs.href !== 'string')) {
        return 'link marks need attrs.href';
      }
    }
  }
  return null;
}

function validateBlock(node: unknown): string | null {
  if (!isRecord(node) || typeof node.type !== 'string') return 'a node is not an object';
  const { type } = node;
  if (type === 'listItem') return 'listItem outside of a list';
  if (!BLOCK_TYPES.has(type)) return `unknown node type ${type}`;
  if (type === 'rule') return null;
  const content = node.content;
  if (type === 'codeBlock') {
    if (node.attrs !== undefined && (!isRecord(node.attrs) || typeof node.attrs.language !== 'string')) {
      return 'codeBlock attrs.language must be a string';
    }
    if (content === undefined) return null;
    if (!Array.isArray(content)) return 'content must be an array';
    for (const child of content) {
      const error = validateInline(child, true);
      if (error) return error;
    }
    return null;
  }
  if (!Array.isArray(content)) return `${type} needs a content array`;
  if (type === 'heading') {
    const level = isRecord(node.attrs) ? node.attrs.level : undefined;
    if (typeof level !== 'number' || level < 1 || level > 6) return 'heading needs attrs.level 1 to 6';
  }
  if (type === 'paragraph' || type === 'heading') {
    for (const child of content) {
      const error = validateInline(child, false);
      if (error) return error;
    }
    return null;
  }
  if (type === 'bulletList' || type === 'orderedList') {
    if (content.length === 0) return `${type} must not be empty`;
    for (const item of content) {
      if (
        !isRecord(item) ||
        item.type !== 'listItem' ||
        !Array.isArray(item.content) ||
        item.content.length === 0
      ) {
        return `${type} holds listItem nodes with content`;
      }
      for (const child of item.content) {
        const error = validateBlock(child);
        if (error) return error;
      }
    }
    return null;
  }
  for (const child of content) {
    const error = validateBlock(child);
    if (error) return error;
  }
  return null;
}

/** Checks an Atlassian Document the way the fake's create does; returns the problem or null. */
export function validateAdf(doc: unknown): string | null {
  if (!isRecord(doc) || doc.type !== 'doc' || doc.version !== 1 || !Array.isArray(doc.content)) {
    return 'the document must be {type:"doc", version:1, content:[…]}';
  }
  for (const block of doc.content) {
    const error = validateBlock(block);
    if (error) return error;
  }
  return null;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json;charset=UTF-8', ...headers });
  res.end(JSON.stringify(body));
}

function errorBody(errorMessages: string[], errors: Record<string, string> = {}): unknown {
  return { errorMessages, errors };
}

/** Starts a fake tracker_b site on 127.0.0.1 at a random port. */
export async function startFakeTrackerB(options: FakeTrackerBOptions = {}): Promise<FakeTrackerB> {
  const email = options.email ?? 'bot@example.test';
  const apiToken = options.apiToken ?? 'ATATT3xFfGF0-site-token';
  const bearerToken = options.bearerToken ?? 'eyJ-oauth-access-token';
  const cloudId = options.cloudId ?? '11111111-2222-3333-4444-555555555555';
  const projects = new Set(options.projects ?? ['ENG']);
  const issueTypes = new Set(options.issueTypes ?? ['Bug', 'Task', 'Story']);
  const issues: FakeTrackerBIssue[] = [];
  const nextNumber = new Map<string, number>();
  const requests: FakeTrackerBRequest[] = [];
  const behaviour: FakeTrackerBBehaviour = {
    rateLimitNext: 0,
    retryAfter: null,
    loseCreateResponses: 0,
    lostResponseMode: 'hold',
    failCreatesAfterStore: 0,
    holdNext: 0,
    indexDelayMs: 0,
    echoCredentials: false,
    failEvery: null,
  };
  let served = 0;
  let nextId = 10000;
  let baseUrl = '';

  const allocateKey = (projectKey: string): string => {
    const n = (nextNumber.get(projectKey) ?? 0) + 1;
    nextNumber.set(projectKey, n);
    return `${projectKey}-${n}`;
  };

  const storeIssue = (input: {
    projectKey: string;
    summary: string;
    description: unknown;
    labels: string[];
    issueType: string;
    status: string;
    indexDelayMs: number;
  }): FakeTrackerBIssue => {
    projects.add(input.projectKey);
    const issue: FakeTrackerBIssue = {
      id: String(nextId++),
      key: allocateKey(input.projectKey),
      projectKey: input.projectKey,
      formerKeys: [],
      summary: input.summary,
      description: input.description,
      labels: input.labels,
      issueType: input.issueType,
      status: input.status,
      searchableAt: Date.now() + input.indexDelayMs,
    };
    issues.push(issue);
    return issue;
  };

  const findIssue = (idOrKey: string): FakeTrackerBIssue | undefined => {
    const wanted = idOrKey.toUpperCase();
    return issues.find((i) => i.id === idOrKey || i.key === wanted || i.formerKeys.includes(wanted));
  };

  const issueJson = (issue: FakeTrackerBIssue, apiBase: string): unknown => ({
    expand: 'renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations',
    id: issue.id,
    self: `${apiBase}/rest/api/3/issue/${issue.id}`,
    key: issue.key,
    fields: {
      summary: issue.summary,
      status: {
        name: issue.status,
        statusCategory: {
          key: issue.status === 'Done' ? 'done' : issue.status === 'To Do' ? 'new' : 'indeterminate',
        },
      },
      issuetype: { name: issue.issueType },
      project: { key: issue.projectKey },
      labels: issue.labels,
    },
  });

  const sendUnauthorized = (res: ServerResponse, authorization: string | undefined): void => {
    const echo =
      behaviour.echoCredentials && authorization ? `<p>Credentials presented: ${authorization}</p>` : '';
    res.writeHead(401, {
      'content-type': 'text/html;charset=UTF-8',
      'www-authenticate': 'Basic realm="protected-area"',
    });
    res.end(
      `<!DOCTYPE html><html><head><title>Unauthorized (401)</title></head><body><h1>Unauthorized (401)</h1>${echo}</body></html>`,
    );
  };

  const handle = async (
    req: IncomingMessage,
    res: ServerResponse,
    record: FakeTrackerBRequest,
    fault: 'after_store_502' | 'after_store_lost' | null = null,
  ): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://fake');
    let path = url.pathname;
    const gatewayPrefix = `/ex/jira/${cloudId}`;
    const viaGateway = path.startsWith('/ex/jira/');
    if (viaGateway) {
      if (!path.startsWith(`${gatewayPrefix}/`)) {
        sendJson(res, 404, { code: 404, message: 'Cloud id not found' });
        return;
      }
      path = path.slice(gatewayPrefix.length);
    }
    const apiBase = viaGateway ? `${baseUrl}${gatewayPrefix}` : baseUrl;
    const authorization = req.headers.authorization;
    const expected = viaGateway
      ? `Bearer ${bearerToken}`
      : `Basic ${Buffer.from(`${email}:${apiToken}`).toString('base64')}`;
    const auth: 'ok' | 'anonymous' | 'bad' =
      authorization === undefined ? 'anonymous' : authorization === expected ? 'ok' : 'bad';

    if (path === '/rest/api/3/myself' && req.method === 'GET') {
      if (auth !== 'ok') {
        sendUnauthorized(res, authorization);
        return;
      }
      sendJson(res, 200, {
        accountId: '5b10ac8d82e05b22cc7d4ef5',
        emailAddress: email,
        displayName: 'Vigil Bot',
        active: true,
      });
      return;
    }

    const issueMatch = /^\/rest\/api\/3\/issue\/([^/]+)$/.exec(path);
    if (issueMatch && req.method === 'GET') {
      // Issue reads allow anonymous access: bad credentials see what anonymous users see, nothing.
      const issue = auth === 'ok' ? findIssue(decodeURIComponent(issueMatch[1]!)) : undefined;
      if (!issue) {
        sendJson(res, 404, errorBody([NOT_FOUND_MESSAGE]));
        return;
      }
      sendJson(res, 200, issueJson(issue, apiBase));
      return;
    }

    if (path === '/rest/api/3/issue' && req.method === 'POST') {
      if (auth !== 'ok') {
        sendUnauthorized(res, authorization);
        return;
      }
      const body = record.body;
      const fields = isRecord(body) ? body.fields : undefined;
      if (!isRecord(fields)) {
        sendJson(res, 400, errorBody(['No fields were given.']));
        return;
      }
      const errors: Record<string, string> = {};
      const projectKey = isRecord(fields.project) ? fields.project.key : undefined;
      if (typeof projectKey !== 'string' || !projects.has(projectKey)) {
        errors.project = 'Specify a valid project ID or key';
      }
      const issueType = isRecord(fields.issuetype) ? fields.issuetype.name : undefined;
      if (typeof issueType !== 'string' || !issueTypes.has(issueType))
        errors.issuetype = 'Specify an issue type';
      const summary = fields.summary;
      if (typeof summary !== 'string' || summary.trim().length === 0) {
        errors.summary = 'You must specify a summary of the issue.';
      } else if (summary.length > 255) {
        errors.summary = 'Summary must be less than 255 characters.';
      } else if (/[\r\n]/.test(summary)) {
        errors.summary = 'The summary is invalid because it contains newline characters.';
      }
      if (fields.description !== undefined) {
        if (typeof fields.description === 'string') errors.description = ADF_STRING_ERROR;
        else {
          const problem = validateAdf(fields.description);
          if (problem) errors.description = `INVALID_INPUT: ${problem}`;
        }
      }
      const labels = fields.labels ?? [];
      if (
        !Array.isArray(labels) ||
        labels.some((l) => typeof l !== 'string' || /\s/.test(l) || l.length === 0)
      ) {
        errors.labels = 'Labels must be strings without spaces.';
      }
      if (Object.keys(errors).length > 0) {
        sendJson(res, 400, errorBody([], errors));
        return;
      }
      const issue = storeIssue({
        projectKey: projectKey as string,
        summary: summary as string,
        description: fields.description,
        labels: labels as string[],
        issueType: issueType as string,
        status: 'To Do',
        indexDelayMs: behaviour.indexDelayMs,
      });
      if (fault === 'after_store_lost') {
        req.socket.destroy();
        return;
      }
      if (fault === 'after_store_502') {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
        return;
      }
      if (behaviour.loseCreateResponses > 0) {
        behaviour.loseCreateResponses--;
        // The issue exists; only the answer goes missing.
        if (behaviour.lostResponseMode === 'destroy') req.socket.destroy();
        return;
      }
      if (behaviour.failCreatesAfterStore > 0) {
        behaviour.failCreatesAfterStore--;
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
        return;
      }
      sendJson(res, 201, { id: issue.id, key: issue.key, self: `${apiBase}/rest/api/3/issue/${issue.id}` });
      return;
    }

    if (path === '/rest/api/3/search') {
      sendJson(
        res,
        410,
        errorBody([
          'The requested API has been removed. Please migrate to the /rest/api/3/search/jql API. A full migration guideline is available at https://developer.atlassian.com/changelog/#CHANGE-2046',
        ]),
      );
      return;
    }

    if (path === '/rest/api/3/search/jql' && req.method === 'POST') {
      if (auth !== 'ok') {
        sendUnauthorized(res, authorization);
        return;
      }
      const body = record.body;
      const jql = isRecord(body) && typeof body.jql === 'string' ? body.jql : '';
      const match =
        /^\s*project\s*=\s*"?([A-Za-z0-9_]+)"?\s+AND\s+labels\s*=\s*"?([^"\s]+)"?\s*(?:ORDER\s+BY\s+created\s+(ASC|DESC))?\s*$/i.exec(
          jql,
        );
      if (!match) {
        sendJson(res, 400, errorBody([`Error in the JQL Query: cannot parse '${jql}'.`]));
        return;
      }
      const project = match[1]!.toUpperCase();
      if (!projects.has(project)) {
        sendJson(res, 400, errorBody([`The value '${project}' does not exist for the field 'project'.`]));
        return;
      }
      const now = Date.now();
      const found = issues.filter(
        (i) => i.projectKey === project && i.labels.includes(match[2]!) && i.searchableAt <= now,
      );
      if (match[3]?.toUpperCase() === 'DESC') found.reverse();
      sendJson(res, 200, {
        issues: found.map((i) => ({
          id: i.id,
          key: i.key,
          self: `${apiBase}/rest/api/3/issue/${i.id}`,
          fields: { summary: i.summary, status: { name: i.status } },
        })),
        isLast: true,
      });
      return;
    }

    sendJson(res, 404, errorBody(['No such resource.']));
  };

  const server = createServer((req, res) => {
    const record: FakeTrackerBRequest = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      body: undefined,
      status: null,
    };
    requests.push(record);
    res.on('finish', () => {
      record.status = res.statusCode;
    });
    readBody(req)
      .then(async (text) => {
        if (text.length > 0) {
          try {
            record.body = JSON.parse(text);
          } catch {
            sendJson(res, 400, errorBody(['Unexpected character in the request body.']));
            return;
          }
        }
        if (behaviour.holdNext > 0) {
          behaviour.holdNext--;
          return;
        }
        const failures = behaviour.failEvery;
        let fault: 'after_store_502' | 'after_store_lost' | null = null;
        served++;
        if (failures && served % failures.every === 0) {
          const kind = Math.floor(failures.random() * 3);
          const isCreate = req.method === 'POST' && /\/rest\/api\/3\/issue$/.test(record.url);
          if (kind === 0) {
            sendJson(res, 429, errorBody(['Rate limit exceeded.']), { 'retry-after': '1' });
            return;
          }
          if (!isCreate) {
            res.writeHead(502, { 'content-type': 'text/html' });
            res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
            return;
          }
          fault = kind === 1 ? 'after_store_502' : 'after_store_lost';
        }
        if (behaviour.rateLimitNext > 0) {
          behaviour.rateLimitNext--;
          const headers: Record<string, string> = {
            'x-ratelimit-limit': '100',
            'x-ratelimit-remaining': '0',
            'x-ratelimit-reset': new Date(Date.now() + 1000).toISOString(),
          };
          if (behaviour.retryAfter !== null) headers['retry-after'] = behaviour.retryAfter;
          sendJson(res, 429, errorBody(['Rate limit exceeded.']), headers);
          return;
        }
        await handle(req, res, record, fault);
      })
      .catch(() => {
        if (!res.headersSent) sendJson(res, 500, errorBody(['Internal server error.']));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: baseUrl,
    gatewayUrl: `${baseUrl}/ex/jira/${cloudId}`,
    email,
    apiToken,
    bearerToken,
    cloudId,
    issues: { count: () => issues.length, list: () => [...issues] },
    requests,
    setBehaviour(update) {
      Object.assign(behaviour, update);
    },
    seedIssue(input) {
      return storeIssue({
        projectKey: input.projectKey,
        summary: input.summary,
        description: undefined,
        labels: input.labels ?? [],
        issueType: 'Bug',
        status: input.status ?? 'To Do',
        indexDelayMs: 0,
      });
    },
    moveIssue(key, toProjectKey) {
      const issue = findIssue(key);
      if (!issue) throw new Error(`no issue ${key}`);
      issue.formerKeys.push(issue.key);
      projects.add(toProjectKey);
      issue.key = allocateKey(toProjectKey);
      issue.projectKey = toProjectKey;
      return issue;
    },
    close() {
      // Held and keep-alive sockets would keep close() waiting forever.
      server.closeAllConnections();
      return new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
