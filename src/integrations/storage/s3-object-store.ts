/**
 * The S3 object store (AWS S3 or any S3-protocol server: MinIO, Ceph, s3rver).
 *
 * `putStream` spools the body to a local temporary file first: S3 needs the length of a
 * single-request PUT up front, and spooling lets the size limit be enforced before anything is
 * sent, so an oversized or broken body never reaches the bucket. Large client uploads go
 * straight to the bucket through `presignPut` instead.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { AppError } from '../../errors.ts';
import type { OutboundPolicy } from '../outbound/outbound-policy.ts';
import { assertObjectKey, createByteLimiter, type ObjectStore } from './object-store.ts';

/** Options of {@link createS3ObjectStore}. */
export interface S3ObjectStoreOptions {
  bucket: string;
  /** Endpoint of an S3-compatible server, e.g. `http://127.0.0.1:9000`. Default: AWS. */
  endpoint?: string;
  /** Default `us-east-1`. */
  region?: string;
  /** Address buckets as `endpoint/bucket/key`; most S3-compatible servers need it. */
  forcePathStyle?: boolean;
  /** Static credentials; without them the SDK's default chain (environment, profile, role) is used. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Prepended to every key (`vigil/` → `vigil/uploads/…`), to share a bucket. */
  keyPrefix?: string;
  /** Where `putStream` spools bodies. Default: the OS temporary directory. */
  spoolDir?: string;
  /** The outbound policy: every connection to the endpoint resolves through its checking lookup. */
  outbound?: Pick<OutboundPolicy, 'lookup' | 'isAddressAllowed'>;
}

/**
 * Agents whose `lookup` is the outbound policy's: the address checked is the address connected
 * to. A literal address in the endpoint is never looked up, so it is checked here, once.
 */
function checkedRequestHandler(
  outbound: Pick<OutboundPolicy, 'lookup' | 'isAddressAllowed'>,
  endpoint: string | undefined,
): { httpAgent: HttpAgent; httpsAgent: HttpsAgent } {
  if (endpoint) {
    const host = new URL(endpoint).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0 && !outbound.isAddressAllowed(host)) {
      throw new Error(
        `The object store endpoint ${host} is refused by the outbound policy; list it in VIGIL_OUTBOUND_ALLOW.`,
      );
    }
  }
  const lookup = outbound.lookup as NonNullable<ConstructorParameters<typeof HttpAgent>[0]>['lookup'];
  return {
    httpAgent: new HttpAgent({ keepAlive: true, lookup }),
    httpsAgent: new HttpsAgent({ keepAlive: true, lookup }),
  };
}

type S3Sdk = typeof import('@aws-sdk/client-s3') & {
  getSignedUrl: typeof import('@aws-sdk/s3-request-presigner').getSignedUrl;
};
let sdkModule: Promise<S3Sdk> | undefined;
/** The AWS SDK loads with the first S3 call: a process on the file system store never loads it. */
function loadS3Sdk(): Promise<S3Sdk> {
  sdkModule ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/s3-request-presigner')]).then(
    ([s3, presigner]) => ({ ...s3, getSignedUrl: presigner.getSignedUrl }),
  );
  return sdkModule;
}

/** S3 refuses presigned URLs valid for longer than 7 days. */
const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

/** Creates the S3 object store. */
export function createS3ObjectStore(options: S3ObjectStoreOptions): ObjectStore {
  const config: S3ClientConfig = {
    region: options.region ?? 'us-east-1',
    forcePathStyle: options.forcePathStyle ?? false,
    // The SDK's default adds CRC32 checksums and aws-chunked bodies, which many S3-compatible
    // servers store verbatim or refuse, and it bakes an empty-body checksum into presigned PUT
    // URLs. Checksums only where the API requires them keeps every server working.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
    ...(options.outbound
      ? { requestHandler: checkedRequestHandler(options.outbound, options.endpoint) }
      : {}),
  };
  let opened: Promise<{ sdk: S3Sdk; client: S3Client }> | undefined;
  const connect = () => {
    opened ??= loadS3Sdk().then((sdk) => ({ sdk, client: new sdk.S3Client(config) }));
    return opened;
  };
  const bucket = options.bucket;
  const keyPrefix = options.keyPrefix ? `${options.keyPrefix.replace(/\/+$/, '')}/` : '';
  const spoolDir = options.spoolDir ?? tmpdir();

  const s3Key = (key: string): string => {
    assertObjectKey(key);
    return keyPrefix + key;
  };

  return {
    kind: 's3',

    async putStream(key, body, { maxBytes }) {
      const { sdk, client } = await connect();
      const objectKey = s3Key(key);
      await mkdir(spoolDir, { recursive: true });
      const spool = join(spoolDir, `vigil-spool-${randomUUID()}.part`);
      let sizeBytes = 0;
      try {
        await pipeline(
          body,
          createByteLimiter(maxBytes, (n) => {
            sizeBytes = n;
          }),
          createWriteStream(spool, { flags: 'wx' }),
        );
        await client.send(
          new sdk.PutObjectCommand({
            Bucket: bucket,
            Key: objectKey,
            Body: createReadStream(spool),
            ContentLength: sizeBytes,
          }),
        );
      } finally {
        await rm(spool, { force: true });
      }
      return { sizeBytes };
    },

    async copy(sourceKey, targetKey) {
      const { sdk, client } = await connect();
      const from = s3Key(sourceKey);
      try {
        // Keys are made of URL-safe characters only (assertObjectKey), but encode them anyway.
        await client.send(
          new sdk.CopyObjectCommand({
            Bucket: bucket,
            Key: s3Key(targetKey),
            CopySource: `${bucket}/${from.split('/').map(encodeURIComponent).join('/')}`,
          }),
        );
        const copied = await client.send(
          new sdk.HeadObjectCommand({ Bucket: bucket, Key: s3Key(targetKey) }),
        );
        return { sizeBytes: copied.ContentLength ?? 0 };
      } catch (err) {
        if (isS3NotFound(err)) {
          throw new AppError('NOT_FOUND', {
            message: `No object with key "${sourceKey}".`,
            details: { key: sourceKey },
          });
        }
        throw err;
      }
    },

    async getStream(key) {
      const { sdk, client } = await connect();
      try {
        const result = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: s3Key(key) }));
        if (!(result.Body instanceof Readable)) {
          throw new Error(`The S3 response body for "${key}" is not a Node stream.`);
        }
        return result.Body;
      } catch (err) {
        if (isS3NotFound(err)) {
          throw new AppError('NOT_FOUND', { message: `No object with key "${key}".`, details: { key } });
        }
        throw err;
      }
    },

    async head(key) {
      const { sdk, client } = await connect();
      try {
        const result = await client.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: s3Key(key) }));
        return { sizeBytes: result.ContentLength ?? 0 };
      } catch (err) {
        if (isS3NotFound(err)) return null;
        throw err;
      }
    },

    async delete(key) {
      const { sdk, client } = await connect();
      await client.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: s3Key(key) }));
    },

    async deletePrefix(prefix) {
      const { sdk, client } = await connect();
      const listPrefix = `${s3Key(prefix.replace(/\/+$/, ''))}/`;
      let continuationToken: string | undefined;
      do {
        const page = await client.send(
          new sdk.ListObjectsV2Command({
            Bucket: bucket,
            Prefix: listPrefix,
            ContinuationToken: continuationToken,
          }),
        );
        // One DELETE per object rather than DeleteObjects: that call needs a Content-MD5 or a
        // checksum header that not every S3-compatible server accepts, and prefixes here are small.
        for (const object of page.Contents ?? []) {
          if (object.Key) await client.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: object.Key }));
        }
        continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (continuationToken);
    },

    async *list(prefix) {
      const { sdk, client } = await connect();
      const listPrefix = `${s3Key(prefix.replace(/\/+$/, ''))}/`;
      let continuationToken: string | undefined;
      do {
        const page = await client.send(
          new sdk.ListObjectsV2Command({
            Bucket: bucket,
            Prefix: listPrefix,
            ContinuationToken: continuationToken,
          }),
        );
        for (const object of page.Contents ?? []) {
          if (object.Key?.startsWith(keyPrefix)) {
            yield { key: object.Key.slice(keyPrefix.length), modifiedAt: object.LastModified ?? new Date(0) };
          }
        }
        continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (continuationToken);
    },

    async presignPut(key, { expiresAt, contentLength }) {
      const { sdk, client } = await connect();
      const seconds = Math.ceil((expiresAt.getTime() - Date.now()) / 1000);
      const expiresIn = Math.min(Math.max(seconds, 1), MAX_PRESIGN_SECONDS);
      const command = new sdk.PutObjectCommand({
        Bucket: bucket,
        Key: s3Key(key),
        ...(contentLength === undefined ? {} : { ContentLength: contentLength }),
      });
      const url = await sdk.getSignedUrl(client, command, {
        expiresIn,
        // Signing the length makes the bucket refuse a body of any other size.
        ...(contentLength === undefined ? {} : { signableHeaders: new Set(['content-length']) }),
      });
      const headers: Record<string, string> = {};
      if (contentLength !== undefined) headers['content-length'] = String(contentLength);
      return { url, headers };
    },

    async close() {
      if (opened) (await opened).client.destroy();
    },
  };
}

function isS3NotFound(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { name, $metadata } = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return name === 'NoSuchKey' || name === 'NotFound' || $metadata?.httpStatusCode === 404;
}
