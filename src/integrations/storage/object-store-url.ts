/**
 * The object store chosen by one configuration string:
 *
 * - `file:./data/objects`, `file:/var/lib/vigil/objects` or `file:///var/lib/vigil/objects` —
 *   the file system store (a relative path is resolved against the working directory);
 * - `s3://bucket`, `s3://bucket/key-prefix?endpoint=http://127.0.0.1:9000&region=eu-west-1&forcePathStyle=true`
 *   — the S3 store; `s3://ACCESS_KEY:SECRET@bucket` gives static credentials (URL-encoded),
 *   otherwise the AWS SDK's default credential chain is used.
 */
import { fileURLToPath } from 'node:url';
import { createFsObjectStore } from './fs-object-store.ts';
import type { ObjectStore } from './object-store.ts';
import { createS3ObjectStore, type S3ObjectStoreOptions } from './s3-object-store.ts';

/** The parsed form of an object store URL. */
export type ObjectStoreConfig = { kind: 'fs'; root: string } | ({ kind: 's3' } & S3ObjectStoreOptions);

/** The configuration used when none is given. */
export const DEFAULT_OBJECT_STORE_URL = 'file:./data/objects';

/**
 * Parses an object store URL (see the module comment). Throws an Error naming the problem for
 * an unknown scheme, a missing bucket or an unknown query parameter; this runs once at start-up.
 */
export function parseObjectStoreUrl(value: string): ObjectStoreConfig {
  if (value.startsWith('file://')) return { kind: 'fs', root: fileURLToPath(value) };
  if (value.startsWith('file:')) {
    const root = value.slice('file:'.length);
    if (root === '')
      throw new Error('The object store URL "file:" needs a directory, e.g. file:./data/objects.');
    return { kind: 'fs', root };
  }
  if (!value.startsWith('s3://')) {
    throw new Error(`The object store URL must start with file: or s3:// (got "${redact(value)}").`);
  }
  const url = new URL(value);
  const bucket = url.hostname;
  if (bucket.length < 3)
    throw new Error('The object store URL s3://BUCKET needs a bucket name of 3 characters or more.');
  const config: { kind: 's3' } & S3ObjectStoreOptions = { kind: 's3', bucket };
  const keyPrefix = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, '');
  if (keyPrefix) config.keyPrefix = keyPrefix;
  if (url.username) {
    config.credentials = {
      accessKeyId: decodeURIComponent(url.username),
      secretAccessKey: decodeURIComponent(url.password),
    };
  }
  for (const [name, param] of url.searchParams) {
    switch (name) {
      case 'endpoint':
        config.endpoint = param;
        break;
      case 'region':
        config.region = param;
        break;
      case 'forcePathStyle':
        config.forcePathStyle = param === 'true' || param === '1';
        break;
      default:
        throw new Error(
          `Unknown parameter "${name}" in the object store URL (known: endpoint, region, forcePathStyle).`,
        );
    }
  }
  return config;
}

/** Creates the object store an object store URL names (S3 connections through `outbound` when given). */
export function createObjectStore(
  value: string = DEFAULT_OBJECT_STORE_URL,
  outbound?: S3ObjectStoreOptions['outbound'],
): ObjectStore {
  const config = parseObjectStoreUrl(value);
  if (config.kind === 'fs') return createFsObjectStore({ root: config.root });
  const { kind: _kind, ...options } = config;
  return createS3ObjectStore(outbound ? { ...options, outbound } : options);
}

/** Error messages may reach logs; never print credentials. */
function redact(value: string): string {
  return value.replace(/\/\/[^@/]*@/, '//***@');
}
