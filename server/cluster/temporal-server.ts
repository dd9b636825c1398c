// A real Temporal server on PostgreSQL, as production runs it: schemas created by its SQL tool,
// persistence and visibility in PostgreSQL, several history shards, the gateway's dynamic config
// (deploy/temporal-dynamicconfig.yaml, the file docker-compose.yml mounts), the namespace and the
// gateway's search attributes registered with the Temporal CLI, and the standalone Temporal UI.
import { execFile, spawn } from 'node:child_process';
import { mkdir, open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import type { Logger } from '../logger.ts';
import { forgetChild, reapOrphan, recordChild } from '../embedded/data-dir.ts';
import { releaseChild, superviseChild, terminate, waitForPort } from '../embedded/processes.ts';
import { SEARCH_ATTRIBUTES } from '../embedded/temporal-dev-server.ts';
import { READ_ONLY_UI_CONFIG } from '../embedded/read-only-ui.ts';
import { compareSearchAttributes, registerCommand } from '../temporal/search-attributes.ts';
import { connectTemporal } from '../temporal/grpc-interceptors.ts';

const run = promisify(execFile);

/** The dynamic config shared by the cluster and docker-compose.yml. */
export const DYNAMIC_CONFIG_FILE = path.resolve(import.meta.dirname, '..', '..', 'deploy', 'temporal-dynamicconfig.yaml');

/** More than one shard, as production runs: fixed at cluster creation (it cannot change later). */
export const HISTORY_SHARDS = 4;

export interface TemporalPorts {
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
}

export interface SqlTarget {
  host: string;
  port: number;
  user: string;
  password: string;
}

/** The server's static config (what `--env cluster` loads): PostgreSQL 12+ plugin for both stores. */
export function serverConfig(opts: { ports: TemporalPorts; db: SqlTarget; dynamicConfigFile: string; logLevel?: string }): Record<string, unknown> {
  const { ports, db } = opts;
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${db.host}:${db.port}`,
      connectProtocol: 'tcp',
      user: db.user,
      password: db.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const rpc = (grpcPort: number, membershipPort: number, extra: Record<string, unknown> = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnLocalHost: true, ...extra },
  });
  return {
    log: { stdout: true, level: opts.logLevel ?? 'warn' },
    persistence: {
      numHistoryShards: HISTORY_SHARDS,
      defaultStore: 'default',
      visibilityStore: 'visibility',
      datastores: { default: store('temporal', 20), visibility: store('temporal_visibility', 10) },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
    services: {
      frontend: rpc(ports.frontend, ports.frontendMembership, { httpPort: ports.frontendHttp }),
      history: rpc(ports.history, ports.historyMembership),
      matching: rpc(ports.matching, ports.matchingMembership),
      worker: rpc(ports.worker, ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: { active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `127.0.0.1:${ports.frontend}` } },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: opts.dynamicConfigFile, pollInterval: '10s' },
  };
}

/**
 * The standalone UI server's config (`temporalio/ui` takes the same settings from its environment):
 * write actions off, on an internal port behind the cluster's read-only proxy at `publicPort`.
 */
export function uiConfig(opts: { port: number; publicPort: number; temporalAddress: string; namespace: string }): Record<string, unknown> {
  return {
    temporalGrpcAddress: opts.temporalAddress,
    host: '127.0.0.1',
    port: opts.port,
    enableUi: true,
    defaultNamespace: opts.namespace,
    cors: { cookieInsecure: true, allowOrigins: [`http://localhost:${opts.publicPort}`, `http://127.0.0.1:${opts.publicPort}`] },
    refreshInterval: '1m',
    ...READ_ONLY_UI_CONFIG,
  };
}

/** Arguments of the SQL tool for one database (endpoint, credentials, plugin). */
function sqlArgs(db: SqlTarget, database: string): string[] {
  return ['--ep', db.host, '-p', String(db.port), '-u', db.user, '--pw', db.password, '--plugin', 'postgres12', '--db', database];
}

/**
 * Creates `temporal` and `temporal_visibility` and brings both schemas to the version the tool
 * embeds. Idempotent: an existing database is kept, `setup-schema -v 0.0` skips a versioned schema,
 * `update-schema` applies only newer versions (which is also how an upgrade runs).
 */
export async function setupSchemas(sqlTool: string, db: SqlTarget, logger: Logger): Promise<void> {
  for (const [database, schema] of [
    ['temporal', 'postgresql/v12/temporal'],
    ['temporal_visibility', 'postgresql/v12/visibility'],
  ] as const) {
    const args = sqlArgs(db, database);
    try {
      await run(sqlTool, [...args, 'create-database']);
    } catch (err) {
      if (!/already exists/.test(String((err as { stderr?: string }).stderr) + String((err as Error).message))) throw err;
    }
    await run(sqlTool, [...args, 'setup-schema', '-v', '0.0']);
    await run(sqlTool, [...args, 'update-schema', '--schema-name', schema]);
    logger.info({ database, schema }, 'Temporal schema up to date');
  }
}

export interface Supervised {
  name: string;
  pid: number;
  stop(): Promise<void>;
  /** Resolves with the exit code when the process ends for any reason. */
  exited: Promise<number | null>;
}

/** Spawns a long-running child with its output appended to `logFile`, its pid recorded for reaping. */
export async function startChild(opts: {
  dir: string;
  name: string;
  command: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  logFile: string;
  stopSignal?: NodeJS.Signals;
  graceMs?: number;
  logger: Logger;
}): Promise<Supervised> {
  const signal = opts.stopSignal ?? 'SIGTERM';
  // What its command line holds: its arguments name its script or its config folder.
  const marker = opts.args.length ? opts.args.join(' ') : path.basename(opts.command);
  await reapOrphan(opts.dir, opts.name, path.basename(opts.command), opts.logger);
  await mkdir(path.dirname(opts.logFile), { recursive: true });
  const log = await open(opts.logFile, 'a');
  // Own process group: a terminal Ctrl-C reaches the cluster script, which stops children in order.
  const child = spawn(opts.command, opts.args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', log.fd, log.fd], detached: true });
  await log.close();
  if (!child.pid) throw new Error(`could not start ${opts.command}`);
  const pid = child.pid;
  superviseChild(pid, signal);
  await recordChild(opts.dir, opts.name, pid, marker);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    name: opts.name,
    pid,
    exited,
    async stop() {
      await terminate(pid, signal, opts.graceMs ?? 20_000);
      releaseChild(pid);
      await forgetChild(opts.dir, opts.name);
    },
  };
}

export async function startTemporalServer(opts: {
  dir: string;
  server: string;
  ports: TemporalPorts;
  db: SqlTarget;
  logger: Logger;
}): Promise<Supervised> {
  const root = path.join(opts.dir, 'temporal');
  await mkdir(path.join(root, 'config'), { recursive: true });
  const config = serverConfig({ ports: opts.ports, db: opts.db, dynamicConfigFile: DYNAMIC_CONFIG_FILE });
  await writeFile(path.join(root, 'config', 'cluster.yaml'), stringify(config), { mode: 0o600 });
  const proc = await startChild({
    dir: opts.dir,
    name: 'temporal-server',
    command: opts.server,
    args: ['--root', root, '--config', 'config', '--env', 'cluster', '--allow-no-auth', 'start'],
    logFile: path.join(opts.dir, 'logs', 'temporal-server.log'),
    logger: opts.logger,
  });
  let dead = false;
  void proc.exited.then(() => (dead = true));
  try {
    await waitForPort('127.0.0.1', opts.ports.frontend, 180_000, () => dead);
  } catch (err) {
    await proc.stop();
    throw new Error(`the Temporal server did not start (see ${path.join(opts.dir, 'logs', 'temporal-server.log')}): ${(err as Error).message}`, { cause: err });
  }
  return proc;
}

export async function startTemporalUi(opts: { dir: string; ui: string; port: number; publicPort: number; temporalAddress: string; namespace: string; logger: Logger }): Promise<Supervised> {
  const root = path.join(opts.dir, 'temporal-ui');
  await mkdir(path.join(root, 'config'), { recursive: true });
  await writeFile(path.join(root, 'config', 'cluster.yaml'), stringify(uiConfig(opts)));
  const proc = await startChild({
    dir: opts.dir,
    name: 'temporal-ui',
    command: opts.ui,
    args: ['--root', root, '--config', 'config', '--env', 'cluster', 'start'],
    logFile: path.join(opts.dir, 'logs', 'temporal-ui.log'),
    logger: opts.logger,
  });
  let dead = false;
  void proc.exited.then(() => (dead = true));
  try {
    await waitForPort('127.0.0.1', opts.port, 60_000, () => dead);
  } catch (err) {
    await proc.stop();
    throw new Error(`the Temporal UI did not start (see ${path.join(opts.dir, 'logs', 'temporal-ui.log')}): ${(err as Error).message}`, { cause: err });
  }
  return proc;
}

async function retry<T>(what: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${what}: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`, { cause: err });
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}

/**
 * What an operator (or compose's one-shot `temporal-setup`) does once per cluster, with the
 * Temporal CLI: create the namespace, register the gateway's search attributes. Idempotent.
 */
export async function prepareNamespace(opts: { cli: string; address: string; namespace: string; logger: Logger }): Promise<void> {
  const { cli, address, namespace } = opts;
  const base = ['--address', address];
  await retry('the Temporal server did not become healthy', 180_000, () => run(cli, ['operator', 'cluster', 'health', ...base]));
  const exists = await run(cli, ['operator', 'namespace', 'describe', '--namespace', namespace, ...base]).then(
    () => true,
    () => false,
  );
  if (!exists) {
    await retry(`could not create namespace ${namespace}`, 120_000, () =>
      run(cli, ['operator', 'namespace', 'create', '--namespace', namespace, '--retention', '72h', ...base]).catch((err: { stderr?: string }) => {
        if (/already (exists|registered)/i.test(err.stderr ?? '')) return;
        throw err;
      }),
    );
    opts.logger.info({ namespace }, 'Temporal namespace created');
  }
  // The namespace cache refreshes every few seconds: retry until the new namespace is found.
  const connection = await connectTemporal({ address });
  try {
    const missing = async () => compareSearchAttributes((await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {}).missing;
    const lacking = await retry(`could not read the search attributes of ${namespace}`, 60_000, missing);
    if (lacking.length) {
      const argv = registerCommand(namespace, lacking).split(' ').slice(1);
      await retry(`could not register the search attributes in ${namespace}`, 60_000, () => run(cli, [...argv, ...base]));
      opts.logger.info({ namespace, searchAttributes: Object.keys(SEARCH_ATTRIBUTES) }, 'gateway search attributes registered');
    }
  } finally {
    await connection.close();
  }
}
