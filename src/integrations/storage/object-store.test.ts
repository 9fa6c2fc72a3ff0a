import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, type ErrorCode } from '../../errors.ts';
import { createFsObjectStore } from './fs-object-store.ts';
import type { ObjectStore } from './object-store.ts';
import { createObjectStore, parseObjectStoreUrl } from './object-store-url.ts';
import { createS3ObjectStore } from './s3-object-store.ts';

interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;

const BUCKET = 'vigil-test';

async function rejectionOf(promise: Promise<unknown>, code: ErrorCode): Promise<AppError> {
  const err = await promise.then(
    () => {
      throw new Error(`expected ${code}, but the promise resolved`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe(code);
  return err as AppError;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function chunked(total: number, chunkSize: number, fill = 0x61): Readable {
  function* chunks(): Generator<Buffer> {
    for (let sent = 0; sent < total; sent += chunkSize)
      yield Buffer.alloc(Math.min(chunkSize, total - sent), fill);
  }
  return Readable.from(chunks());
}

/** The behaviour every ObjectStore adapter must have. */
function describeObjectStoreContract(name: string, open: () => ObjectStore): void {
  describe(`${name} object store`, () => {
    let store: ObjectStore;
    beforeAll(() => {
      store = open();
    });

    it('stores a streamed body and reads it back', async () => {
      const body = Buffer.from('tar.gz bytes \u0000\u00ff');

      const put = await store.putStream('uploads/org1/a.tar.gz', Readable.from([body]), { maxBytes: 1024 });

      expect(put).toEqual({ sizeBytes: body.length });
      expect(await readAll(await store.getStream('uploads/org1/a.tar.gz'))).toEqual(body);
      expect(await store.head('uploads/org1/a.tar.gz')).toEqual({ sizeBytes: body.length });
    });

    it('streams a body of many chunks up to exactly maxBytes', async () => {
      const size = 3 * 1024 * 1024 + 17;

      const put = await store.putStream('uploads/org1/big.tar.gz', chunked(size, 64 * 1024), {
        maxBytes: size,
      });

      expect(put.sizeBytes).toBe(size);
      const back = await readAll(await store.getStream('uploads/org1/big.tar.gz'));
      expect(back.length).toBe(size);
      expect(back.every((byte) => byte === 0x61)).toBe(true);
    });

    it('replaces the first object on a second put', async () => {
      await store.putStream('uploads/org1/r.tar.gz', Readable.from([Buffer.from('first')]), {
        maxBytes: 100,
      });
      await store.putStream('uploads/org1/r.tar.gz', Readable.from([Buffer.from('second!')]), {
        maxBytes: 100,
      });

      expect((await readAll(await store.getStream('uploads/org1/r.tar.gz'))).toString()).toBe('second!');
      expect(await store.head('uploads/org1/r.tar.gz')).toEqual({ sizeBytes: 7 });
    });

    it('keeps nothing from an oversized put', async () => {
      const err = await rejectionOf(
        store.putStream('uploads/org1/over.tar.gz', chunked(200_000, 16 * 1024), { maxBytes: 100_000 }),
        'UPLOAD_TOO_LARGE',
      );

      expect(err.details).toEqual({ maxBytes: 100_000 });
      expect(await store.head('uploads/org1/over.tar.gz')).toBeNull();
    });

    it('keeps the previous object when a replacing put is oversized', async () => {
      await store.putStream('uploads/org1/keep.tar.gz', Readable.from([Buffer.from('good')]), {
        maxBytes: 10,
      });

      await rejectionOf(
        store.putStream('uploads/org1/keep.tar.gz', Readable.from([Buffer.from('way too long')]), {
          maxBytes: 10,
        }),
        'UPLOAD_TOO_LARGE',
      );

      expect((await readAll(await store.getStream('uploads/org1/keep.tar.gz'))).toString()).toBe('good');
    });

    it('keeps the previous object when the body fails midway', async () => {
      await store.putStream('uploads/org1/broken.tar.gz', Readable.from([Buffer.from('good')]), {
        maxBytes: 100,
      });
      const failure = new Error('client went away');
      let sent = false;
      const body = new Readable({
        read() {
          if (sent) {
            this.destroy(failure);
          } else {
            sent = true;
            this.push(Buffer.from('partial'));
          }
        },
      });

      await expect(store.putStream('uploads/org1/broken.tar.gz', body, { maxBytes: 100 })).rejects.toBe(
        failure,
      );

      expect((await readAll(await store.getStream('uploads/org1/broken.tar.gz'))).toString()).toBe('good');
    });

    it('copies an object into a snapshot that a later put to the source does not change', async () => {
      const first = Buffer.from('verified bytes');
      await store.putStream('uploads/org1/c.tar.gz', Readable.from([first]), { maxBytes: 1024 });

      const copied = await store.copy('uploads/org1/c.tar.gz', 'archives/org1/c.tar.gz');
      await store.putStream('uploads/org1/c.tar.gz', Readable.from([Buffer.from('replaced later')]), {
        maxBytes: 1024,
      });

      expect(copied).toEqual({ sizeBytes: first.length });
      expect(await readAll(await store.getStream('archives/org1/c.tar.gz'))).toEqual(first);
      expect((await readAll(await store.getStream('uploads/org1/c.tar.gz'))).toString()).toBe(
        'replaced later',
      );
      // Removing the source keeps the copy, and removing the copy keeps the source.
      await store.delete('uploads/org1/c.tar.gz');
      expect(await readAll(await store.getStream('archives/org1/c.tar.gz'))).toEqual(first);
      await store.delete('archives/org1/c.tar.gz');
      expect(await store.head('archives/org1/c.tar.gz')).toBeNull();
    });

    it('answers NOT_FOUND for copying a missing object and creates nothing', async () => {
      await expect(store.copy('uploads/org1/none.tar.gz', 'archives/org1/none.tar.gz')).rejects.toMatchObject(
        {
          code: 'NOT_FOUND',
        },
      );
      expect(await store.head('archives/org1/none.tar.gz')).toBeNull();
    });

    it('answers NOT_FOUND for reading a missing object and null for its head', async () => {
      await rejectionOf(store.getStream('uploads/org1/missing.tar.gz'), 'NOT_FOUND');
      expect(await store.head('uploads/org1/missing.tar.gz')).toBeNull();
    });

    it('deletes an object, and deleting it again is fine', async () => {
      await store.putStream('uploads/org1/d.tar.gz', Readable.from([Buffer.from('x')]), { maxBytes: 10 });

      await store.delete('uploads/org1/d.tar.gz');
      await store.delete('uploads/org1/d.tar.gz');

      expect(await store.head('uploads/org1/d.tar.gz')).toBeNull();
    });

    it('deletes every object under a prefix and nothing beside it', async () => {
      for (const key of ['p/ws1/a', 'p/ws1/sub/b', 'p/ws10/c']) {
        await store.putStream(key, Readable.from([Buffer.from(key)]), { maxBytes: 100 });
      }

      await store.deletePrefix('p/ws1');

      expect(await store.head('p/ws1/a')).toBeNull();
      expect(await store.head('p/ws1/sub/b')).toBeNull();
      expect(await store.head('p/ws10/c')).toEqual({ sizeBytes: 8 });
    });

    it('lists the objects under a prefix, nested ones included, with their write time', async () => {
      const before = Date.now() - 60_000;
      for (const key of ['l/ws1/a', 'l/ws1/sub/b', 'l/ws10/c'])
        await store.putStream(key, Readable.from([Buffer.from('x')]), { maxBytes: 10 });

      const listed = [];
      for await (const object of store.list('l/ws1')) listed.push(object);

      expect(listed.map((o) => o.key).sort()).toEqual(['l/ws1/a', 'l/ws1/sub/b']);
      for (const o of listed) expect(o.modifiedAt.getTime()).toBeGreaterThan(before);
      const none = [];
      for await (const object of store.list('l/missing')) none.push(object);
      expect(none).toEqual([]);
    });

    it.each(['../escape', '/etc/passwd', 'a//b', 'a/./b', 'a/../b', '.tmp/x', 'a\\b', '', 'a/b/'])(
      'refuses the key %j',
      async (key) => {
        await rejectionOf(
          store.putStream(key, Readable.from([Buffer.from('x')]), { maxBytes: 10 }),
          'VALIDATION_FAILED',
        );
        await rejectionOf(store.getStream(key), 'VALIDATION_FAILED');
        await rejectionOf(store.copy(key, 'archives/org1/k.tar.gz'), 'VALIDATION_FAILED');
        await rejectionOf(store.copy('uploads/org1/a.tar.gz', key), 'VALIDATION_FAILED');
      },
    );
  });
}

describe('file system store', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'vigil-objects-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  describeObjectStoreContract('fs', () => createFsObjectStore({ root }));

  it('leaves no staging file behind after an oversized put', async () => {
    const store = createFsObjectStore({ root });

    await rejectionOf(
      store.putStream('x/over', chunked(50_000, 1000), { maxBytes: 10_000 }),
      'UPLOAD_TOO_LARGE',
    );

    expect(await readdir(join(root, '.tmp'))).toEqual([]);
  });

  it('removes staging files left by an interrupted upload on its first write', async () => {
    const crashRoot = await mkdtemp(join(tmpdir(), 'vigil-objects-crash-'));
    await mkdir(join(crashRoot, '.tmp'), { recursive: true });
    const stale = join(crashRoot, '.tmp', 'left-by-a-crash.part');
    const recent = join(crashRoot, '.tmp', 'upload-in-progress.part');
    await writeFile(stale, 'partial');
    await writeFile(recent, 'partial');
    const twoDaysAgo = new Date(Date.now() - 48 * 3600 * 1000);
    await utimes(stale, twoDaysAgo, twoDaysAgo);

    await createFsObjectStore({ root: crashRoot }).putStream('a/b', Readable.from([Buffer.from('x')]), {
      maxBytes: 10,
    });

    expect(await readdir(join(crashRoot, '.tmp'))).toEqual(['upload-in-progress.part']);
    await rm(crashRoot, { recursive: true, force: true });
  });

  it('has no presigned upload URL', async () => {
    const store = createFsObjectStore({ root });

    expect(
      await store.presignPut('x/y', { expiresAt: new Date(Date.now() + 60_000), maxBytes: 10 }),
    ).toBeNull();
  });
});

describe('S3 store against s3rver', () => {
  let server: S3rverInstance;
  let dataDir: string;
  let endpoint: string;
  const stores: ObjectStore[] = [];

  const openStore = (): ObjectStore => {
    const store = createS3ObjectStore({
      bucket: BUCKET,
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'vigil-s3rver-'));
    server = new S3rver({
      address: '127.0.0.1',
      port: 0,
      silent: true,
      directory: dataDir,
      configureBuckets: [{ name: BUCKET, configs: [] }],
    });
    const { port } = await server.run();
    endpoint = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  describeObjectStoreContract('s3', openStore);

  it('stores an object sent by fetch to a presigned PUT URL', async () => {
    const store = openStore();
    const presigned = await store.presignPut('uploads/org2/p.tar.gz', {
      expiresAt: new Date(Date.now() + 600_000),
      maxBytes: 1000,
    });
    expect(presigned).not.toBeNull();

    const response = await fetch(presigned?.url ?? '', {
      method: 'PUT',
      headers: presigned?.headers ?? {},
      body: Buffer.from('presigned body'),
    });

    expect(response.status).toBe(200);
    expect((await readAll(await store.getStream('uploads/org2/p.tar.gz'))).toString()).toBe('presigned body');
  });

  it('signs the declared content length into the URL', async () => {
    // s3rver does not check v4 signatures, so only the signing is visible here; S3 itself
    // refuses a body whose length differs from a signed content-length.
    const store = openStore();
    const presigned = await store.presignPut('uploads/org2/exact.tar.gz', {
      expiresAt: new Date(Date.now() + 600_000),
      maxBytes: 1000,
      contentLength: 5,
    });

    const signed = new URL(presigned?.url ?? '').searchParams.get('X-Amz-SignedHeaders');
    expect(signed?.split(';')).toContain('content-length');
    expect(presigned?.headers).toEqual({ 'content-length': '5' });
    const response = await fetch(presigned?.url ?? '', { method: 'PUT', body: Buffer.from('five!') });
    expect(response.status).toBe(200);
    expect(await store.head('uploads/org2/exact.tar.gz')).toEqual({ sizeBytes: 5 });
  });

  it('keeps keys under the key prefix of the URL', async () => {
    const prefixed = createObjectStore(
      `s3://S3RVER:S3RVER@${BUCKET}/tenant-a?endpoint=${endpoint}&forcePathStyle=true`,
    );
    stores.push(prefixed);
    const plain = openStore();

    await prefixed.putStream('k/v', Readable.from([Buffer.from('prefixed')]), { maxBytes: 100 });

    expect(await plain.head('tenant-a/k/v')).toEqual({ sizeBytes: 8 });
    expect(await plain.head('k/v')).toBeNull();
  });
});

describe('parseObjectStoreUrl', () => {
  it('reads file: URLs, relative and absolute', () => {
    expect(parseObjectStoreUrl('file:./data/objects')).toEqual({ kind: 'fs', root: './data/objects' });
    expect(parseObjectStoreUrl('file:/var/lib/vigil')).toEqual({ kind: 'fs', root: '/var/lib/vigil' });
    expect(parseObjectStoreUrl('file:///var/lib/vigil')).toEqual({ kind: 'fs', root: '/var/lib/vigil' });
  });

  it('reads s3:// URLs with endpoint, region, path style, prefix and credentials', () => {
    expect(
      parseObjectStoreUrl(
        's3://AKIA%2Fx:s%40cret@my-bucket/some/prefix/?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=eu-west-1&forcePathStyle=true',
      ),
    ).toEqual({
      kind: 's3',
      bucket: 'my-bucket',
      keyPrefix: 'some/prefix',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKIA/x', secretAccessKey: 's@cret' },
    });
    expect(parseObjectStoreUrl('s3://bucket')).toEqual({ kind: 's3', bucket: 'bucket' });
  });

  it.each([
    ['ftp://x/y', 'must start with'],
    ['s3://ab', '3 characters'],
    ['s3://bucket?acl=public', 'Unknown parameter "acl"'],
    ['file:', 'needs a directory'],
  ])('refuses %s', (value, message) => {
    expect(() => parseObjectStoreUrl(value)).toThrow(message);
  });

  it('creates a file system store from the default URL', async () => {
    const store = createObjectStore();

    expect(store.kind).toBe('fs');
    expect(await store.head('never/written')).toBeNull();
  });
});
