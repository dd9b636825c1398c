// npm run bench:least — what the least possible gateway costs for one covered call of issue 28's
// shape, as ratios to the floor bench:call uses, in one run. The "gateway" is
// bench/support/least-call-gateway.ts in its own process (the gateway's Node flags): plain HTTP in,
// three SQL statements (authenticate + insert, send mark, final state + audit row), an eager start
// whose one local activity sends the upstream request and answers in-process, HTTP out. The floor
// is bench:call's: Update-with-Start of a no-op workflow, on that process's worker, from this
// process's own client. Latency (blocks of 25 of each, alternated), throughput at concurrency 16,
// CPU ms per call of the "gateway" process, Temporal and PostgreSQL: if even this misses a goal,
// no implementation of the design meets it on this machine and SDK.
//   BENCH_SEQUENTIAL=300 BENCH_CONCURRENT=1000 npm run bench:least [-- --json]
//   BENCH_PROFILE_DIR=/tmp/prof npm run bench:least   # also writes V8 CPU profiles of that process
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { GATEWAY_NODE_FLAGS } from '../server/cluster/cluster.ts';
import { startEmbeddedPostgres } from '../server/embedded/embedded-postgres.ts';
import { resolveTemporalCli } from '../server/embedded/temporal-cli.ts';
import { startTemporalDevServer } from '../server/embedded/temporal-dev-server.ts';
import { createLogger } from '../server/logger.ts';
import { benchmarkFloorUpdate } from '../workflows/definitions.ts';
import { FLOOR_GOALS, latency, round } from './support/figures.ts';
import { profileFlags } from './targets.ts';
import { processCpuMs, treeCpuMs } from './support/proc.ts';

const { values: flags } = parseArgs({ options: { json: { type: 'boolean', default: false } }, strict: true });
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 300);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const TASK_QUEUE = 'bench-least';
const BLOCK = 25;
const KEY = 'gw_least_call_bench_key';

const timed = async (fn: () => Promise<unknown>) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

const logger = createLogger('warn');
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gateway-least-'));
await chmod(dataDir, 0o755);
const upstream = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"item":{"id":"a1","name":"bench"}}'));
});
await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
const temporal = await startTemporalDevServer({ cliPath: await resolveTemporalCli(), namespace: 'default', logger });
const postgres = await startEmbeddedPostgres({ dataDir, logger });
let child: ReturnType<typeof spawn> | undefined;
try {
  const db = new pg.Client({ connectionString: postgres.url });
  await db.connect();
  await db.query(`
    CREATE TABLE least_keys (hash text PRIMARY KEY, revoked boolean NOT NULL DEFAULT false);
    CREATE TABLE least_calls (id uuid PRIMARY KEY, key_hash text NOT NULL REFERENCES least_keys (hash), path text NOT NULL,
      marked boolean NOT NULL DEFAULT false, status text NOT NULL DEFAULT 'checking', result jsonb, created_at timestamptz NOT NULL DEFAULT now());
    CREATE TABLE least_audit (id bigserial PRIMARY KEY, call_id uuid NOT NULL, event text NOT NULL, at timestamptz NOT NULL DEFAULT now());`);
  await db.query('INSERT INTO least_keys (hash) VALUES ($1)', [createHash('sha256').update(KEY).digest('hex')]);
  await db.end();

  child = spawn(process.execPath, [...GATEWAY_NODE_FLAGS, ...profileFlags(), path.join(import.meta.dirname, 'support', 'least-call-gateway.ts')], {
    env: {
      ...process.env,
      MALLOC_ARENA_MAX: '2',
      LEAST_TASK_QUEUE: TASK_QUEUE,
      LEAST_UPSTREAM_URL: `http://127.0.0.1:${(upstream.address() as { port: number }).port}`,
      LEAST_DATABASE_URL: postgres.url,
      LEAST_TEMPORAL_ADDRESS: temporal.address,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((r) => child!.once('exit', r));
  const port = await Promise.race([
    new Promise<number>((resolve) => {
      createInterface({ input: child!.stdout! }).on('line', (line) => {
        const m = /^ready (\d+)$/.exec(line);
        if (m) resolve(Number(m[1]));
      });
    }),
    exited.then((code) => Promise.reject(new Error(`the least-call gateway exited with ${code} before it was ready`))),
  ]);
  const pids = { gateway: child.pid!, temporal: temporal.pid!, postgres: postgres.pid };

  const floorClient = new Client({ connection: await Connection.connect({ address: temporal.address }) });
  const floor = () =>
    floorClient.workflow.executeUpdateWithStart(benchmarkFloorUpdate, {
      startWorkflowOperation: new WithStartWorkflowOperation('benchmarkFloorWorkflow', { workflowId: `floor-${randomUUID()}`, taskQueue: TASK_QUEUE, workflowIdConflictPolicy: 'FAIL' }),
    });
  const body = JSON.stringify({ service: 'widgets', action: 'get_item', params: { id: 'a1' } });
  const least = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/v1/actions/call`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body });
    const answer = (await res.json()) as { status?: string };
    if (res.status !== 200 || answer.status !== 'called') throw new Error(`least call answered ${res.status} ${JSON.stringify(answer)}`);
  };

  /** Per second at CONCURRENCY, and CPU ms per call of each process. */
  const load = async (total: number, fn: () => Promise<unknown>) => {
    const cpu0 = { gateway: processCpuMs(pids.gateway), temporal: processCpuMs(pids.temporal), postgres: treeCpuMs(pids.postgres) };
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < total) {
          next++;
          await fn();
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const per = (now: number, before: number) => round((now - before) / total);
    const cpu = { gateway: per(processCpuMs(pids.gateway), cpu0.gateway), temporal: per(processCpuMs(pids.temporal), cpu0.temporal), postgres: per(treeCpuMs(pids.postgres), cpu0.postgres) };
    return { per_second: round(total / seconds, 1), cpu_ms_per_call: { ...cpu, total: round(cpu.gateway + cpu.temporal + cpu.postgres) } };
  };

  for (let i = 0; i < 100; i++) await Promise.all([floor(), least()]);
  const f: number[] = [];
  const l: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i += BLOCK) {
    for (let j = 0; j < BLOCK; j++) f.push(await timed(floor));
    for (let j = 0; j < BLOCK; j++) l.push(await timed(least));
  }
  const floorLoad = await load(CONCURRENT, floor);
  const leastLoad = await load(CONCURRENT, least);
  await floorClient.connection.close();
  const fl = latency(f);
  const ll = latency(l);
  const ratio = (a: number, b: number) => round(a / b);
  const report = {
    floor: { sequential: fl, ...floorLoad },
    least_call: { sequential: ll, ...leastLoad },
    least_call_vs_floor: {
      p50: ratio(ll.p50, fl.p50),
      p95: ratio(ll.p95, fl.p95),
      throughput: ratio(leastLoad.per_second, floorLoad.per_second),
      gateway_cpu: ratio(leastLoad.cpu_ms_per_call.gateway, floorLoad.cpu_ms_per_call.gateway),
      total_cpu: ratio(leastLoad.cpu_ms_per_call.total, floorLoad.cpu_ms_per_call.total),
    },
    goals_vs_floor: FLOOR_GOALS,
    cores: os.cpus().length,
    loadavg: os.loadavg().map((x) => round(x)),
  };
  if (flags.json) process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  else {
    const line = (label: string, x: typeof report.floor) =>
      `${label.padEnd(34)}p50 ${x.sequential.p50.toFixed(2).padStart(7)} ms   p95 ${x.sequential.p95.toFixed(2).padStart(7)} ms   ${x.per_second.toFixed(1).padStart(6)}/s @${CONCURRENCY}   CPU ms: gateway ${x.cpu_ms_per_call.gateway.toFixed(2)}, temporal ${x.cpu_ms_per_call.temporal.toFixed(2)}, postgres ${x.cpu_ms_per_call.postgres.toFixed(2)}, total ${x.cpu_ms_per_call.total.toFixed(2)}`;
    const r = report.least_call_vs_floor;
    const verdict = (met: boolean) => (met ? 'met' : 'MISSED');
    process.stdout.write(
      [
        `the least possible gateway for a covered call of issue 28's shape, against the floor (${report.cores} cores)`,
        line('floor: no-op Update-with-Start', report.floor),
        line('least call (3 statements, eager)', report.least_call),
        `least call as ratios to the floor:`,
        `  p50 ${r.p50}× (goal ≤ ${FLOOR_GOALS.covered_p50.max}×: ${verdict(r.p50 <= FLOOR_GOALS.covered_p50.max)}), p95 ${r.p95}× (goal ≤ ${FLOOR_GOALS.covered_p95.max}×: ${verdict(r.p95 <= FLOOR_GOALS.covered_p95.max)})`,
        `  throughput ${r.throughput}× (goal ≥ ${FLOOR_GOALS.throughput.min}×: ${verdict(r.throughput >= FLOOR_GOALS.throughput.min)}), gateway CPU ${r.gateway_cpu}× (goal ≤ ${FLOOR_GOALS.gateway_cpu.max}×: ${verdict(r.gateway_cpu <= FLOOR_GOALS.gateway_cpu.max)}), all processes' CPU ${r.total_cpu}×`,
        `load average ${report.loadavg.join(' ')}`,
      ].join('\n') + '\n',
    );
  }
  child.kill('SIGTERM');
  await exited;
} finally {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await temporal.stop();
  await postgres.stop();
  upstream.close();
  await rm(dataDir, { recursive: true, force: true });
}
