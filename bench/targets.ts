// What `npm run bench:call` measures: the embedded defaults (one `gateway serve` that starts its own
// PostgreSQL and Temporal dev server), or with `--cluster` the production shape of
// server/cluster/cluster.ts — the code behind `npm run cluster`: Temporal v1.29.1 on PostgreSQL
// (4 history shards), API and worker gateway replicas. Either lives in a throwaway folder on
// loopback, and stop() ends every process it started and removes the folder.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GATEWAY_NODE_FLAGS, GATEWAY_PROCESS_ENV, startCluster, type Cluster } from '../server/cluster/cluster.ts';
import { HISTORY_SHARDS } from '../server/cluster/temporal-server.ts';
import { benchWorkflowBundle } from './support/workflow-bundle.ts';
import { createLogger } from '../server/logger.ts';
import { freePort } from '../server/embedded/processes.ts';
import { round, roundRobin, type MeasuredProcess } from './support/figures.ts';
import { isRunning } from './support/proc.ts';

export interface Shutdown {
  seconds: number;
  /** Every gateway process exited 0 on one SIGTERM, and nothing is left running. */
  clean: boolean;
  exit_codes: Record<string, number | null>;
  left_running: string[];
}

export interface BenchTarget {
  kind: 'embedded' | 'cluster';
  describe: string;
  /** One base URL per API replica. */
  apiUrls: string[];
  /** The next API base URL, round-robin (as a load balancer spreads calls). */
  nextApiUrl(): string;
  temporalAddress: string;
  /** The gateway's database (pg_stat_database). */
  databaseUrl: string;
  admin: { email: string; password: string };
  /** Every process that does the work, for CPU and memory accounting. */
  processes: MeasuredProcess[];
  stop(): Promise<Shutdown>;
}

const ADMIN = { email: 'bench@example.test', password: 'benchmark password' };

export function profileFlags(): string[] {
  const dir = process.env.BENCH_PROFILE_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/** Settings every gateway process gets, whatever the target. */
const benchEnv = {
  // One agent makes every call: keep the bucket (and its cost per call) but never empty it.
  GATEWAY_RATE_LIMIT_PER_MINUTE: '1000000',
};

const leftRunning = (processes: readonly MeasuredProcess[]) => processes.filter((p) => isRunning(p.pid)).map((p) => p.name);

/**
 * One `gateway serve` (API and worker roles) with its embedded PostgreSQL and Temporal dev server.
 * `root`: another checkout's gateway (an A/B of two versions in one run, bench/covered-ab.ts);
 * `env`: variables for this gateway alone.
 */
export async function startEmbeddedTarget(opts: { root?: string; env?: Record<string, string> } = {}): Promise<BenchTarget> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gateway-bench-'));
  await chmod(dataDir, 0o755);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const temporalPort = await freePort();
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    TEMPORAL_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: String(await freePort()),
    // Metrics on, as in production, on a port of its own (an A/B runs two gateways).
    METRICS_PORT: String(await freePort()),
    GATEWAY_ADMIN_EMAIL: ADMIN.email,
    GATEWAY_ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    ...GATEWAY_PROCESS_ENV,
    ...benchEnv,
    // This checkout's gateway runs the benchmarks' floor workflows beside its own; another
    // checkout (an A/B) runs its own bundle.
    ...(opts.root ? {} : { TEMPORAL_WORKFLOW_BUNDLE: (await benchWorkflowBundle()).path }),
    // What this one run varies (bench:ab --tracing: the OTLP endpoint of A).
    ...opts.env,
  };
  // Started like `npm run serve` starts it (the same V8 flags and environment).
  const cli = path.resolve(opts.root ?? path.join(import.meta.dirname, '..'), 'cli', 'gateway.ts');
  const gateway = spawn(process.execPath, [...GATEWAY_NODE_FLAGS, ...profileFlags(), cli, 'serve'], {
    env,
    // The gateway's JSON log goes to stderr with BENCH_LOG_LEVEL (e.g. info), else nowhere.
    stdio: ['ignore', process.env.BENCH_LOG_LEVEL ? 2 : 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((r) => gateway.once('exit', (code) => r(code)));
  let processes: MeasuredProcess[] = [{ name: 'gateway', group: 'gateway', pid: gateway.pid!, tree: false }];

  /** One SIGTERM must be enough: the gateway stops its worker, server and children and exits. */
  const stop = async (): Promise<Shutdown> => {
    const t = performance.now();
    let signals = 0;
    if (gateway.exitCode === null && gateway.signalCode === null) {
      gateway.kill('SIGTERM');
      signals = 1;
      const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 60_000).unref());
      if ((await Promise.race([exited, timeout])) === 'timeout') {
        gateway.kill('SIGKILL');
        signals = 2;
      }
    }
    const code = await exited;
    const left = leftRunning(processes);
    // Reported as not clean; still, nothing the run started may outlive it.
    for (const p of processes.filter((x) => x.name !== 'gateway' && left.includes(x.name))) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    await rm(dataDir, { recursive: true, force: true });
    return { seconds: round((performance.now() - t) / 1000, 1), clean: signals === 1 && code === 0 && left.length === 0, exit_codes: { gateway: code }, left_running: left };
  };

  try {
    process.stderr.write('starting the gateway with embedded PostgreSQL and Temporal…\n');
    for (let i = 0; ; i++) {
      if (gateway.exitCode !== null) throw new Error('the gateway exited during start-up');
      const ok = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
      if (ok) break;
      if (i > 2400) throw new Error('the gateway did not become ready');
      await new Promise((r) => setTimeout(r, 250));
    }
    const pidOf = async (name: string) => Number((await readFile(path.join(dataDir, 'run', `${name}.pid`), 'utf8')).trim());
    const pids = { temporal: await pidOf('temporal'), postgres: await pidOf('postgres') };
    processes = [...processes, { name: 'temporal', group: 'temporal', pid: pids.temporal, tree: false }, { name: 'postgres', group: 'postgres', pid: pids.postgres, tree: true }];
    const pgPort = /-p\0(\d+)/.exec(readFileSync(`/proc/${pids.postgres}/cmdline`, 'utf8'))?.[1];
    const password = (await readFile(path.join(dataDir, 'postgres.password'), 'utf8')).trim();
    return {
      kind: 'embedded',
      describe: 'embedded PostgreSQL + Temporal dev server, one gateway process',
      apiUrls: [base],
      nextApiUrl: () => base,
      temporalAddress: `127.0.0.1:${temporalPort}`,
      databaseUrl: `postgres://gateway:${encodeURIComponent(password)}@127.0.0.1:${pgPort}/gateway`,
      admin: ADMIN,
      processes,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The production shape, started by the module behind `npm run cluster` (no Temporal UI). */
export async function startClusterTarget(replicas: { apiReplicas: number; workerReplicas: number }): Promise<BenchTarget> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-bench-cluster-'));
  await chmod(dir, 0o755);
  process.stderr.write(`starting the cluster (Temporal server on PostgreSQL, ${replicas.apiReplicas} API + ${replicas.workerReplicas} worker replicas) in ${dir}…\n`);
  const started = performance.now();
  let cluster: Cluster;
  try {
    cluster = await startCluster({
      dir,
      logger: createLogger('warn'),
      ui: false,
      apiReplicas: replicas.apiReplicas,
      workerReplicas: replicas.workerReplicas,
      gatewayEnv: {
        ...benchEnv,
        // The upstream is on loopback, which NODE_ENV=production refuses by default.
        OUTBOUND_ALLOW_PRIVATE: 'true',
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
        TEMPORAL_WORKFLOW_BUNDLE: (await benchWorkflowBundle()).path,
        NODE_OPTIONS: [...GATEWAY_NODE_FLAGS, ...profileFlags()].join(' '),
      },
      progress: (line) => process.stderr.write(line + '\n'),
    });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  process.stderr.write(`cluster ready in ${round((performance.now() - started) / 1000, 1)} s\n`);
  const apiUrls = cluster.api.map((r) => r.url.replace('localhost', '127.0.0.1'));
  const replicaList = [...cluster.api, ...cluster.workers];
  const processes: MeasuredProcess[] = [
    ...replicaList.map((r) => ({ name: r.name, group: 'gateway' as const, pid: r.process.pid, tree: false })),
    { name: 'temporal', group: 'temporal', pid: cluster.pids.temporal, tree: false },
    { name: 'postgres', group: 'postgres', pid: cluster.pids.postgres, tree: true },
  ];
  return {
    kind: 'cluster',
    describe: `Temporal server v1.29.1 on PostgreSQL (${HISTORY_SHARDS} history shards), ${cluster.api.length} API + ${cluster.workers.length} worker gateway processes, calls round-robin over the API replicas`,
    apiUrls,
    nextApiUrl: roundRobin(apiUrls),
    temporalAddress: cluster.temporalAddress,
    databaseUrl: cluster.databaseUrl,
    admin: cluster.admin,
    processes,
    async stop() {
      const t = performance.now();
      // API replicas, then workers, the Temporal server, PostgreSQL: each SIGTERMed, SIGKILLed
      // only after its grace period (server/cluster/cluster.ts).
      await cluster.stop();
      const codes = await Promise.all(replicaList.map(async (r) => [r.name, await r.process.exited] as const));
      const left = leftRunning(processes);
      await rm(dir, { recursive: true, force: true });
      return {
        seconds: round((performance.now() - t) / 1000, 1),
        clean: codes.every(([, c]) => c === 0) && left.length === 0,
        exit_codes: Object.fromEntries(codes),
        left_running: left,
      };
    },
  };
}
