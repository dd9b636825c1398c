// npm run bench:call — covered calls through the REST API to a loopback upstream, side by side
// with the direct upstream call and Temporal's own floor (a no-op workflow via Update-with-Start on
// the same server and worker). Also: throughput at concurrency 16, the resume path (approval
// allowed → upstream request received), CPU ms per call split by process (read from /proc) and the
// gateway's memory. Beside them, in the same run, the least gateway of the covered call's shape
// (bench/support/least-call-gateway.ts: plain node:http, three statements, eager start, the answer
// in-process) on the same Temporal server, PostgreSQL server and upstream: its sequential calls
// alternated in blocks with the gateway's and the floor's, its load in turns with the gateway's;
// the covered call is printed as a ratio to it as well as to the floor (issue 46). Goals: issue 14. The target (bench/targets.ts) is the embedded defaults
// (PostgreSQL + Temporal dev server started by the gateway) or, with --cluster, the production
// shape of `npm run cluster` (issue 19).
//   npm run bench:call                      # text
//   npm run bench:call -- --json            # the same figures as one JSON object on stdout
//   npm run bench:call -- --soak            # plus 3 rounds of 30 s at concurrency 16 (memory)
//   npm run bench:call -- --cluster         # Temporal on PostgreSQL, 2 API + 2 worker replicas
//   npm run bench:call -- --cluster --api 1 --workers 1
//   BENCH_SEQUENTIAL=300 BENCH_CONCURRENT=2000 BENCH_CONCURRENCY=16 BENCH_RESUMES=50 npm run bench:call
//   BENCH_PROFILE_DIR=/tmp/prof npm run bench:call   # also writes V8 CPU profiles of the gateway
//   BENCH_LOG_LEVEL=info npm run bench:call          # the gateway's log on stderr (embedded)
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import { Client, WithStartWorkflowOperation } from '@temporalio/client';
import pg from 'pg';
import { callWorkflowId, TASK_QUEUE } from '../workflows/definitions.ts';
import { benchmarkFloorUpdate } from './workflows/definitions.ts';
import { setUpCoveredAgent } from './support/covered-agent.ts';
import {
  byGroup,
  FLOOR_GOALS,
  latency,
  LEAST_GOALS,
  mergeRuns,
  ratiosToFloor,
  ratiosToLeast,
  round,
  type ByGroup,
  type FloorRatios,
  type LeastRatios,
  type Latency,
  type LoadRun,
  type MeasuredProcess,
  type Sample,
} from './support/figures.ts';
import { createLeastDatabase, startLeastGateway, type LeastGateway } from './support/least-call-process.ts';
import { BenchUsageError, CALL_BENCH_USAGE, parseCallBenchOptions, type CallBenchOptions } from './support/options.ts';
import { alternatedInBlocks, runConcurrent, timed } from './support/load.ts';
import { memoryMb, processCpuMs, treeCpuMs } from './support/proc.ts';
import { startClusterTarget, startEmbeddedTarget, type BenchTarget, type Shutdown } from './targets.ts';
import { connectTemporal } from '../server/temporal/grpc-interceptors.ts';

const WARMUP = 100;
/** Sequential calls of the floor, the gateway and the least gateway are taken in turns, this many at a time. */
const BLOCK = 25;
/** A call that takes longer than this fails the run instead of hanging it. */
const STEP_TIMEOUT_MS = 60_000;

const GOALS = { overheadP50: 15, overheadP95: 30, callsPerSecond: 100, floorRatio: 0.75, resumeP50: 15, gatewayCpuMs: 6, rssMb: 400 };

const log = (line: string) => process.stderr.write(line + '\n');

/** `promise`, or an error naming `what` after STEP_TIMEOUT_MS. */
async function within<T>(what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer after ${STEP_TIMEOUT_MS / 1000} s`)), STEP_TIMEOUT_MS);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** CPU ms of every measured process (PostgreSQL: its whole tree). */
function cpuSample(processes: readonly MeasuredProcess[]): Sample {
  return Object.fromEntries(processes.map((p) => [p.name, p.tree ? treeCpuMs(p.pid) : processCpuMs(p.pid)]));
}

/** `total` calls of `fn` at `concurrency`, with the CPU ms each of `processes` spent meanwhile. */
async function loadRun(processes: readonly MeasuredProcess[], total: number, concurrency: number, fn: () => Promise<unknown>): Promise<LoadRun> {
  const before = cpuSample(processes);
  const run = await runConcurrent({ total, concurrency }, fn);
  const after = cpuSample(processes);
  return { latencies: run.latencies, seconds: run.seconds, cpuMs: Object.fromEntries(processes.map((p) => [p.name, after[p.name]! - before[p.name]!])) };
}

/** RSS and its peak (MB), summed over the gateway processes, and by process on the cluster. */
function gatewayMemory(target: BenchTarget) {
  const gateways = target.processes.filter((p) => p.group === 'gateway');
  const m = Object.fromEntries(gateways.map((p) => [p.name, memoryMb(p.pid)]));
  const rss = byGroup(gateways, Object.fromEntries(gateways.map((p) => [p.name, m[p.name]!.rss])), 0);
  const peak = byGroup(gateways, Object.fromEntries(gateways.map((p) => [p.name, m[p.name]!.peak])), 0);
  return { rss: rss.gateway, peak: peak.gateway, ...(rss.by_process ? { by_process: rss.by_process } : {}) };
}

async function main(opts: CallBenchOptions) {
  // The upstream: a tiny JSON API on loopback that notes when each request arrived.
  const arrivals = new Map<string, number>();
  const arrivalWaiters = new Map<string, () => void>();
  const upstream = http.createServer((req, res) => {
    const at = performance.now();
    req.resume();
    req.on('end', () => {
      const key = `${req.method} ${req.url}`;
      if (req.method === 'DELETE') {
        arrivals.set(key, at);
        arrivalWaiters.get(key)?.();
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true,"item":{"id":"a1","name":"bench"}}');
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  const loadavgAtStart = os.loadavg().map((x) => round(x));

  let target: BenchTarget | undefined;
  let least: LeastGateway | undefined;
  let stats: pg.Client | undefined;
  let temporal: Client | undefined;
  let shutdown: Shutdown | undefined;
  let stopping: Promise<void> | undefined;
  /** Ends everything this run started, once: clients, the target's processes and folder, the upstream. */
  const stop = () =>
    (stopping ??= (async () => {
      await stats?.end().catch(() => undefined);
      await temporal?.connection.close().catch(() => undefined);
      await least?.stop().catch(() => undefined);
      if (target) shutdown = await target.stop();
      upstream.closeAllConnections();
      upstream.close();
    })());
  // Ctrl-C or a SIGTERM still stops what the run started (cluster processes run in their own group).
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping…`);
    void stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    target = opts.cluster ? await startClusterTarget(opts.cluster) : await startEmbeddedTarget();
    const t = target;

    // SQL statements: PostgreSQL's transaction counter per database (every statement outside an
    // explicit transaction is one). Backends publish it within a second of idling.
    stats = new pg.Client({ connectionString: t.databaseUrl });
    await stats.connect();
    const transactions = async (): Promise<Record<string, number>> => {
      await new Promise((r) => setTimeout(r, 1_500));
      const r = await stats!.query<{ datname: string; n: string; here: boolean }>(
        `SELECT datname, xact_commit + xact_rollback AS n, datname = current_database() AS here FROM pg_stat_database WHERE datname IN ('gateway', 'temporal', 'temporal_visibility')`,
      );
      // Not counting this query.
      return Object.fromEntries(r.rows.map((row) => [row.datname, Number(row.n) - (row.here ? 1 : 0)]));
    };

    const json = async (method: string, p: string, token: string | null, body?: unknown) => {
      const res = await fetch(t.nextApiUrl() + p, {
        method,
        signal: AbortSignal.timeout(STEP_TIMEOUT_MS),
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const parsed = (await res.json()) as any;
      if (res.status >= 300 && !(res.status === 202 && parsed.status === 'pending_approval')) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(parsed)}`);
      return parsed;
    };
    // The benchmarked action carries a disclose filter and a redact path (issue 6: both in the path).
    const { adminToken: admin, key } = await setUpCoveredAgent(json, t.admin, upstreamUrl);

    const callBody = JSON.stringify({ service: 'widgets', action: 'get_item', params: { id: 'a1' } });
    const gatewayCall = async () => {
      const res = await fetch(`${t.nextApiUrl()}/v1/actions/call`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: callBody,
        signal: AbortSignal.timeout(STEP_TIMEOUT_MS),
      });
      const out = (await res.json()) as { status: string };
      if (out.status !== 'called') throw new Error(`unexpected outcome ${JSON.stringify(out)}`);
    };
    const directCall = async () => {
      const res = await fetch(`${upstreamUrl}/items/a1`, { headers: { 'x-api-key': 'bench-secret' } });
      await res.json();
    };

    // Temporal's floor: Update-with-Start of a no-op workflow, same server, task queue and worker(s).
    const floorClient = new Client({ connection: await connectTemporal({ address: t.temporalAddress }) });
    temporal = floorClient;
    const floorCall = async () => {
      await within(
        'no-op Update-with-Start',
        floorClient.workflow.executeUpdateWithStart(benchmarkFloorUpdate, {
          startWorkflowOperation: new WithStartWorkflowOperation('benchmarkFloorWorkflow', {
            workflowId: `bench-floor-${randomUUID()}`,
            taskQueue: TASK_QUEUE,
            workflowIdConflictPolicy: 'FAIL',
          }),
        }),
      );
    };

    // The least gateway: its own process and database on the target's PostgreSQL server, the
    // target's Temporal server (a task queue of its own), the same upstream.
    log('starting the least gateway…');
    least = await startLeastGateway({
      name: 'least',
      workflow: 'least',
      taskQueue: 'bench-least',
      upstreamUrl,
      databaseUrl: await createLeastDatabase(t.databaseUrl),
      temporalAddress: t.temporalAddress,
    });
    const leastCall = least.call;
    /** The least gateway's process in the gateway's place, beside the same Temporal and PostgreSQL. */
    const leastProcesses: MeasuredProcess[] = [{ name: 'least', group: 'gateway', pid: least.pid, tree: false }, ...t.processes.filter((p) => p.group !== 'gateway')];

    log('warming up…');
    for (let i = 0; i < WARMUP; i++) await gatewayCall();
    for (let i = 0; i < WARMUP; i++) await leastCall();
    for (let i = 0; i < 20; i++) await floorCall();
    const memStart = gatewayMemory(t);

    log('direct upstream calls…');
    const direct: number[] = [];
    for (let i = 0; i < opts.sequential; i++) direct.push(await timed(directCall));

    log(`Temporal floor, gateway and least gateway, sequential, in turns of ${BLOCK}…`);
    const txBefore = await transactions();
    // The floor and the least gateway touch no table of the gateway's database.
    const [floor, viaGateway, viaLeast] = (await alternatedInBlocks(opts.sequential, BLOCK, [floorCall, gatewayCall, leastCall].map((fn) => () => timed(fn)))) as [number[], number[], number[]];
    const txAfter = await transactions();
    log(`Temporal floor, concurrency ${opts.concurrency}…`);
    const floorLoad = mergeRuns(t.processes, [await loadRun(t.processes, opts.floorConcurrent, opts.concurrency, floorCall)]);
    // Minus one: the first transactions() query, counted by the second.
    const txPerCall = (db: string, extra = 0) => (db in txAfter ? round((txAfter[db]! - txBefore[db]! - extra) / opts.sequential, 1) : null);
    // The gateway's and the least gateway's load in turns (gateway, least, least, gateway), each
    // half of its calls at a time, so a change in the machine's load weighs on both alike.
    log(`gateway and least gateway, concurrency ${opts.concurrency}, in turns…`);
    const gatewayRuns: LoadRun[] = [];
    const leastRuns: LoadRun[] = [];
    const halves = [Math.ceil(opts.concurrent / 2), Math.floor(opts.concurrent / 2)];
    gatewayRuns.push(await loadRun(t.processes, halves[0]!, opts.concurrency, gatewayCall));
    leastRuns.push(await loadRun(leastProcesses, halves[0]!, opts.concurrency, leastCall));
    leastRuns.push(await loadRun(leastProcesses, halves[1]!, opts.concurrency, leastCall));
    gatewayRuns.push(await loadRun(t.processes, halves[1]!, opts.concurrency, gatewayCall));
    const load = mergeRuns(t.processes, gatewayRuns);
    const leastLoad = mergeRuns(leastProcesses, leastRuns);
    const memAfterLoad = gatewayMemory(t);

    // The resume path: an uncovered call raises an approval; the user allows it (auto call on
    // approve); measured from sending the decision to the upstream receiving the request. On the
    // cluster the call and its decision go through different API replicas (round-robin). One
    // floor call goes before each allow: by now Temporal holds the thousands of workflows the
    // load left, so the allow is compared with the floor as it is at that moment, not at the start;
    // each allowed call's workflow has closed before the next floor call.
    log('resume path…');
    const resumeToUpstream: number[] = [];
    const resolveAnswer: number[] = [];
    const floorBesideResumes: number[] = [];
    for (let i = 0; i < opts.resumes; i++) {
      floorBesideResumes.push(await timed(floorCall));
      const id = `r${i}-${randomUUID().slice(0, 8)}`;
      const raised = await json('POST', '/v1/actions/call', key, { service: 'widgets', action: 'delete_item', params: { id } });
      if (raised.status !== 'pending_approval') throw new Error(`expected pending_approval, got ${JSON.stringify(raised)}`);
      const arrivalKey = `DELETE /items/${id}`;
      const arrived = new Promise<void>((r) => arrivalWaiters.set(arrivalKey, r));
      const t0 = performance.now();
      await json('POST', `/v1/approvals/${raised.approval_id}/resolve`, admin, { decision: 'allow_once' });
      resolveAnswer.push(performance.now() - t0);
      await within(`allowed call ${id} reaching the upstream`, arrived);
      arrivalWaiters.delete(arrivalKey);
      resumeToUpstream.push(arrivals.get(arrivalKey)! - t0);
      // The allowed call's tail (its final record, events, the workflow's last task) ends before
      // the next floor call, which would otherwise be measured beside it.
      await within(`allowed call ${id} closing`, floorClient.workflow.getHandle(callWorkflowId(raised.call_id)).result());
    }
    await floorClient.connection.close();
    temporal = undefined;

    const soak: Array<{ round: number; calls_per_s: number; p50: number; p95: number; rss_mb: number; peak_mb: number }> = [];
    if (opts.soak) {
      for (let r = 1; r <= opts.soakRounds; r++) {
        log(`soak round ${r}/${opts.soakRounds}: ${opts.soakSeconds} s at concurrency ${opts.concurrency}…`);
        const run = await runConcurrent({ seconds: opts.soakSeconds, concurrency: opts.concurrency }, gatewayCall);
        const l = latency(run.latencies);
        const m = gatewayMemory(t);
        soak.push({ round: r, calls_per_s: run.perSecond, p50: l.p50, p95: l.p95, rss_mb: m.rss, peak_mb: m.peak });
      }
    }

    const d = latency(direct);
    const g = latency(viaGateway);
    const c = latency(load.latencies);
    const f = latency(floor);
    const fc = latency(floorLoad.latencies);
    const l = latency(viaLeast);
    const lc = latency(leastLoad.latencies);
    const temporalSql = { temporal: txPerCall('temporal'), temporal_visibility: txPerCall('temporal_visibility') };
    const report = {
      target: { kind: t.kind, describe: t.describe, api_replicas: t.apiUrls.length, processes: t.processes.map((p) => `${p.name} (${p.group})`) },
      machine: { cores: os.cpus().length, loadavg_at_start: loadavgAtStart, loadavg_at_end: os.loadavg().map((x) => round(x)) },
      direct: d,
      temporal_floor: {
        sequential: f,
        concurrent: { concurrency: opts.concurrency, calls: floorLoad.latencies.length, per_second: floorLoad.perSecond, p50: fc.p50, p95: fc.p95 },
        cpu_ms_per_workflow: floorLoad.perCall,
        /** One floor call before each allow of the resume path: the floor its ratio is taken to. */
        beside_resumes: latency(floorBesideResumes),
      },
      gateway: {
        sequential: g,
        overhead_ms: { p50: round(g.p50 - d.p50), p95: round(g.p95 - d.p95) },
        concurrent: {
          concurrency: opts.concurrency,
          calls: load.latencies.length,
          per_second: load.perSecond,
          vs_floor: round(load.perSecond / floorLoad.perSecond),
          p50: c.p50,
          p95: c.p95,
          p99: c.p99,
        },
        cpu_ms_per_call: load.perCall,
        sql_statements_per_call: txPerCall('gateway', 1),
        // Temporal's own persistence, when it is on PostgreSQL (the cluster): transactions per call.
        ...(temporalSql.temporal !== null ? { temporal_sql_transactions_per_call: temporalSql } : {}),
      },
      least_gateway: {
        describe: 'bench/support/least-call-gateway.ts: plain node:http, three statements, eager start, the answer in-process; same Temporal, PostgreSQL and upstream',
        sequential: l,
        concurrent: { concurrency: opts.concurrency, calls: leastLoad.latencies.length, per_second: leastLoad.perSecond, p50: lc.p50, p95: lc.p95, p99: lc.p99 },
        cpu_ms_per_call: leastLoad.perCall,
        vs_floor: {
          p50: round(l.p50 / f.p50),
          throughput: round(leastLoad.perSecond / floorLoad.perSecond),
          gateway_cpu: round(leastLoad.perCall.gateway / floorLoad.perCall.gateway),
        },
      },
      resume: { approval_allowed_to_upstream: latency(resumeToUpstream), resolve_answer: latency(resolveAnswer) },
      vs_floor: ratiosToFloor({
        covered: g,
        floor: f,
        callsPerSecond: load.perSecond,
        floorPerSecond: floorLoad.perSecond,
        gatewayCpuPerCall: load.perCall.gateway,
        gatewayCpuPerFloorWorkflow: floorLoad.perCall.gateway,
        allowedToUpstreamP50: latency(resumeToUpstream).p50,
        floorBesideAllowsP50: latency(floorBesideResumes).p50,
      }),
      /** The covered call against the least gateway of this run (gateway / least). */
      vs_least: ratiosToLeast(
        { p50: g.p50, callsPerSecond: load.perSecond, cpuPerCall: load.perCall.gateway },
        { p50: l.p50, callsPerSecond: leastLoad.perSecond, cpuPerCall: leastLoad.perCall.gateway },
      ),
      /** The allow's ratio to the floor measured at the start (before this run's load), for comparison. */
      allowed_to_upstream_vs_first_floor: round(latency(resumeToUpstream).p50 / f.p50),
      memory: {
        rss_mb_after_warmup: memStart.rss,
        rss_mb_after_load: memAfterLoad.rss,
        peak_mb: memAfterLoad.peak,
        ...(memAfterLoad.by_process ? { rss_mb_after_load_by_process: memAfterLoad.by_process } : {}),
        soak,
      },
      shutdown: null as null | Shutdown,
      goals: GOALS,
      goals_vs_floor: FLOOR_GOALS,
      goals_vs_least: LEAST_GOALS,
    };
    await stop();
    report.shutdown = shutdown ?? null;
    process.stdout.write(opts.json ? JSON.stringify(report, null, 2) + '\n' : render(report) + '\n');
    if (!shutdown?.clean) process.exitCode = 1;
  } finally {
    await stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function render(r: any): string {
  const n = (v: number, w = 8) => (Number.isFinite(v) ? v.toFixed(2) : 'n/a').padStart(w);
  const ok = (good: boolean) => (good ? 'ok' : 'MISSED');
  const row = (label: string, l: Latency, note: string) => `${label.padEnd(34)}${n(l.p50)} ${n(l.p95)} ${n(l.p99)}   ${note}`;
  const { gateway: g, temporal_floor: f, least_gateway: lg, resume, memory: m } = r;
  const cpu = (c: ByGroup) => `gateway ${n(c.gateway, 6)}  temporal ${n(c.temporal, 6)}  postgres ${n(c.postgres, 6)}  total ${n(c.total, 6)}`;
  const split = (c: ByGroup) => (c.by_process ? [`  by process: ${Object.entries(c.by_process).map(([name, v]) => `${name} ${n(v, 0)}`).join('  ')}`] : []);
  const shutdown = r.shutdown as Shutdown | null;
  const codes = shutdown ? Object.entries(shutdown.exit_codes).map(([name, code]) => `${name} ${code}`).join(', ') : '';
  const lines = [
    `covered calls via REST → loopback upstream, disclose + redact on the action (${r.machine.cores} cores)`,
    `target: ${r.target.describe}`,
    `${''.padEnd(34)}  p50 ms   p95 ms   p99 ms`,
    row('direct upstream', r.direct, `(${r.direct.n} sequential)`),
    row('temporal floor (no-op UwS)', f.sequential, `(${f.sequential.n} sequential)`),
    row('temporal floor beside the allows', f.beside_resumes, `(${f.beside_resumes.n}, one before each allow)`),
    row('gateway covered call', g.sequential, `(${g.sequential.n} sequential)`),
    row('least gateway', lg.sequential, `(${lg.sequential.n} sequential)`),
    `${'gateway overhead over direct'.padEnd(34)}${n(g.overhead_ms.p50)} ${n(g.overhead_ms.p95)}            goal ≤ ${GOALS.overheadP50} / ${GOALS.overheadP95} ms: ${ok(g.overhead_ms.p50 <= GOALS.overheadP50 && g.overhead_ms.p95 <= GOALS.overheadP95)}`,
    row(`gateway @${g.concurrent.concurrency}`, { n: g.concurrent.calls, p50: g.concurrent.p50, p95: g.concurrent.p95, p99: g.concurrent.p99 }, `(${g.concurrent.calls} calls)`),
    row(`least gateway @${lg.concurrent.concurrency}`, { n: lg.concurrent.calls, p50: lg.concurrent.p50, p95: lg.concurrent.p95, p99: lg.concurrent.p99 }, `(${lg.concurrent.calls} calls, in turns with the gateway's)`),
    row('approval allowed → upstream', resume.approval_allowed_to_upstream, `goal p50 ≤ ${GOALS.resumeP50} ms: ${ok(resume.approval_allowed_to_upstream.p50 <= GOALS.resumeP50)}`),
    row('resolve request → its answer', resume.resolve_answer, ''),
    '',
    `throughput @${g.concurrent.concurrency}: gateway ${g.concurrent.per_second.toFixed(1)} calls/s, temporal floor ${f.concurrent.per_second.toFixed(1)} workflows/s, ratio ${g.concurrent.vs_floor.toFixed(2)}` +
      `   goal ≥ ${GOALS.callsPerSecond} and ≥ ${GOALS.floorRatio}: ${ok(g.concurrent.per_second >= GOALS.callsPerSecond && g.concurrent.vs_floor >= GOALS.floorRatio)}`,
    `CPU ms per covered call:     ${cpu(g.cpu_ms_per_call)}   goal gateway ≤ ${GOALS.gatewayCpuMs}: ${ok(g.cpu_ms_per_call.gateway <= GOALS.gatewayCpuMs)}`,
    ...split(g.cpu_ms_per_call),
    `CPU ms per no-op workflow:   ${cpu(f.cpu_ms_per_workflow)}`,
    ...split(f.cpu_ms_per_workflow),
    `CPU ms per least call:       ${cpu(lg.cpu_ms_per_call).replace('gateway', 'least  ')}   (least gateway @${lg.concurrent.concurrency}: ${lg.concurrent.per_second.toFixed(1)} calls/s)`,
    '',
    `as ratios to the floor of this run (issue 28's goals; the allow's to the floor beside the allows, ${r.allowed_to_upstream_vs_first_floor.toFixed(2)}× the first):`,
    ...Object.entries(r.vs_floor as FloorRatios).map(([k, v]) => `  ${k.replaceAll('_', ' ').padEnd(26)}${v.ratio.toFixed(2).padStart(6)}×   goal ${v.goal}: ${ok(v.met)}`),
    `  RSS after the load          ${String(m.rss_mb_after_load).padStart(6)} MB  goal ≤ ${GOALS.rssMb} MB: ${ok(m.rss_mb_after_load <= GOALS.rssMb)}`,
    `the least gateway to the same floor: p50 ${lg.vs_floor.p50.toFixed(2)}×, throughput ${lg.vs_floor.throughput.toFixed(2)}×, CPU ${lg.vs_floor.gateway_cpu.toFixed(2)}×`,
    '',
    `the covered call as ratios to the least gateway of this run (issue 46's goals; gateway / least):`,
    ...Object.entries(r.vs_least as LeastRatios).map(([k, v]) => `  ${(k === 'p50' ? 'covered p50' : k === 'throughput' ? `throughput @${g.concurrent.concurrency}` : 'gateway cpu per call').padEnd(26)}${v.ratio.toFixed(2).padStart(6)}×   goal ${v.goal}: ${v.met ? 'met' : 'MISSED'}`),
    '',
    `SQL statements per covered call: ${g.sql_statements_per_call} (PostgreSQL transactions; each standalone statement is one)`,
    ...(g.temporal_sql_transactions_per_call
      ? [`Temporal's PostgreSQL transactions per covered call: ${g.temporal_sql_transactions_per_call.temporal} (temporal), ${g.temporal_sql_transactions_per_call.temporal_visibility} (temporal_visibility)`]
      : []),
    `gateway RSS: ${m.rss_mb_after_warmup} MB after warm-up, ${m.rss_mb_after_load} MB after the load (peak ${m.peak_mb} MB)` +
      (m.rss_mb_after_load_by_process ? ` — summed over ${Object.entries(m.rss_mb_after_load_by_process).map(([name, v]) => `${name} ${v}`).join(', ')}` : ''),
    ...m.soak.map((s: any) => `  soak round ${s.round}: ${s.calls_per_s.toFixed(1)} calls/s, p50 ${s.p50.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms, RSS ${s.rss_mb} MB (peak ${s.peak_mb} MB)`),
    shutdown
      ? shutdown.clean
        ? `shutdown: everything stopped ${shutdown.seconds} s after one SIGTERM each (exit codes: ${codes}), folder removed`
        : `shutdown: NOT clean after ${shutdown.seconds} s (exit codes: ${codes}; still running: ${shutdown.left_running.join(', ') || 'none'})`
      : 'shutdown: n/a',
    `load average at the start: ${r.machine.loadavg_at_start.join(' ')}, at the end: ${r.machine.loadavg_at_end.join(' ')}`,
  ];
  return lines.join('\n');
}

let options: CallBenchOptions;
try {
  options = parseCallBenchOptions(process.argv.slice(2), process.env);
} catch (err) {
  if (!(err instanceof BenchUsageError)) throw err;
  process.stderr.write(`bench:call: ${err.message}\n${CALL_BENCH_USAGE}\n`);
  process.exit(2);
}
if (options.help) process.stdout.write(CALL_BENCH_USAGE + '\n');
else await main(options);
