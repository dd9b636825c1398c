#!/usr/bin/env node
// `npm run cluster`: the production shape on this machine (server/cluster/cluster.ts), in the
// foreground. Ctrl-C or SIGTERM stops every process; running it again over the same folder keeps
// the data.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ensureTemporalServer, ensureTemporalUi } from '../server/cluster/binaries.ts';
import { startCluster } from '../server/cluster/cluster.ts';
import { createLogger } from '../server/logger.ts';

const HELP = `npm run cluster -- [--dir D] [--api N] [--workers N] [--no-ui] [--build-only]

Starts PostgreSQL, a Temporal server on it (built once with Go), the Temporal UI, N gateway API
replicas (default 2, ports 8080, 8081, …) and N worker replicas (default 2), all on one database
and task queue. Data and logs live under --dir (default ./.data/cluster). --build-only builds (or
finds) the cached Temporal binaries and exits.`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string', default: path.join('.data', 'cluster') },
      api: { type: 'string', default: '2' },
      workers: { type: 'string', default: '2' },
      'no-ui': { type: 'boolean', default: false },
      'build-only': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HELP + '\n');
    return 0;
  }
  const apiReplicas = Number(values.api);
  const workerReplicas = Number(values.workers);
  if (!(Number.isInteger(apiReplicas) && apiReplicas >= 1 && Number.isInteger(workerReplicas) && workerReplicas >= 1)) {
    process.stderr.write('cluster: --api and --workers must be whole numbers ≥ 1\n');
    return 2;
  }
  const logger = createLogger(process.env.LOG_LEVEL ?? 'info');
  const dir = path.resolve(values.dir);
  const say = (line: string) => process.stdout.write(line + '\n');
  if (values['build-only']) {
    const { server, sqlTool } = await ensureTemporalServer({ progress: say });
    say(`[cluster] Temporal server: ${server}\n[cluster] SQL tool: ${sqlTool}`);
    if (!values['no-ui']) say(`[cluster] Temporal UI: ${await ensureTemporalUi({ progress: say })}`);
    return 0;
  }
  say(`[cluster] starting in ${dir} (logs in ${path.join(dir, 'logs')})`);
  const cluster = await startCluster({
    dir,
    logger,
    apiReplicas,
    workerReplicas,
    ui: !values['no-ui'],
    preferredPorts: {
      api: Array.from({ length: apiReplicas }, (_, i) => 8080 + i),
      worker: Array.from({ length: workerReplicas }, (_, i) => 8090 + i),
      temporal: 7233,
      ui: 8233,
    },
    progress: say,
  });
  say('');
  say('[cluster] ready:');
  for (const r of cluster.api) say(`  gateway API    ${r.url}  (${r.name}, log ${r.logFile})`);
  for (const r of cluster.workers) say(`  gateway worker ${r.url}/readyz  (${r.name}, log ${r.logFile})`);
  say(`  Temporal       ${cluster.temporalAddress}  (namespace ${cluster.namespace}, PostgreSQL persistence)`);
  say(`  Temporal UI    ${cluster.uiUrl ?? '(not running)'}`);
  say(`  PostgreSQL     127.0.0.1:${cluster.ports.postgres}  (password in ${path.join(dir, 'postgres.password')})`);
  say(`  admin sign-in  ${cluster.admin.email}, password in ${path.join(dir, 'cluster.json')} ("adminPassword")`);
  say('Ctrl-C stops everything; run again to resume with the same data.');

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      say(`[cluster] ${signal}: stopping…`);
      cluster.stop().then(
        () => {
          say('[cluster] stopped');
          resolve(0);
        },
        (err: unknown) => {
          process.stderr.write(`cluster: stop failed: ${(err as Error).message}\n`);
          resolve(1);
        },
      );
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
  });
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    process.stderr.write(`cluster: ${(err as Error)?.message ?? String(err)}\n`);
    process.exitCode = 1;
  },
);
