// A cluster folder's settings — its ports, master key and admin password — chosen on the first
// start and reused on every later one: Temporal records its members' addresses, and a replica that
// comes back keeps its health URL.
import { randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { freePort, portIsFree } from '../embedded/processes.ts';
import type { TemporalPorts } from './temporal-server.ts';

export interface ClusterPorts {
  postgres: number;
  temporal: TemporalPorts;
  ui: number;
  /** One per API replica. */
  api: number[];
  /** Health endpoints of the worker replicas. */
  worker: number[];
}

/** What the settings are chosen from: the folder and the ports an operator asked for. */
export interface SettingsOptions {
  dir: string;
  preferredPorts?: { temporal?: number; ui?: number; api?: number[]; worker?: number[] } | undefined;
}

export interface Stored {
  ports: ClusterPorts;
  masterKey: string;
  adminPassword: string;
}

async function pick(preferred: number | undefined): Promise<number> {
  return preferred && preferred > 0 ? preferred : freePort();
}

/**
 * A free port below 32768: Temporal stores membership ports in a SMALLINT column, and the OS hands
 * out ephemeral ports above that range.
 */
async function freeLowPort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port below 32768');
}

/** `ports` grown to `n`: each new one the preferred port when free, otherwise a free one. */
async function extendPorts(ports: number[], n: number, preferred: number[] = []): Promise<number[]> {
  const out = [...ports];
  for (let i = out.length; i < n; i++) {
    const want = preferred[i];
    out.push(want && want > 0 && !out.includes(want) && (await portIsFree(want)) ? want : await freePort());
  }
  return out;
}

/** The folder's settings: chosen once, then reused, because Temporal records its addresses. */
export async function loadOrCreateSettings(opts: SettingsOptions, apiN: number, workerN: number): Promise<Stored> {
  const file = path.join(opts.dir, 'cluster.json');
  try {
    const stored = JSON.parse(await readFile(file, 'utf8')) as Stored;
    if (stored.ports.api.length < apiN || stored.ports.worker.length < workerN) {
      // More replicas than ever before: ports for the new ones. A smaller start forgets none, so a
      // replica that comes back keeps its port (its health URL).
      const pref = opts.preferredPorts ?? {};
      stored.ports.api = await extendPorts(stored.ports.api, apiN, pref.api);
      stored.ports.worker = await extendPorts(stored.ports.worker, workerN, pref.worker);
      await writeFile(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
    }
    return stored;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const pref = opts.preferredPorts ?? {};
  const temporal: TemporalPorts = {
    frontend: pref.temporal ?? (await freeLowPort()),
    frontendHttp: await freeLowPort(),
    frontendMembership: await freeLowPort(),
    history: await freeLowPort(),
    historyMembership: await freeLowPort(),
    matching: await freeLowPort(),
    matchingMembership: await freeLowPort(),
    worker: await freeLowPort(),
    workerMembership: await freeLowPort(),
  };
  const stored: Stored = {
    ports: {
      postgres: await freePort(),
      temporal,
      ui: await pick(pref.ui),
      api: await Promise.all(Array.from({ length: apiN }, (_, i) => pick(pref.api?.[i]))),
      worker: await Promise.all(Array.from({ length: workerN }, (_, i) => pick(pref.worker?.[i]))),
    },
    masterKey: randomBytes(32).toString('base64'),
    adminPassword: randomBytes(18).toString('base64url'),
  };
  await writeFile(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
  await chmod(file, 0o600);
  return stored;
}
