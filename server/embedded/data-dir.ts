// DATA_DIR bookkeeping for embedded mode: one gateway per folder, pid files of the children it
// started (so a SIGKILLed gateway's orphans are stopped on the next start), the generated master key.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rm, writeFile, chmod } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logger.ts';
import { commandLine, isAlive, terminate } from './processes.ts';

export async function ensureDataDir(dataDir: string): Promise<void> {
  // 0755: the embedded PostgreSQL runs as its own OS user and must traverse this folder.
  await mkdir(path.join(dataDir, 'run'), { recursive: true, mode: 0o755 });
}

async function readPid(file: string): Promise<number | null> {
  try {
    const pid = Number.parseInt((await readFile(file, 'utf8')).trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

export class DataDirInUseError extends Error {
  constructor(dataDir: string, pid: number) {
    super(`DATA_DIR ${dataDir} is in use by another gateway (pid ${pid}); stop it or choose another DATA_DIR`);
    this.name = 'DataDirInUseError';
  }
}

/** Takes the folder for this process. A lock left by a dead gateway is taken over. */
export async function acquireDataDirLock(dataDir: string): Promise<() => Promise<void>> {
  const lockFile = path.join(dataDir, 'run', 'gateway.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fh = await open(lockFile, 'wx', 0o644);
      await fh.writeFile(String(process.pid));
      await fh.close();
      return async () => {
        if ((await readPid(lockFile)) === process.pid) await rm(lockFile, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = await readPid(lockFile);
      if (holder && holder !== process.pid && isAlive(holder) && (await commandLine(holder)).includes('node')) {
        throw new DataDirInUseError(dataDir, holder);
      }
      await rm(lockFile, { force: true });
    }
  }
  throw new Error(`could not lock ${dataDir}`);
}

/**
 * Records a child's pid in DATA_DIR/run/<name>.pid; with `marker` (a string its command line
 * holds) on the second line, so a later start can stop it without knowing its name.
 */
export async function recordChild(dataDir: string, name: string, pid: number, marker?: string): Promise<void> {
  await mkdir(path.join(dataDir, 'run'), { recursive: true, mode: 0o755 });
  await writeFile(path.join(dataDir, 'run', `${name}.pid`), marker ? `${pid}\n${marker}\n` : String(pid));
}

async function readMarker(file: string): Promise<string | undefined> {
  const line = (await readFile(file, 'utf8').catch(() => '')).split('\n')[1]?.trim();
  return line || undefined;
}

export async function forgetChild(dataDir: string, name: string): Promise<void> {
  await rm(path.join(dataDir, 'run', `${name}.pid`), { force: true });
}

/**
 * Stops a child left running by a gateway that died without cleaning up. `marker` must occur in
 * the process's command line, so that a recycled pid is never signalled.
 */
export async function reapOrphan(dataDir: string, name: string, marker: string, logger: Logger): Promise<void> {
  const pid = await readPid(path.join(dataDir, 'run', `${name}.pid`));
  if (pid && isAlive(pid) && (await commandLine(pid)).includes(marker)) {
    logger.warn({ pid, child: name }, `stopping ${name} left running by an earlier gateway`);
    await terminate(pid, 'SIGINT', 15_000);
  }
  await forgetChild(dataDir, name);
}

/**
 * Stops every child recorded under DATA_DIR/run with a marker, whatever its name: a cluster
 * started again with fewer replicas must also stop those it no longer starts (a SIGKILLed
 * cluster's `worker-2` would otherwise keep running calls). The folder's lock is not a child.
 */
export async function reapRecordedChildren(dataDir: string, logger: Logger): Promise<void> {
  const names = (await readdir(path.join(dataDir, 'run')).catch(() => [] as string[]))
    .filter((f) => f.endsWith('.pid') && f !== 'gateway.pid')
    .map((f) => f.slice(0, -'.pid'.length));
  for (const name of names) {
    const marker = await readMarker(path.join(dataDir, 'run', `${name}.pid`));
    // Without a marker there is no telling a recycled pid from our child: leave it to its own start.
    if (marker) await reapOrphan(dataDir, name, marker, logger);
  }
}

/** The embedded-mode master key: generated once, 32 random bytes, file mode 0600. */
export async function loadOrCreateMasterKey(dataDir: string, logger: Logger): Promise<Buffer> {
  const file = path.join(dataDir, 'master.key');
  try {
    const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
    if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = randomBytes(32);
  await writeFile(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  await chmod(file, 0o600);
  logger.warn({ file }, 'generated a master key for the embedded vault; back it up, or set GATEWAY_MASTER_KEY');
  return key;
}
