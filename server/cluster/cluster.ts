// The production shape on one machine, with real parts and no container engine: one PostgreSQL
// (the embedded binaries), a Temporal server on it (built from the Go module proxy), the Temporal
// UI, and the gateway as separate processes: N × `serve --role api`, M × `serve --role worker`,
// all on the same database and task queue. Everything lives under one folder; stopping stops
// every process, starting again over the same folder keeps the data (and the ports). A process
// that dies unasked is started again (kept-running.ts), as docker compose restarts a container.
import { chmod, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { GATEWAY_ENV_NAMES } from '../config.ts';
import type { Logger } from '../logger.ts';
import { acquireDataDirLock, ensureDataDir, reapRecordedChildren } from '../embedded/data-dir.ts';
import { ensureDatabase, startEmbeddedPostgres } from '../embedded/embedded-postgres.ts';
import { freePort } from '../embedded/processes.ts';
import { startReadOnlyUi } from '../embedded/read-only-ui.ts';
import { resolveTemporalCli } from '../embedded/temporal-cli.ts';
import { ensureTemporalServer, ensureTemporalUi } from './binaries.ts';
import { keepRunning, type KeptRunning, type StartStep } from './kept-running.ts';
import { loadOrCreateSettings, type ClusterPorts } from './settings.ts';

export type { ClusterPorts };

/**
 * V8 flags of every gateway process: a 16 MB young generation and a 512 MB old one (RSS stays
 * near 400 MB under load; docs/decisions.md → Performance). `npm start`/`serve` and the Docker
 * image carry the same (test/unit/server/production-shape.test.ts keeps them in step).
 */
export const GATEWAY_NODE_FLAGS = ['--max-semi-space-size=16', '--max-old-space-size=512'] as const;

/**
 * Environment of every gateway process, read by the C library at start (so it cannot be set from
 * inside): two malloc arenas instead of one per thread. The Temporal core's threads, libuv's pool
 * and the workflow thread otherwise each keep an arena: 3 × 30 s at concurrency 16 measured RSS
 * 390 MB without, 349 MB with, at the same throughput. Set by `npm start`/`serve`, the Docker image,
 * the cluster and the benchmark (kept in step by test/unit/server/production-shape.test.ts).
 */
export const GATEWAY_PROCESS_ENV = { MALLOC_ARENA_MAX: '2' } as const;
import { prepareNamespace, setupSchemas, startChild, startTemporalServer, startTemporalUi, type Supervised } from './temporal-server.ts';

const GATEWAY_CLI = path.resolve(import.meta.dirname, '..', '..', 'cli', 'gateway.ts');

/**
 * What the cluster sets on its replicas itself, whatever the operator's environment says: where
 * each replica listens and is reached, the shared PostgreSQL and Temporal, the shared key and
 * admin. Every other gateway variable (GATEWAY_ENV_NAMES) is passed through.
 */
export const CLUSTER_SETS: readonly string[] = [
  'PORT',
  'METRICS_PORT',
  'PUBLIC_URL',
  'DATABASE_URL',
  'DATA_DIR',
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_PORT',
  'TEMPORAL_UI_PORT',
  'TEMPORAL_CLI_PATH',
  'GATEWAY_MASTER_KEY',
  'GATEWAY_ADMIN_EMAIL',
  'GATEWAY_ADMIN_PASSWORD',
  'NODE_ENV',
];

export interface ClusterOptions {
  dir: string;
  logger: Logger;
  apiReplicas?: number;
  workerReplicas?: number;
  /** Ports to use when the folder is new; a folder keeps the ports it was created with. 0 = free port. */
  preferredPorts?: { api?: number[]; worker?: number[]; temporal?: number; ui?: number };
  /** Start the standalone Temporal UI (built with Go on first use). Default true. */
  ui?: boolean;
  /** Extra environment of every gateway process (tests: OUTBOUND_ALLOW_PRIVATE, LOG_LEVEL…). */
  gatewayEnv?: Record<string, string>;
  namespace?: string;
  progress?: (line: string) => void;
}

export interface GatewayReplica {
  name: string;
  role: 'api' | 'worker';
  url: string;
  port: number;
  logFile: string;
  /** Restarted when it dies unasked; `pid` follows the current process. */
  process: KeptRunning;
}

export interface Cluster {
  dir: string;
  ports: ClusterPorts;
  databaseUrl: string;
  /** The PostgreSQL server (admin URL, database `postgres`). */
  postgresAdminUrl: string;
  temporalAddress: string;
  namespace: string;
  uiUrl: string | undefined;
  publicUrl: string;
  masterKey: string;
  admin: { email: string; password: string };
  /** Pids of the infrastructure processes, current after a restart (CPU accounting in benchmarks). */
  readonly pids: { postgres: number; temporal: number };
  /** The Temporal server: kept running; stop() and start() make a deliberate outage. */
  temporalServer: KeptRunning;
  api: GatewayReplica[];
  workers: GatewayReplica[];
  /** Stops a replica and starts it again (same name, port and log); resolves once it is ready. */
  restart(replica: GatewayReplica): Promise<GatewayReplica>;
  stop(): Promise<void>;
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const { logger } = opts;
  const say = opts.progress ?? ((line: string) => logger.info(line));
  const namespace = opts.namespace ?? 'default';
  const apiN = opts.apiReplicas ?? 2;
  const workerN = opts.workerReplicas ?? 2;
  const withUi = opts.ui ?? true;
  // A process that died and is restarted is told on the cluster's output, not only in its log.
  const announce = (line: string) => say(`[cluster] ${line}`);
  const kept = (name: string, start: StartStep) => keepRunning({ name, logger, announce, start });
  const stops: Array<{ name: string; run: () => Promise<void> }> = [];
  const stopAll = async () => {
    for (const { name, run } of stops.splice(0).reverse()) {
      try {
        await run();
      } catch (err) {
        logger.error({ err, step: name }, 'error while stopping the cluster');
      }
    }
  };

  try {
    await mkdir(opts.dir, { recursive: true, mode: 0o755 });
    await chmod(opts.dir, 0o755); // the embedded PostgreSQL runs as its own OS user
    await ensureDataDir(opts.dir);
    const unlock = await acquireDataDirLock(opts.dir);
    stops.push({ name: 'folder lock', run: unlock });
    // Everything a killed cluster left running, also the replicas this start will not run.
    await reapRecordedChildren(opts.dir, logger);
    const settings = await loadOrCreateSettings(opts, apiN, workerN);
    // The folder keeps a port for every replica it ever had; this start uses the first N.
    const ports: ClusterPorts = { ...settings.ports, api: settings.ports.api.slice(0, apiN), worker: settings.ports.worker.slice(0, workerN) };

    // The Go builds are the long part on a fresh machine: run them while PostgreSQL starts.
    const binaries = ensureTemporalServer({ progress: say });
    const uiBinary = withUi
      ? ensureTemporalUi({ progress: say }).catch((err: unknown) => {
          say(`[cluster] no Temporal UI: ${(err as Error).message}`);
          return null;
        })
      : Promise.resolve(null);
    const cli = resolveTemporalCli({ progress: say });
    binaries.catch(() => undefined);
    cli.catch(() => undefined);

    const pg = await startEmbeddedPostgres({ dataDir: opts.dir, logger, database: 'gateway', port: ports.postgres, portSource: `the PostgreSQL port ("postgres" in ${path.join(opts.dir, 'cluster.json')})`, announce });
    stops.push({ name: 'PostgreSQL', run: pg.stop });
    const password = (await readFile(path.join(opts.dir, 'postgres.password'), 'utf8')).trim();
    const db = { host: '127.0.0.1', port: ports.postgres, user: 'gateway', password };
    const postgresAdminUrl = pg.url.replace(/\/[^/]*$/, '/postgres');
    await ensureDatabase(postgresAdminUrl, 'gateway');

    const { server, sqlTool } = await binaries;
    await setupSchemas(sqlTool, db, logger);
    const temporal = await kept('temporal-server', () => startTemporalServer({ dir: opts.dir, server, ports: ports.temporal, db, logger }));
    stops.push({ name: 'Temporal server', run: temporal.stop });
    const temporalAddress = `127.0.0.1:${ports.temporal.frontend}`;
    await prepareNamespace({ cli: await cli, address: temporalAddress, namespace, logger });

    let uiUrl: string | undefined;
    const uiPath = await uiBinary;
    if (uiPath) {
      // The UI server on an internal port, read-only itself and behind the read-only proxy on the
      // UI port (server/embedded/read-only-ui.ts), as the embedded dev server's UI is.
      const innerUiPort = await freePort();
      const ui = await kept('temporal-ui', () => startTemporalUi({ dir: opts.dir, ui: uiPath, port: innerUiPort, publicPort: ports.ui, temporalAddress, namespace, logger }));
      stops.push({ name: 'Temporal UI', run: ui.stop });
      const readOnly = await startReadOnlyUi({ port: ports.ui, upstreamPort: innerUiPort });
      stops.push({ name: 'Temporal UI proxy', run: readOnly.close });
      uiUrl = `http://localhost:${ports.ui}`;
    }

    // One address for callers, as behind a load balancer: OAuth issuer, approval URLs.
    const publicUrl = `http://localhost:${ports.api[0]}`;
    const admin = { email: 'admin@gateway.local', password: settings.adminPassword };
    // The operator's own gateway settings (OUTBOUND_ALLOWLIST, LOG_LEVEL, HOST, …) reach every
    // replica; the cluster then sets what makes it a cluster (CLUSTER_SETS), which wins.
    const passedThrough = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => v !== undefined && GATEWAY_ENV_NAMES.includes(k) && !CLUSTER_SETS.includes(k)));
    const gatewayEnv = (port: number): NodeJS.ProcessEnv => ({
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...passedThrough,
      NODE_ENV: 'production',
      PORT: String(port),
      // Replicas side by side on one machine cannot share the default metrics port: off here.
      METRICS_PORT: '0',
      PUBLIC_URL: publicUrl,
      DATABASE_URL: pg.url,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: namespace,
      GATEWAY_MASTER_KEY: settings.masterKey,
      GATEWAY_ADMIN_EMAIL: admin.email,
      GATEWAY_ADMIN_PASSWORD: admin.password,
      NODE_OPTIONS: GATEWAY_NODE_FLAGS.join(' '),
      ...GATEWAY_PROCESS_ENV,
      ...opts.gatewayEnv,
    });

    /** A replica kept running: each start (the first and every restart) resolves once it is ready. */
    const replica = async (name: string, role: 'api' | 'worker', port: number): Promise<GatewayReplica> => {
      const logFile = path.join(opts.dir, 'logs', `${name}.log`);
      const url = `http://localhost:${port}`;
      const start: StartStep = async (signal) => {
        const proc = await startChild({
          dir: opts.dir,
          name,
          command: process.execPath,
          args: [GATEWAY_CLI, 'serve', '--role', role],
          env: gatewayEnv(port),
          logFile,
          logger,
          graceMs: 30_000,
        });
        try {
          await waitReady({ name, url, logFile, proc }, signal);
        } catch (err) {
          await proc.stop();
          throw err;
        }
        return proc;
      };
      return { name, role, port, url, logFile, process: await kept(name, start) };
    };
    const replicas: GatewayReplica[] = [];
    stops.push({
      name: 'gateway replicas',
      run: async () => {
        // API first (no new calls), then workers drain what is in flight.
        await Promise.all(replicas.filter((r) => r.role === 'api').map((r) => r.process.stop()));
        await Promise.all(replicas.filter((r) => r.role === 'worker').map((r) => r.process.stop()));
      },
    });
    // The first API replica alone first: it applies the migrations and creates the first admin;
    // the others then start in parallel (migrations run under an advisory lock either way).
    replicas.push(await replica('api-1', 'api', ports.api[0]!));
    const rest = await Promise.allSettled([
      ...ports.api.slice(1).map((p, i) => replica(`api-${i + 2}`, 'api', p)),
      ...ports.worker.map((p, i) => replica(`worker-${i + 1}`, 'worker', p)),
    ]);
    // The ones that started are stopped with the rest if another failed.
    for (const r of rest) if (r.status === 'fulfilled') replicas.push(r.value);
    const failed = rest.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;

    const cluster: Cluster = {
      dir: opts.dir,
      ports,
      databaseUrl: pg.url,
      postgresAdminUrl,
      temporalAddress,
      namespace,
      uiUrl,
      publicUrl,
      masterKey: settings.masterKey,
      admin,
      pids: {
        get postgres() {
          return pg.pid;
        },
        get temporal() {
          return temporal.pid;
        },
      },
      temporalServer: temporal,
      get api() {
        return replicas.filter((r) => r.role === 'api');
      },
      get workers() {
        return replicas.filter((r) => r.role === 'worker');
      },
      async restart(r) {
        await r.process.stop();
        await r.process.start();
        return r;
      },
      stop: stopAll,
    };
    return cluster;
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * Waits for `/readyz` to answer 200; a process that exits first fails with the end of its log.
 * `signal` (the cluster stopping) ends the wait at once.
 */
async function waitReady(replica: { name: string; url: string; logFile: string; proc: Supervised }, signal: AbortSignal, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void replica.proc.exited.then((c) => (exitCode = c));
  while (Date.now() < deadline) {
    signal.throwIfAborted();
    if (exitCode !== undefined) {
      const tail = (await readFile(replica.logFile, 'utf8').catch(() => '')).trim().split('\n').slice(-5).join('\n');
      throw new Error(`gateway ${replica.name} exited (code ${exitCode}) before it was ready:\n${tail}`);
    }
    try {
      const res = await fetch(`${replica.url}/readyz`);
      if (res.status === 200) return;
    } catch {
      /* not listening yet */
    }
    await sleep(500, undefined, { signal }).catch(() => undefined);
  }
  throw new Error(`gateway ${replica.name} not ready after ${timeoutMs / 1000} s (see ${replica.logFile})`);
}
