import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { buildApp } from '../app.ts';
import type { Config } from '../config.ts';
import { createContainer, createLogger } from '../container.ts';
import { CliError } from './http-client.ts';

/** The OpenAPI document generated from the route schemas, as stable JSON text. */
export async function generateOpenApi(config: Config): Promise<string> {
  // The document needs the routes only: a pool that never connects (no query is sent) and a
  // throwaway key stand in for the database and the secret.
  const container = await createContainer(
    {
      ...config,
      database: { kind: 'postgres', url: 'postgres://vigil@127.0.0.1:1/unused', poolSize: 1 },
      secretKey: randomBytes(32),
      redisUrl: null,
    },
    { migrate: false, log: createLogger({ logLevel: 'silent' }) },
  );
  try {
    const app = await buildApp(container);
    await app.ready();
    const text = `${JSON.stringify(app.swagger(), null, 2)}\n`;
    await app.close();
    return text;
  } finally {
    await container.close();
  }
}

/** `vigil openapi [--output FILE] [--check FILE]`. */
export async function runOpenApiCommand(
  config: Config,
  options: { output?: string; check?: string },
): Promise<void> {
  const text = await generateOpenApi(config);
  if (options.check) {
    const committed = await readFile(options.check, 'utf8').catch(() => '');
    if (committed !== text) {
      throw new CliError(
        `${options.check} is out of date with the route schemas. Run: npm run openapi:write`,
      );
    }
    process.stdout.write(`${options.check} matches the route schemas.\n`);
    return;
  }
  if (options.output) {
    await writeFile(options.output, text);
    process.stdout.write(`wrote ${options.output}\n`);
    return;
  }
  process.stdout.write(text);
}
