// npm run bench:eager — does eager workflow start pay for the covered path? (issue 14, item 5)
// Eager start hands the first workflow task straight back to a worker in the starting process, but
// the server refuses it inside Update-with-Start, and the gateway's first answer comes from an
// update (DESIGN.md §4). So the only eager shape is: start eagerly, then send the update. This
// measures, on the dev server the gateway starts (same dynamic config) with the gateway's
// workflow bundle, a no-op workflow answered by an update:
//   1. Update-with-Start (what the gateway does);
//   2. eager start, then the update (two requests);
// sequential latency, throughput at concurrency 16, and how many starts were really eager.
//   BENCH_SEQUENTIAL=300 BENCH_CONCURRENT=1000 npm run bench:eager [-- --json]
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Client, WithStartWorkflowOperation } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createLogger } from '../server/logger.ts';
import { resolveTemporalCli } from '../server/embedded/temporal-cli.ts';
import { startTemporalDevServer } from '../server/embedded/temporal-dev-server.ts';
import { workflowBundle } from '../server/temporal/worker.ts';
import { benchmarkFloorUpdate } from '../workflows/definitions.ts';

const { values: flags } = parseArgs({ options: { json: { type: 'boolean', default: false } }, strict: true });
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 300);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const TASK_QUEUE = 'bench-eager';

const round = (n: number) => Math.round(n * 100) / 100;
function latency(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
  return { n: s.length, p50: round(at(50)), p95: round(at(95)) };
}
async function timed(fn: () => Promise<unknown>) {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}
async function concurrent(total: number, fn: () => Promise<unknown>) {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < total) {
      next++;
      await fn();
    }
  }));
  return round(total / ((performance.now() - started) / 1000));
}

const logger = createLogger('warn');
const server = await startTemporalDevServer({ cliPath: await resolveTemporalCli(), namespace: 'default', logger });
try {
  const connection = await NativeConnection.connect({ address: server.address });
  const worker = await Worker.create({ connection, taskQueue: TASK_QUEUE, workflowBundle: await workflowBundle(), activities: {} });
  // A client on the worker's own connection: the only kind the server may hand an eager task to.
  const client = new Client({ connection });
  let eager = 0;
  const updateWithStart = () =>
    client.workflow.executeUpdateWithStart(benchmarkFloorUpdate, {
      startWorkflowOperation: new WithStartWorkflowOperation('benchmarkFloorWorkflow', { workflowId: `uws-${randomUUID()}`, taskQueue: TASK_QUEUE, workflowIdConflictPolicy: 'FAIL' }),
    });
  const eagerThenUpdate = async () => {
    const handle = await client.workflow.start('benchmarkFloorWorkflow', { workflowId: `eager-${randomUUID()}`, taskQueue: TASK_QUEUE, requestEagerStart: true });
    if (handle.eagerlyStarted) eager++;
    await handle.executeUpdate(benchmarkFloorUpdate);
  };
  const report = await worker.runUntil(async () => {
    for (let i = 0; i < 30; i++) await Promise.all([updateWithStart(), eagerThenUpdate()]);
    eager = 0;
    // Interleaved, so a busy machine weighs on both shapes alike.
    const uws: number[] = [];
    const eagerly: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) {
      uws.push(await timed(updateWithStart));
      eagerly.push(await timed(eagerThenUpdate));
    }
    const uwsRate = await concurrent(CONCURRENT, updateWithStart);
    const eagerRate = await concurrent(CONCURRENT, eagerThenUpdate);
    return {
      update_with_start: { sequential: latency(uws), per_second_at_16: uwsRate },
      eager_start_then_update: { sequential: latency(eagerly), per_second_at_16: eagerRate },
      eager_starts_granted: `${eager} of ${SEQUENTIAL + CONCURRENT}`,
      loadavg: os.loadavg().map(round),
    };
  });
  await connection.close();
  if (flags.json) process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  else {
    type Shape = { sequential: { p50: number; p95: number }; per_second_at_16: number };
    const r = report as { update_with_start: Shape; eager_start_then_update: Shape; eager_starts_granted: string };
    const line = (label: string, x: Shape) =>
      `${label.padEnd(34)}p50 ${x.sequential.p50.toFixed(2).padStart(7)} ms   p95 ${x.sequential.p95.toFixed(2).padStart(7)} ms   ${x.per_second_at_16.toFixed(1).padStart(6)} workflows/s @${CONCURRENCY}`;
    process.stdout.write(
      [
        'no-op workflow answered by an update, same dev server settings as the gateway',
        line('Update-with-Start', r.update_with_start),
        line('eager start, then update', r.eager_start_then_update),
        `eager starts granted by the server: ${r.eager_starts_granted}; load average ${os.loadavg().map(round).join(' ')}`,
      ].join('\n') + '\n',
    );
  }
} finally {
  await server.stop();
}
