/**
 * Reads blobs out of a local repository through one long-lived `git cat-file --batch`, so that
 * reading a thousand files costs one process, not a thousand. Requests are pipelined: git answers
 * in the order it was asked, and each answer is `<id> <type> <size>\n<content>\n`.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { GitCommand } from './git-command.ts';

/** A reader of blobs by object id. */
export interface GitBlobReader {
  /** The content of blob `id`. */
  read(id: string): Promise<Buffer>;
  /** Ends the git process once the pending reads are answered. Safe to call twice. */
  close(): Promise<void>;
}

interface PendingRead {
  readonly id: string;
  readonly resolve: (content: Buffer) => void;
  readonly reject: (error: Error) => void;
}

const NEWLINE = 0x0a;

/**
 * Starts `git cat-file --batch` lazily (on the first read) with `command`, whose args must end
 * in `cat-file --batch`.
 */
export function createGitBlobReader(command: GitCommand): GitBlobReader {
  let child: ChildProcessByStdio<Writable, Readable, null> | undefined;
  let exited: Promise<void> | undefined;
  let closed = false;
  let failure: Error | undefined;
  const pending: PendingRead[] = [];

  // Output not yet consumed, kept as chunks: a large blob is joined once, when complete.
  let chunks: Buffer[] = [];
  let buffered = 0;
  let bodySize: number | null = null;

  const take = (length: number): Buffer => {
    const all = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, buffered);
    const taken = Buffer.from(all.subarray(0, length));
    const rest = all.subarray(length);
    chunks = rest.length > 0 ? [rest] : [];
    buffered = rest.length;
    return taken;
  };

  const failAll = (error: Error): void => {
    failure ??= error;
    for (const read of pending.splice(0)) read.reject(error);
  };

  const drain = (): void => {
    for (;;) {
      const head = pending[0];
      if (head === undefined) return;
      if (bodySize === null) {
        if (chunks.length > 1) chunks = [Buffer.concat(chunks, buffered)];
        const newline = chunks[0]?.indexOf(NEWLINE) ?? -1;
        if (newline === -1) return;
        const header = take(newline + 1)
          .toString('latin1')
          .trimEnd();
        const match = /^([0-9a-f]{40}) blob (\d+)$/.exec(header);
        if (match === null || match[1] !== head.id) {
          pending.shift();
          // `<id> missing`, or a tree or tag id: no content follows, the next answer is intact.
          head.reject(new Error(`git has no blob ${head.id} (${header.slice(0, 120)})`));
          continue;
        }
        bodySize = Number(match[2]);
      }
      // The content is followed by a newline of its own.
      if (buffered < bodySize + 1) return;
      const content = take(bodySize);
      take(1);
      bodySize = null;
      pending.shift();
      head.resolve(content);
    }
  };

  const start = (): ChildProcessByStdio<Writable, Readable, null> => {
    const catFile = spawn('git', command.args, { env: command.env, stdio: ['pipe', 'pipe', 'ignore'] });
    catFile.stdout.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      buffered += chunk.length;
      drain();
    });
    catFile.stdin.on('error', (error) => failAll(error));
    catFile.on('error', (error) => failAll(error));
    exited = new Promise((resolve) => {
      catFile.on('close', (code) => {
        failAll(new Error(`git cat-file ended (exit ${code})`));
        resolve();
      });
    });
    return catFile;
  };

  return {
    read(id) {
      if (closed) return Promise.reject(new Error('The blob reader is closed.'));
      if (failure !== undefined) return Promise.reject(failure);
      child ??= start();
      const catFile = child;
      return new Promise<Buffer>((resolve, reject) => {
        pending.push({ id, resolve, reject });
        catFile.stdin.write(`${id}\n`);
      });
    },
    async close() {
      if (closed) {
        await exited;
        return;
      }
      closed = true;
      if (child === undefined) return;
      // End of input makes cat-file answer what it was asked and exit.
      child.stdin.end();
      await exited;
    },
  };
}
