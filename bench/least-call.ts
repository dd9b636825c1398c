// npm run bench:least — what the least possible gateway costs for one covered call of issue 28's
// shape, as ratios to the floor bench:call uses, in one run. The "gateway" is
// bench/support/least-call-gateway.ts in its own process (the gateway's Node flags): plain HTTP in,
// three SQL statements (authenticate + insert, send mark, final state + audit row), an eager start
// whose one local activity sends the upstream request and answers in-process, HTTP out. The floor
// is bench:call's: Update-with-Start of a no-op workflow, on that process's worker, from this
// process's own client. Latency (blocks of 25 of each, alternated), throughput at concurrency 16,
// CPU ms per call of the "gateway" process, Temporal and PostgreSQL: if even this misses a goal,
// no implementation of the design meets it on this machine and SDK. A second such process runs
// the gateway's own `callWorkflow` (with its search attributes and memo) around the same three
// statements: what our workflow costs over the least one, in the same run; a third the least
// workflow with what operators read of a call (search attributes and memo at start, the status
// upserted, a result): what those cost. The first two also run the allowed path: a call parked as
// pending by a local activity, allowed by an update, sent by one regular activity scheduled in the
// task that accepts it (the gateway's send-on-allow), timed from the allow to the upstream.
//   BENCH_SEQUENTIAL=300 BENCH_CONCURRENT=1000 BENCH_RESUMES=60 npm run bench:least [-- --json]
//   BENCH_PROFILE_DIR=/tmp/prof npm run bench:least   # also writes V8 CPU profiles of that process
//   npm run bench:least -- --operator-parts   # two more: the operator shape's memo alone, its search attributes alone
//   npm run bench:least -- --stack            # four more: the operator shape on Express, on slonik, on both (DESIGN.md §1's stack), and our callWorkflow on both
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, WithStartWorkflowOperation } from '@temporalio/client';
import { startEmbeddedPostgres } from '../server/embedded/embedded-postgres.ts';
import { resolveTemporalCli } from '../server/embedded/temporal-cli.ts';
import { startTemporalDevServer } from '../server/embedded/temporal-dev-server.ts';
import { createLogger } from '../server/logger.ts';
import { benchmarkFloorUpdate } from './workflows/definitions.ts';
import { FLOOR_GOALS, latency, mergeRuns, round, type LoadRun } from './support/figures.ts';
import { alternatedInBlocks, runConcurrent, timed } from './support/load.ts';
import { benchSizes } from './support/options.ts';
import { createLeastSchema, startLeastGateway, type LeastGateway } from './support/least-call-process.ts';
import { processCpuMs, treeCpuMs } from './support/proc.ts';
import { connectTemporal } from '../server/temporal/grpc-interceptors.ts';

const { values: flags } = parseArgs({ options: { json: { type: 'boolean', default: false }, 'operator-parts': { type: 'boolean', default: false }, stack: { type: 'boolean', default: false } }, strict: true });
const { SEQUENTIAL, CONCURRENT, CONCURRENCY, RESUMES } = benchSizes('bench:least', { SEQUENTIAL: 300, CONCURRENT: 1_000, CONCURRENCY: 16, RESUMES: 60 });
const TASK_QUEUE = 'bench-least';
const BLOCK = 25;

const logger = createLogger('warn');
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gateway-least-'));
await chmod(dataDir, 0o755);
/** When a request for a path reached the upstream (the allowed calls' unique paths). */
const arrivals = new Map<string, (at: number) => void>();
const upstream = http.createServer((req, res) => {
  arrivals.get(req.url ?? '')?.(performance.now());
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"item":{"id":"a1","name":"bench"}}'));
});
await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
const temporal = await startTemporalDevServer({ cliPath: await resolveTemporalCli(), namespace: 'default', logger });
const postgres = await startEmbeddedPostgres({ dataDir, logger });
const children: LeastGateway[] = [];
try {
  await createLeastSchema(postgres.url);
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  const arrival = (p: string) =>
    new Promise<number>((resolve) =>
      arrivals.set(p, (at) => {
        arrivals.delete(p);
        resolve(at);
      }),
    );
  /** One least-call process on its own task queue (`call`: with the gateway's own workflow). */
  const startLeast = async (name: string, workflow: 'least' | 'operator' | 'call', operatorParts?: 'memo' | 'search-attributes', stack?: ('express' | 'slonik')[]) => {
    const least = await startLeastGateway({ name, workflow, operatorParts, stack, taskQueue: `${TASK_QUEUE}-${name}`, upstreamUrl, databaseUrl: postgres.url, temporalAddress: temporal.address, arrival });
    children.push(least);
    return least;
  };
  const plain = await startLeast('plain', 'least');
  const withOperator = await startLeast('operator-shape', 'operator');
  const withOurs = await startLeast('our-workflow', 'call');
  // What each half of the operator shape costs alone: the memo, the search attributes.
  // The extra processes asked for, each with its report key and label: what each half of the
  // operator shape costs alone (the memo, the search attributes); the operator shape on the
  // gateway's stack (Express, slonik, both).
  const extras: { key: string; label: string; least: LeastGateway }[] = [];
  if (flags['operator-parts']) {
    extras.push({ key: 'least_call_operator_memo_only', label: 'least call, operator memo alone', least: await startLeast('memo-only', 'operator', 'memo') });
    extras.push({ key: 'least_call_operator_search_attributes_only', label: 'least call, search attributes alone', least: await startLeast('search-attributes-only', 'operator', 'search-attributes') });
  }
  if (flags.stack) {
    extras.push({ key: 'least_call_operator_on_express', label: 'operator shape on Express', least: await startLeast('on-express', 'operator', undefined, ['express']) });
    extras.push({ key: 'least_call_operator_on_slonik', label: 'operator shape on slonik', least: await startLeast('on-slonik', 'operator', undefined, ['slonik']) });
    extras.push({ key: 'least_call_operator_on_express_slonik', label: 'operator shape on Express + slonik', least: await startLeast('on-express-slonik', 'operator', undefined, ['express', 'slonik']) });
    // All the design and the explicit call path ask for, around the least call's three statements.
    extras.push({ key: 'least_call_our_workflow_on_express_slonik', label: 'our callWorkflow on Express + slonik', least: await startLeast('ours-on-express-slonik', 'call', undefined, ['express', 'slonik']) });
  }
  const parts = extras.map((e) => e.least);
  const pids = { temporal: temporal.pid!, postgres: postgres.pid };

  const floorClient = new Client({ connection: await connectTemporal({ address: temporal.address }) });
  // The floor runs on the plain process's worker: its CPU is that process's.
  const floor = () =>
    floorClient.workflow.executeUpdateWithStart(benchmarkFloorUpdate, {
      startWorkflowOperation: new WithStartWorkflowOperation('benchmarkFloorWorkflow', { workflowId: `floor-${randomUUID()}`, taskQueue: plain.taskQueue, workflowIdConflictPolicy: 'FAIL' }),
    });

  /** One stretch of load at CONCURRENCY: its calls, time and the CPU ms spent by the process serving it, Temporal and PostgreSQL. */
  const load = async (total: number, gatewayPid: number, fn: () => Promise<unknown>): Promise<LoadRun> => {
    const cpuNow = () => ({ gateway: processCpuMs(gatewayPid), temporal: processCpuMs(pids.temporal), postgres: treeCpuMs(pids.postgres) });
    const before = cpuNow();
    const run = await runConcurrent({ total, concurrency: CONCURRENCY }, fn);
    const after = cpuNow();
    return { latencies: run.latencies, seconds: run.seconds, cpuMs: { gateway: after.gateway - before.gateway, temporal: after.temporal - before.temporal, postgres: after.postgres - before.postgres } };
  };
  /** The CPU above, one "process" a group, as mergeRuns sums it. */
  const groups = (['gateway', 'temporal', 'postgres'] as const).map((g) => ({ name: g, group: g }));

  for (let i = 0; i < 100; i++) await Promise.all([floor(), plain.call(), withOperator.call(), withOurs.call(), ...parts.map((p) => p.call())]);
  const [f, l, o, w, ...extrasSequential] = (await alternatedInBlocks(SEQUENTIAL, BLOCK, [floor, plain.call, withOperator.call, withOurs.call, ...parts.map((p) => p.call)].map((fn) => () => timed(fn)))) as number[][];
  // The allowed path (the least process and the operator-shaped one; our callWorkflow's approval
  // needs the gateway's own activities), alternated in blocks like the rest.
  const [allowedPlain, allowedOperator] = (await alternatedInBlocks(RESUMES, BLOCK, [plain.allowedToUpstream, withOperator.allowedToUpstream])) as [number[], number[]];
  // Each load in two halves, the second round in reverse order: Temporal's dev server grows slower
  // as its history grows over the run, and a load always taken last would pay for it.
  const loads: { pid: number; fn: () => Promise<unknown> }[] = [
    { pid: plain.pid, fn: floor },
    { pid: plain.pid, fn: plain.call },
    { pid: withOperator.pid, fn: withOperator.call },
    { pid: withOurs.pid, fn: withOurs.call },
    ...parts.map((p) => ({ pid: p.pid, fn: p.call })),
  ];
  const stretches: LoadRun[][] = loads.map(() => []);
  const half = Math.ceil(CONCURRENT / 2);
  for (const i of loads.keys()) stretches[i]!.push(await load(half, loads[i]!.pid, loads[i]!.fn));
  for (const i of [...loads.keys()].reverse()) stretches[i]!.push(await load(CONCURRENT - half, loads[i]!.pid, loads[i]!.fn));
  const merged = stretches.map((runs) => {
    const m = mergeRuns(groups, runs);
    return { per_second: m.perSecond, cpu_ms_per_call: m.perCall };
  });
  type Load = (typeof merged)[number];
  const [floorLoad, leastLoad, operatorLoad, oursLoad, ...extrasLoad] = merged as [Load, Load, Load, Load, ...Load[]];
  await floorClient.connection.close();
  const fl = latency(f!);
  const ratio = (a: number, b: number) => round(a / b);
  const shape = (sequential: number[], loaded: typeof floorLoad, allowed?: number[]) => {
    const lat = latency(sequential);
    const allowedLat = allowed ? latency(allowed) : null;
    return {
      sequential: lat,
      ...loaded,
      allowed_to_upstream: allowedLat,
      vs_floor: {
        allowed_to_upstream_p50: allowedLat ? ratio(allowedLat.p50, fl.p50) : null,
        p50: ratio(lat.p50, fl.p50),
        p95: ratio(lat.p95, fl.p95),
        throughput: ratio(loaded.per_second, floorLoad.per_second),
        gateway_cpu: ratio(loaded.cpu_ms_per_call.gateway, floorLoad.cpu_ms_per_call.gateway),
        total_cpu: ratio(loaded.cpu_ms_per_call.total, floorLoad.cpu_ms_per_call.total),
      },
    };
  };
  const report = {
    floor: { sequential: fl, ...floorLoad },
    least_call: shape(l!, leastLoad, allowedPlain),
    least_call_operator_shape: shape(o!, operatorLoad, allowedOperator),
    least_call_our_workflow: shape(w!, oursLoad),
    ...Object.fromEntries(extras.map((e, i) => [e.key, shape(extrasSequential[i]!, extrasLoad[i]!)])),
    goals_vs_floor: FLOOR_GOALS,
    cores: os.cpus().length,
    loadavg: os.loadavg().map((x) => round(x)),
  };
  if (flags.json) process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  else {
    const allowedLine = (label: string, x: { allowed_to_upstream: ReturnType<typeof latency> | null }) =>
      x.allowed_to_upstream ? `${label.padEnd(40)}allowed → upstream p50 ${x.allowed_to_upstream.p50.toFixed(2)} ms, p95 ${x.allowed_to_upstream.p95.toFixed(2)} ms (${x.allowed_to_upstream.n} approvals)` : '';
    const line = (label: string, x: typeof report.floor) =>
      `${label.padEnd(40)}p50 ${x.sequential.p50.toFixed(2).padStart(7)} ms   p95 ${x.sequential.p95.toFixed(2).padStart(7)} ms   ${x.per_second.toFixed(1).padStart(6)}/s @${CONCURRENCY}   CPU ms: gateway ${x.cpu_ms_per_call.gateway.toFixed(2)}, temporal ${x.cpu_ms_per_call.temporal.toFixed(2)}, postgres ${x.cpu_ms_per_call.postgres.toFixed(2)}, total ${x.cpu_ms_per_call.total.toFixed(2)}`;
    const verdict = (met: boolean) => (met ? 'met' : 'MISSED');
    const ratios = (label: string, r: typeof report.least_call.vs_floor) =>
      `${label}: p50 ${r.p50}× (goal ≤ ${FLOOR_GOALS.covered_p50.max}×: ${verdict(r.p50 <= FLOOR_GOALS.covered_p50.max)}), p95 ${r.p95}× (≤ ${FLOOR_GOALS.covered_p95.max}×: ${verdict(r.p95 <= FLOOR_GOALS.covered_p95.max)}), ` +
      `throughput ${r.throughput}× (≥ ${FLOOR_GOALS.throughput.min}×: ${verdict(r.throughput >= FLOOR_GOALS.throughput.min)}), gateway CPU ${r.gateway_cpu}× (≤ ${FLOOR_GOALS.gateway_cpu.max}×: ${verdict(r.gateway_cpu <= FLOOR_GOALS.gateway_cpu.max)}), all CPU ${r.total_cpu}×` +
      (r.allowed_to_upstream_p50 === null ? '' : `, allowed → upstream p50 ${r.allowed_to_upstream_p50}× (≤ ${FLOOR_GOALS.allowed_to_upstream_p50.max}×: ${verdict(r.allowed_to_upstream_p50 <= FLOOR_GOALS.allowed_to_upstream_p50.max)})`);
    process.stdout.write(
      [
        `the least possible gateway for a covered call of issue 28's shape, against the floor (${report.cores} cores)`,
        line('floor: no-op Update-with-Start', report.floor),
        line('least call (3 statements, eager)', report.least_call),
        line('least call, operator shape', report.least_call_operator_shape),
        line('least call with our callWorkflow', report.least_call_our_workflow),
        ...extras.map((e) => line(e.label, (report as unknown as Record<string, typeof report.floor>)[e.key]!)),
        allowedLine('least call', report.least_call),
        allowedLine('least call, operator shape', report.least_call_operator_shape),
        ratios('least call, as ratios to the floor', report.least_call.vs_floor),
        ratios('operator shape', report.least_call_operator_shape.vs_floor),
        ratios('with our callWorkflow', report.least_call_our_workflow.vs_floor),
        ...extras.map((e) => {
          const x = (report as unknown as Record<string, typeof report.least_call>)[e.key]!;
          const least = report.least_call.cpu_ms_per_call.gateway;
          return `${e.label}: gateway CPU ${x.cpu_ms_per_call.gateway.toFixed(2)} ms = ${round(x.cpu_ms_per_call.gateway / least)}× the least call's, throughput ${round(x.per_second / report.least_call.per_second)}×, p50 ${round(x.sequential.p50 / report.least_call.sequential.p50)}×`;
        }),
        `the operator shape to the least call: gateway CPU ${round(report.least_call_operator_shape.cpu_ms_per_call.gateway / report.least_call.cpu_ms_per_call.gateway)}×, throughput ${round(report.least_call_operator_shape.per_second / report.least_call.per_second)}×, p50 ${round(report.least_call_operator_shape.sequential.p50 / report.least_call.sequential.p50)}×`,
        `load average ${report.loadavg.join(' ')}`,
      ].filter(Boolean).join('\n') + '\n',
    );
  }
} finally {
  for (const child of children) await child.stop();
  await temporal.stop();
  await postgres.stop();
  upstream.close();
  await rm(dataDir, { recursive: true, force: true });
}
