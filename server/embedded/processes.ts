// Small helpers for the child processes the gateway supervises (embedded PostgreSQL, Temporal).
import net from 'node:net';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Children the gateway must not leave behind. If the process exits without a clean stop (a forced
 * second signal, an uncaught error), the exit hook signals them synchronously; they then shut
 * down on their own, and the next start reaps anything that survived.
 */
const supervised = new Map<number, NodeJS.Signals>();
let exitHookInstalled = false;

export function superviseChild(pid: number, stopSignal: NodeJS.Signals): void {
  supervised.set(pid, stopSignal);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const [child, signal] of supervised) {
        try {
          process.kill(child, signal);
        } catch {
          /* already gone */
        }
      }
    });
  }
}

export function releaseChild(pid: number): void {
  supervised.delete(pid);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The command line of a live process, so a reused pid is never mistaken for our child. */
export async function commandLine(pid: number): Promise<string> {
  try {
    return (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(50);
  }
  return !isAlive(pid);
}

/** Stops a process politely, then firmly. Returns once it is gone. */
export async function terminate(pid: number, signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000): Promise<void> {
  if (!isAlive(pid)) return;
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  if (await waitForExit(pid, graceMs)) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  await waitForExit(pid, 5_000);
}

/**
 * A port nobody listens on now, chosen below the kernel's ephemeral range. A port the kernel hands
 * out (bind to 0, an outgoing connection's source port) can be handed out again to anyone between
 * this check and our listen — Temporal's dev server binds its internal services that way, and CI
 * once lost a gateway start to it. A port below that range is only ever taken by an explicit
 * choice, so the window is closed to everything but another caller of this function.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const [low, high] = candidateRange(await ephemeralRange());
  for (let attempt = 0; attempt < 64 && high > low; attempt += 1) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await listensFreeEverywhere(port, host)) return port;
  }
  return kernelPort(host);
}

const FLOOR = 10_000; // above the well-known and registered ports services commonly default to

function candidateRange([ephemeralLow, ephemeralHigh]: [number, number]): [number, number] {
  if (ephemeralLow - FLOOR >= 2_000) return [FLOOR, ephemeralLow];
  return [Math.max(ephemeralHigh + 1, FLOOR), 65_536]; // a kernel configured to use the low ports
}

async function ephemeralRange(): Promise<[number, number]> {
  try {
    const [low, high] = (await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')).trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low!, high!];
  } catch {
    // not Linux: the IANA dynamic range
  }
  return [49_152, 65_535];
}

// The caller may listen on the loopback or on every interface (the gateway's default is `::`):
// the port must be free on all of them. A host without IPv6 has nothing on `::` to collide with.
async function listensFreeEverywhere(port: number, host: string): Promise<boolean> {
  for (const address of new Set([host, '0.0.0.0', '::'])) {
    const error = await listenError(port, address);
    if (error === 'EADDRINUSE' || error === 'EACCES') return false;
    if (error && address === host) return false;
  }
  return true;
}

function listenError(port: number, host: string): Promise<string | null> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(null)));
  });
}

function kernelPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export async function portAcceptsConnections(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(1_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function waitForPort(host: string, port: number, timeoutMs: number, isDead: () => boolean = () => false): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (isDead()) throw new Error(`process exited before ${host}:${port} accepted connections`);
    if (await portAcceptsConnections(host, port)) return;
    await sleep(100);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${host}:${port}`);
}

/** Whether nothing listens on `port` (on `host`, and on the wildcard addresses that would clash). */
export async function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return listensFreeEverywhere(port, host);
}

/**
 * Whether the process `pid` itself holds the listening socket on `port` (Linux: /proc). A port
 * that accepts connections proves only that someone listens there: a child that failed to bind
 * would otherwise pass for ready, and the caller would talk to whoever owns the port. Where /proc
 * is missing it cannot be told, and the answer is true.
 */
export async function listensOn(pid: number, port: number): Promise<boolean> {
  const inodes = new Set<string>();
  let tables = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => null);
    if (text === null) continue;
    tables += 1;
    for (const inode of listeningInodes(text, port)) inodes.add(inode);
  }
  if (tables === 0) return true;
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => null);
  if (fds === null) return true;
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode && inodes.has(inode)) return true;
  }
  return false;
}

/** Socket inodes listening on `port` in one /proc/net/tcp{,6} table (pure). */
export function listeningInodes(table: string, port: number): string[] {
  const LISTEN = '0A';
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const out: string[] = [];
  for (const line of table.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 10) continue;
    if (cols[1]!.split(':')[1] === hexPort && cols[3] === LISTEN) out.push(cols[9]!);
  }
  return out;
}
