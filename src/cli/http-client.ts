import { errorMessage } from '../sdk/index.ts';
import { CliError } from './cli-error.ts';

export { CliError };

/** Options every command that talks to a running server takes. */
export interface ServerOptions {
  url?: string;
  token?: string;
  json?: boolean;
}

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
  const api = cliClient({ url: connection.url, credential: token });
  // The typed methods take the API's path templates; a path built at run time goes through as is.
  const send = api[method.toUpperCase() as 'GET'] as unknown as (
    path: string,
    init: { body?: unknown; parseAs: 'text' },
  ) => Promise<{ data?: string; error?: unknown; response: Response }>;
  const result = await send(path, { ...(body === undefined ? {} : { body }), parseAs: 'text' });
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
