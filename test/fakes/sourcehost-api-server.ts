/**
 * A source host's REST API in the GitHub wire format, on 127.0.0.1: the repositories a token
 * reaches (`GET /installation/repositories` → `{total_count, repositories}`, `GET /user/repos` →
 * an array, both paged with `per_page`/`page` and a `Link` header) and commit statuses
 * (`POST /repos/{owner}/{repo}/statuses/{sha}` → 201). Requires `Authorization: Bearer TOKEN`,
 * records every status posted, and can fail the next N status posts with 500 or redirect them (307).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PostedStatus {
  repository: string;
  sha: string;
  state: string;
  target_url?: string;
  description?: string;
  context?: string;
}

export interface FakeSourcehostApi {
  readonly baseUrl: string;
  readonly statuses: PostedStatus[];
  /** Every request line seen (method and path with query). */
  readonly requests: string[];
  /** Repositories the token reaches, as `owner/name`. */
  setRepositories(names: string[]): void;
  /** The next `count` status posts answer 500 (after the server has recorded nothing). */
  failNextStatuses(count: number): void;
  /** The next `count` status posts answer 307 to another path (recording nothing). */
  redirectNextStatuses(count: number): void;
  close(): Promise<void>;
}

function repositoryJson(fullName: string, baseUrl: string) {
  return {
    id: Math.abs([...fullName].reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, 7)),
    full_name: fullName,
    name: fullName.split('/')[1],
    private: fullName.includes('private'),
    default_branch: 'main',
    html_url: `${baseUrl}/${fullName}`,
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeSourcehostApi(options: { token: string }): Promise<FakeSourcehostApi> {
  let repositories: string[] = [];
  let failures = 0;
  let redirects = 0;
  const statuses: PostedStatus[] = [];
  const requests: string[] = [];
  let baseUrl = '';

  const send = (
    response: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  };

  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', baseUrl);
    requests.push(`${request.method} ${url.pathname}${url.search}`);
    if (request.headers.authorization !== `Bearer ${options.token}`) {
      send(response, 401, { message: 'Bad credentials' });
      return;
    }
    if (
      request.method === 'GET' &&
      (url.pathname === '/installation/repositories' || url.pathname === '/user/repos')
    ) {
      const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? 30));
      const page = Number(url.searchParams.get('page') ?? 1);
      const slice = repositories
        .slice((page - 1) * perPage, page * perPage)
        .map((r) => repositoryJson(r, baseUrl));
      const last = Math.max(1, Math.ceil(repositories.length / perPage));
      const links: string[] = [];
      if (page < last)
        links.push(`<${baseUrl}${url.pathname}?per_page=${perPage}&page=${page + 1}>; rel="next"`);
      links.push(`<${baseUrl}${url.pathname}?per_page=${perPage}&page=${last}>; rel="last"`);
      const headers = { link: links.join(', ') };
      if (url.pathname === '/user/repos') send(response, 200, slice, headers);
      else send(response, 200, { total_count: repositories.length, repositories: slice }, headers);
      return;
    }
    const status = /^\/repos\/([^/]+)\/([^/]+)\/statuses\/([0-9a-f]{40})$/.exec(url.pathname);
    if (request.method === 'POST' && status) {
      const body = JSON.parse(await readBody(request)) as Omit<PostedStatus, 'repository' | 'sha'>;
      if (failures > 0) {
        failures -= 1;
        send(response, 500, { message: 'Server Error' });
        return;
      }
      if (redirects > 0) {
        redirects -= 1;
        send(response, 307, { message: 'Moved' }, { location: `${baseUrl}/moved${url.pathname}` });
        return;
      }
      statuses.push({ repository: `${status[1]}/${status[2]}`, sha: status[3]!, ...body });
      send(response, 201, { id: statuses.length, state: body.state, context: body.context });
      return;
    }
    send(response, 404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    statuses,
    requests,
    setRepositories(names) {
      repositories = [...names];
    },
    failNextStatuses(count) {
      failures = count;
    },
    redirectNextStatuses(count) {
      redirects = count;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
