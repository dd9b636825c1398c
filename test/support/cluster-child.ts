// `npm run cluster` as a process a test can SIGKILL: startCluster (the module behind it) on the
// folder and replica counts given as arguments, its ports and pids printed as one JSON line once
// ready, stopped by SIGTERM. Usage: node cluster-child.ts <dir> <api> <workers>
import { startCluster } from '../../server/cluster/cluster.ts';
import { createLogger } from '../../server/logger.ts';

const [dir, api, workers] = process.argv.slice(2);
const cluster = await startCluster({
  dir: dir!,
  logger: createLogger('warn'),
  apiReplicas: Number(api),
  workerReplicas: Number(workers),
  ui: false,
  gatewayEnv: { LOG_LEVEL: 'warn' },
  progress: () => undefined,
});
const replicas = [...cluster.api, ...cluster.workers].map((r) => ({ name: r.name, port: r.port, pid: r.process.pid }));
process.stdout.write(`READY ${JSON.stringify({ replicas })}\n`);
process.once('SIGTERM', () => {
  void cluster.stop().then(() => process.exit(0));
});
