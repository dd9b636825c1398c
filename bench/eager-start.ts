// npm run bench:eager — the least a covered call of issue 28's shape can cost, against the floor
// bench:call measures, in one run on the dev server the gateway starts (same dynamic config) with
// the gateway's workflow bundle, on a worker in this process:
//   floor:  Update-with-Start of a no-op workflow answered by its update (bench:call's floor);
//   design: the covered-call shape with nothing of the call in it — started eagerly on the
//           worker's own connection, one no-op local activity that hands the answer to the caller
//           in-process, then the workflow completes (no HTTP, no SQL, no vault, no upstream).
// Sequential latency (the shapes interleaved in blocks of 25 calls), throughput at concurrency 16, and CPU
// ms per workflow of this process (client + worker) and of the Temporal server, each as a ratio
// to the floor: what no implementation of that shape can go below on this machine and SDK.
//   BENCH_SEQUENTIAL=300 BENCH_CONCURRENT=1000 npm run bench:eager [-- --json]
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Client, WithStartWorkflowOperation } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createLogger } from '../server/logger.ts';
import { resolveTemporalCli } from '../server/embedded/temporal-cli.ts';
import { startTemporalDevServer } from '../server/embedded/temporal-dev-server.ts';
import { benchWorkflowBundle } from './support/workflow-bundle.ts';
import { benchmarkFloorUpdate, type BenchmarkActivities } from './workflows/definitions.ts';
import { FLOOR_GOALS, latency, round } from './support/figures.ts';
import { alternatedInBlocks, runConcurrent, timed } from './support/load.ts';
import { benchSizes } from './support/options.ts';
import { processCpuMs } from './support/proc.ts';
import { connectTemporal } from '../server/temporal/grpc-interceptors.ts';

const { values: flags } = parseArgs({ options: { json: { type: 'boolean', default: false } }, strict: true });
const { SEQUENTIAL, CONCURRENT, CONCURRENCY } = benchSizes('bench:eager', { SEQUENTIAL: 300, CONCURRENT: 1_000, CONCURRENCY: 16 });
const TASK_QUEUE = 'bench-eager';
const BLOCK = 25;

/** Workflows per second at CONCURRENCY, and CPU ms per workflow of this process and of Temporal. */
async function load(total: number, temporalPid: number, fn: () => Promise<unknown>) {
  const cpu0 = process.cpuUsage();
  const temporal0 = processCpuMs(temporalPid);
  const run = await runConcurrent({ total, concurrency: CONCURRENCY }, fn);
  const cpu = process.cpuUsage(cpu0);
  return {
    per_second: run.perSecond,
    cpu_ms_per_workflow: { worker_process: round((cpu.user + cpu.system) / 1000 / total), temporal: round((processCpuMs(temporalPid) - temporal0) / total) },
  };
}

const logger = createLogger('warn');
const server = await startTemporalDevServer({ cliPath: await resolveTemporalCli(), namespace: 'default', logger });
try {
  const connection = await NativeConnection.connect({ address: server.address });
  // The in-process answers: the local activity resolves the caller waiting on its id.
  const waiting = new Map<string, () => void>();
  const activities: BenchmarkActivities = {
    async benchmarkAnswer(id) {
      waiting.get(id)?.();
    },
  };
  const worker = await Worker.create({ connection, taskQueue: TASK_QUEUE, workflowBundle: { code: (await benchWorkflowBundle()).code }, activities });
  // The floor's client, as bench:call's: its own connection. The design's: the worker's own
  // connection, the only kind the server may hand an eager task to.
  const floorClient = new Client({ connection: await connectTemporal({ address: server.address }) });
  const eagerClient = new Client({ connection });
  let eager = 0;
  const floor = () =>
    floorClient.workflow.executeUpdateWithStart(benchmarkFloorUpdate, {
      startWorkflowOperation: new WithStartWorkflowOperation('benchmarkFloorWorkflow', { workflowId: `floor-${randomUUID()}`, taskQueue: TASK_QUEUE, workflowIdConflictPolicy: 'FAIL' }),
    });
  const design = async () => {
    const id = randomUUID();
    const answered = new Promise<void>((resolve) => waiting.set(id, resolve));
    try {
      const handle = await eagerClient.workflow.start('benchmarkLocalAnswerWorkflow', { workflowId: `design-${id}`, taskQueue: TASK_QUEUE, args: [id], requestEagerStart: true });
      if (handle.eagerlyStarted) eager++;
      await answered;
    } finally {
      waiting.delete(id);
    }
  };
  const temporalPid = server.pid;
  if (temporalPid === null) throw new Error('the Temporal dev server has no pid');
  const report = await worker.runUntil(async () => {
    for (let i = 0; i < 50; i++) await Promise.all([floor(), design()]);
    eager = 0;
    // In blocks, not call by call: a design call answers before its workflow completes, and its
    // next call meets that completion still running, as a covered call meets its predecessor's
    // (call by call, it would meet a floor call's, which has completed before it answered).
    const [f, d] = (await alternatedInBlocks(SEQUENTIAL, BLOCK, [() => timed(floor), () => timed(design)])) as [number[], number[]];
    const floorLoad = await load(CONCURRENT, temporalPid, floor);
    const designLoad = await load(CONCURRENT, temporalPid, design);
    const fl = latency(f);
    const dl = latency(d);
    const ratio = (a: number, b: number) => round(a / b);
    return {
      floor: { sequential: fl, ...floorLoad },
      design: { sequential: dl, ...designLoad },
      design_vs_floor: {
        p50: ratio(dl.p50, fl.p50),
        p95: ratio(dl.p95, fl.p95),
        throughput: ratio(designLoad.per_second, floorLoad.per_second),
        worker_process_cpu: ratio(designLoad.cpu_ms_per_workflow.worker_process, floorLoad.cpu_ms_per_workflow.worker_process),
        temporal_cpu: ratio(designLoad.cpu_ms_per_workflow.temporal, floorLoad.cpu_ms_per_workflow.temporal),
      },
      goals_vs_floor: FLOOR_GOALS,
      eager_starts_granted: `${eager} of ${SEQUENTIAL + CONCURRENT}`,
      cores: os.cpus().length,
      loadavg: os.loadavg().map((x) => round(x)),
    };
  });
  await floorClient.connection.close();
  await connection.close();
  if (flags.json) process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  else {
    const line = (label: string, x: typeof report.floor) =>
      `${label.padEnd(40)}p50 ${x.sequential.p50.toFixed(2).padStart(7)} ms   p95 ${x.sequential.p95.toFixed(2).padStart(7)} ms   ${x.per_second.toFixed(1).padStart(6)}/s @${CONCURRENCY}   CPU ms: worker process ${x.cpu_ms_per_workflow.worker_process.toFixed(2)}, temporal ${x.cpu_ms_per_workflow.temporal.toFixed(2)}`;
    const r = report.design_vs_floor;
    process.stdout.write(
      [
        `issue 28's covered-call shape with nothing of the call in it, against the floor (${report.cores} cores)`,
        line('floor: no-op Update-with-Start', report.floor),
        line('design: eager start + local activity', report.design),
        `design as ratios to the floor: p50 ${r.p50}× (goal ≤ ${FLOOR_GOALS.covered_p50.max}×), p95 ${r.p95}× (goal ≤ ${FLOOR_GOALS.covered_p95.max}×), throughput ${r.throughput}× (goal ≥ ${FLOOR_GOALS.throughput.min}×),`,
        `  worker-process CPU ${r.worker_process_cpu}× (the gateway CPU goal: ≤ ${FLOOR_GOALS.gateway_cpu.max}×), Temporal CPU ${r.temporal_cpu}×`,
        `eager starts granted by the server: ${report.eager_starts_granted}; load average ${report.loadavg.join(' ')}`,
      ].join('\n') + '\n',
    );
  }
} finally {
  await server.stop();
}
