// What `npm run bench:call -- --cluster` measures instead of the embedded defaults: the production
// shape of server/cluster/cluster.ts (Temporal v1.29.1 on PostgreSQL with 4 history shards, two API
// and two worker gateway processes) in a throwaway folder. Calls are spread round-robin over the
// API replicas, as a load balancer would. BENCH_CLUSTER_API / BENCH_CLUSTER_WORKERS change the
// replica counts (default 2 and 2).
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startCluster } from '../server/cluster/cluster.ts';
import { createLogger } from '../server/logger.ts';

export interface ClusterTarget {
  /** One base URL per API replica. */
  apiUrls: string[];
  /** The next API base URL, round-robin. */
  nextApiUrl(): string;
  temporalAddress: string;
  /** The gateway's database (e.g. for pg_stat_database). */
  databaseUrl: string;
  admin: { email: string; password: string };
  /** Processes by role, for CPU accounting. */
  pids: { gatewayApi: number[]; gatewayWorker: number[]; temporal: number[]; postgres: number[] };
  describe: string;
  stop(): Promise<void>;
}

export async function startClusterTarget(gatewayEnv: Record<string, string>, opts: { apiReplicas?: number; workerReplicas?: number } = {}): Promise<ClusterTarget> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-bench-cluster-'));
  await chmod(dir, 0o755);
  process.stderr.write(`starting the cluster (Temporal server on PostgreSQL, API and worker replicas) in ${dir}…\n`);
  const cluster = await startCluster({
    dir,
    logger: createLogger('warn'),
    ui: false,
    apiReplicas: opts.apiReplicas ?? Number(process.env.BENCH_CLUSTER_API ?? 2),
    workerReplicas: opts.workerReplicas ?? Number(process.env.BENCH_CLUSTER_WORKERS ?? 2),
    gatewayEnv: { LOG_LEVEL: 'warn', ...gatewayEnv },
    progress: (line) => process.stderr.write(line + '\n'),
  });
  const apiUrls = cluster.api.map((r) => r.url.replace('localhost', '127.0.0.1'));
  let turn = 0;
  return {
    apiUrls,
    nextApiUrl: () => apiUrls[turn++ % apiUrls.length]!,
    temporalAddress: cluster.temporalAddress,
    databaseUrl: cluster.databaseUrl,
    admin: cluster.admin,
    pids: {
      gatewayApi: cluster.api.map((r) => r.process.pid),
      gatewayWorker: cluster.workers.map((r) => r.process.pid),
      temporal: [cluster.pids.temporal],
      postgres: [cluster.pids.postgres],
    },
    describe: `cluster: Temporal server on PostgreSQL (4 history shards), ${cluster.api.length} API + ${cluster.workers.length} worker gateway processes`,
    async stop() {
      await cluster.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
