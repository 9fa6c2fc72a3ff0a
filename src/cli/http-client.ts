import { CliError } from './cli-error.ts';

export { CliError };

/** Options every command that talks to a running server takes. */
export interface ServerOptions {
  url?: string;
  token?: string;
  json?: boolean;
}

/** Calls the API and returns the parsed body; throws a CliError saying what went wrong and what to do. */
export async function callApi(
  options: ServerOptions,
  env: Record<string, string | undefined>,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const { resolveConnection, retryingFetch, DEFAULT_RETRY } = await import('./settings.ts');
  const connection = await resolveConnection({ url: options.url, token: options.token }, env);
  const base = connection.url;
  const token = connection.token;
  if (!token)
    throw new CliError(
      'No token: pass --token, set VIGIL_TOKEN or run "vigil login --token …" (the admin token printed at first start).',
    );
  const send = retryingFetch((request) => globalThis.fetch(request), DEFAULT_RETRY);
  const response = await send(
    new Request(base + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  if (!response.ok) {
    const message =
      (parsed as { msg?: string; error?: string } | null)?.msg ??
      (parsed as { error?: string } | null)?.error ??
      text;
    throw new CliError(`${method} ${path} failed with ${response.status}: ${message}`);
  }
  return parsed;
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
