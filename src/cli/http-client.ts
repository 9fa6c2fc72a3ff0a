import { errorMessage } from '../sdk/index.ts';
import { CliError } from './cli-error.ts';

export { CliError };

/** Options every command that talks to a running server takes. */
export interface ServerOptions {
  url?: string;
  token?: string;
  json?: boolean;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
type HttpMethod = (typeof HTTP_METHODS)[number];
const isHttpMethod = (value: string): value is HttpMethod =>
  (HTTP_METHODS as readonly string[]).includes(value);

/** An operation on a path built at run time: an optional JSON body, the answer read as text. */
interface RuntimeOperation {
  parameters: { query?: never; header?: never; path?: never; cookie?: never };
  requestBody?: { content: { 'application/json': unknown } };
  responses: { default: { headers: Record<string, unknown>; content: { 'text/plain': string } } };
}

/** Every path, every method: the shape of calls whose path is only known at run time. */
type RuntimePaths = Record<string, Record<HttpMethod, RuntimeOperation>>;

/**
 * Calls the API with the user token and returns the parsed body; throws a CliError saying what went
 * wrong and what to do. The same client as every other command (`cliClient`: retries, the SDK's
 * error messages), for paths built at run time.
 */
export async function callApi(
  options: ServerOptions,
  env: Record<string, string | undefined>,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const { cliClient, resolveConnection } = await import('./settings.ts');
  const connection = await resolveConnection({ url: options.url, token: options.token }, env);
  const token = connection.token;
  if (!token)
    throw new CliError(
      'No token: pass --token, set VIGIL_TOKEN or run "vigil login --token …" (the admin token printed at first start).',
    );
  const verb = method.toLowerCase();
  if (!isHttpMethod(verb)) throw new CliError(`Unknown HTTP method ${method}.`);
  const api = cliClient<RuntimePaths>({ url: connection.url, credential: token });
  const result = await api.request(verb, path, {
    ...(body === undefined ? {} : { body }),
    parseAs: 'text',
  });
  if (!result.response.ok) {
    const message = errorMessage(result.error) ?? result.response.statusText;
    throw new CliError(`${method} ${path} failed with ${result.response.status}: ${message}`);
  }
  const text = result.data ?? '';
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

/** Prints rows as an aligned table (people) or JSON (scripts). */
export function printResult(value: unknown, json: boolean | undefined, columns?: string[]): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  const rows = Array.isArray(value) ? value : [value];
  if (rows.length === 0) {
    process.stdout.write('(none)\n');
    return;
  }
  const records = rows as Array<Record<string, unknown>>;
  process.stdout.write(`${formatTable(records, columns ?? Object.keys(records[0] ?? {}))}\n`);
}

/**
 * Rows as an aligned text table under a header line (objects shown as JSON, null as empty); with
 * `rule` (the default) a line of dashes separates the header from the rows.
 */
export function formatTable(
  records: ReadonlyArray<Record<string, unknown>>,
  columns: readonly string[],
  options: { rule?: boolean } = {},
): string {
  const cell = (v: unknown) =>
    v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  const widths = columns.map((k) => Math.max(k.length, ...records.map((r) => cell(r[k]).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [
    line([...columns]),
    ...(options.rule === false ? [] : [line(widths.map((w) => '-'.repeat(w)))]),
    ...records.map((r) => line(columns.map((k) => cell(r[k])))),
  ].join('\n');
}
