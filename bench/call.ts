// npm run bench:call — covered calls through the REST API to a loopback upstream, with the
// embedded defaults (PostgreSQL + Temporal dev server started by the gateway), side by side with
// the direct upstream call and Temporal's own floor (a no-op workflow via Update-with-Start on the
// same server and worker). Also: throughput at concurrency 16, the resume path (approval allowed →
// upstream request received), CPU ms per call split by process (read from /proc) and the
// gateway's memory. Goals: issue 14.
//   npm run bench:call                      # text
//   npm run bench:call -- --json            # the same figures as one JSON object on stdout
//   npm run bench:call -- --soak            # plus 3 rounds of 30 s at concurrency 16 (memory)
//   BENCH_SEQUENTIAL=300 BENCH_CONCURRENT=2000 BENCH_CONCURRENCY=16 BENCH_RESUMES=50 npm run bench:call
//   BENCH_PROFILE_DIR=/tmp/prof npm run bench:call   # also writes V8 CPU profiles of the gateway
//   BENCH_LOG_LEVEL=info npm run bench:call          # the gateway's log on stderr
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import pg from 'pg';
import { freePort } from '../server/embedded/processes.ts';
import { upstreamServiceDoc } from '../test/support/upstream.ts';
import { benchmarkFloorUpdate, TASK_QUEUE } from '../workflows/definitions.ts';
import { memoryMb, processCpuMs, treeCpuMs } from './support/proc.ts';

const { values: flags } = parseArgs({
  options: { json: { type: 'boolean', default: false }, soak: { type: 'boolean', default: false } },
  strict: true,
});
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 300);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const FLOOR_CONCURRENT = Number(process.env.BENCH_FLOOR_CONCURRENT ?? 1000);
const RESUMES = Number(process.env.BENCH_RESUMES ?? 50);
const SOAK_ROUNDS = Number(process.env.BENCH_SOAK_ROUNDS ?? 3);
const SOAK_SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 30);
const WARMUP = 100;

const GOALS = { overheadP50: 15, overheadP95: 30, callsPerSecond: 100, floorRatio: 0.75, resumeP50: 15, gatewayCpuMs: 6, rssMb: 400 };

interface Latency {
  n: number;
  p50: number;
  p95: number;
  p99: number;
}

function latency(samples: number[]): Latency {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
  return { n: s.length, p50: round(at(50)), p95: round(at(95)), p99: round(at(99)) };
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
const log = (line: string) => process.stderr.write(line + '\n');

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** `total` calls by `concurrency` loops; or, with `seconds`, as many as fit in that time. */
async function runConcurrent(opts: { total?: number; seconds?: number; concurrency: number }, fn: () => Promise<unknown>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const deadline = opts.seconds ? started + opts.seconds * 1000 : Infinity;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while ((opts.total === undefined || next < opts.total) && performance.now() < deadline) {
        next++;
        latencies.push(await timed(fn));
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { latencies, seconds, perSecond: round(latencies.length / seconds, 1) };
}

/** CPU ms spent by the gateway, the Temporal server and PostgreSQL (whole tree) while `fn` runs. */
async function measureCpu<T>(pids: { gateway: number; temporal: number; postgres: number }, fn: () => Promise<T>) {
  const read = () => ({ gateway: processCpuMs(pids.gateway), temporal: processCpuMs(pids.temporal), postgres: treeCpuMs(pids.postgres) });
  const before = read();
  const value = await fn();
  const after = read();
  return { value, cpu: { gateway: after.gateway - before.gateway, temporal: after.temporal - before.temporal, postgres: after.postgres - before.postgres } };
}

function perCall(cpu: { gateway: number; temporal: number; postgres: number }, calls: number) {
  const g = round(cpu.gateway / calls);
  const t = round(cpu.temporal / calls);
  const p = round(cpu.postgres / calls);
  return { gateway: g, temporal: t, postgres: p, total: round(g + t + p) };
}

async function main() {
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

  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gateway-bench-'));
  await chmod(dataDir, 0o755);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    GATEWAY_ADMIN_EMAIL: 'bench@example.test',
    GATEWAY_ADMIN_PASSWORD: 'benchmark password',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    // One agent makes every call: keep the bucket (and its cost per call) but never empty it.
    GATEWAY_RATE_LIMIT_PER_MINUTE: '1000000',
  };
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  // Started like `npm run serve` starts it (the same V8 flag).
  const gateway = spawn(process.execPath, ['--max-semi-space-size=16', ...profile, path.resolve(import.meta.dirname, '..', 'cli', 'gateway.ts'), 'serve'], {
    env,
    // The gateway's JSON log goes to stderr with BENCH_LOG_LEVEL (e.g. info), else nowhere.
    stdio: ['ignore', process.env.BENCH_LOG_LEVEL ? 2 : 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((r) => gateway.once('exit', (code) => r(code)));
  let shutdown: { seconds: number; signals: number; code: number | null } | undefined;
  /** One SIGTERM must be enough: the gateway stops its worker, server and children and exits. */
  let stopped = false;
  let stats: pg.Client | undefined;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await stats?.end().catch(() => undefined);
    if (gateway.exitCode === null && gateway.signalCode === null) {
      const t = performance.now();
      gateway.kill('SIGTERM');
      const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 60_000).unref());
      const code = await Promise.race([exited, timeout]);
      if (code === 'timeout') {
        gateway.kill('SIGKILL');
        shutdown = { seconds: round((performance.now() - t) / 1000, 1), signals: 2, code: await exited };
      } else {
        shutdown = { seconds: round((performance.now() - t) / 1000, 1), signals: 1, code };
      }
    }
    upstream.closeAllConnections();
    upstream.close();
    await rm(dataDir, { recursive: true, force: true });
  };

  try {
    log('starting the gateway with embedded PostgreSQL and Temporal…');
    for (let i = 0; ; i++) {
      if (gateway.exitCode !== null) throw new Error('the gateway exited during start-up');
      const ok = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
      if (ok) break;
      if (i > 2400) throw new Error('the gateway did not become ready');
      await new Promise((r) => setTimeout(r, 250));
    }
    const pidOf = async (name: string) => Number((await readFile(path.join(dataDir, 'run', `${name}.pid`), 'utf8')).trim());
    const pids = { gateway: gateway.pid!, temporal: await pidOf('temporal'), postgres: await pidOf('postgres') };

    // SQL statements the gateway runs: PostgreSQL's transaction counter for its database (every
    // statement outside an explicit transaction is one). Backends publish it within a second of idling.
    const pgPort = /-p\0(\d+)/.exec(readFileSync(`/proc/${pids.postgres}/cmdline`, 'utf8'))?.[1];
    stats = new pg.Client({ host: '127.0.0.1', port: Number(pgPort), user: 'gateway', database: 'gateway', password: (await readFile(path.join(dataDir, 'postgres.password'), 'utf8')).trim() });
    await stats.connect();
    const transactions = async () => {
      await new Promise((r) => setTimeout(r, 1_500));
      const r = await stats!.query<{ n: string }>(`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`);
      return Number(r.rows[0]!.n) - 1; // not counting this query
    };

    const json = async (method: string, p: string, token: string | null, body?: unknown) => {
      const res = await fetch(base + p, {
        method,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const parsed = (await res.json()) as any;
      if (res.status >= 300 && !(res.status === 202 && parsed.status === 'pending_approval')) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(parsed)}`);
      return parsed;
    };
    const admin = (await json('POST', '/v1/auth/login', null, { email: env.GATEWAY_ADMIN_EMAIL, password: env.GATEWAY_ADMIN_PASSWORD })).token as string;
    // The benchmarked action carries a disclose filter and a redact path (issue 6: both in the path).
    const doc = upstreamServiceDoc('widgets', upstreamUrl) as any;
    doc.paths['/items/{id}'].get['x-gateway-disclose'] = [{ label: 'Item', filter: '.params.id', max_chars: 40 }];
    doc.paths['/items/{id}'].get['x-gateway-redact'] = ['params.id'];
    await json('POST', '/v1/templates', admin, { scope: 'org', document: doc });
    await json('POST', '/v1/secrets', admin, { name: 'WIDGETS_KEY', value: 'bench-secret' });
    const agent = await json('POST', '/v1/identities/agents', admin, { name: 'bench-agent' });
    await json('POST', `/v1/identities/${agent.identity.id}/rules`, admin, { effect: 'allow', pattern: 'widgets:get_item:*' });
    const key = agent.key.token as string;

    const callBody = JSON.stringify({ service: 'widgets', action: 'get_item', params: { id: 'a1' } });
    const gatewayCall = async () => {
      const res = await fetch(`${base}/v1/actions/call`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: callBody,
      });
      const out = (await res.json()) as { status: string };
      if (out.status !== 'called') throw new Error(`unexpected outcome ${JSON.stringify(out)}`);
    };
    const directCall = async () => {
      const res = await fetch(`${upstreamUrl}/items/a1`, { headers: { 'x-api-key': 'bench-secret' } });
      await res.json();
    };

    // Temporal's floor: Update-with-Start of a no-op workflow, same server, task queue and worker.
    const temporal = new Client({ connection: await Connection.connect({ address: `127.0.0.1:${env.TEMPORAL_PORT}` }) });
    const floorCall = async () => {
      await temporal.workflow.executeUpdateWithStart(benchmarkFloorUpdate, {
        startWorkflowOperation: new WithStartWorkflowOperation('benchmarkFloorWorkflow', {
          workflowId: `bench-floor-${randomUUID()}`,
          taskQueue: TASK_QUEUE,
          workflowIdConflictPolicy: 'FAIL',
        }),
      });
    };

    log('warming up…');
    for (let i = 0; i < WARMUP; i++) await gatewayCall();
    for (let i = 0; i < 20; i++) await floorCall();
    const rssStart = memoryMb(pids.gateway);

    log('direct upstream calls…');
    const direct: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) direct.push(await timed(directCall));

    log('Temporal floor…');
    const floor: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) floor.push(await timed(floorCall));
    const floorLoad = await measureCpu(pids, () => runConcurrent({ total: FLOOR_CONCURRENT, concurrency: CONCURRENCY }, floorCall));
    await temporal.connection.close();

    log('gateway, sequential…');
    const viaGateway: number[] = [];
    const txBefore = await transactions();
    for (let i = 0; i < SEQUENTIAL; i++) viaGateway.push(await timed(gatewayCall));
    const sqlPerCall = round((await transactions() - txBefore - 1) / SEQUENTIAL, 1);
    log(`gateway, concurrency ${CONCURRENCY}…`);
    const load = await measureCpu(pids, () => runConcurrent({ total: CONCURRENT, concurrency: CONCURRENCY }, gatewayCall));
    const rssAfterLoad = memoryMb(pids.gateway);

    // The resume path: an uncovered call raises an approval; the user allows it (auto call on
    // approve); measured from sending the decision to the upstream receiving the request.
    log('resume path…');
    const resumeToUpstream: number[] = [];
    const resolveAnswer: number[] = [];
    for (let i = 0; i < RESUMES; i++) {
      const id = `r${i}-${randomUUID().slice(0, 8)}`;
      const raised = await json('POST', '/v1/actions/call', key, { service: 'widgets', action: 'delete_item', params: { id } });
      if (raised.status !== 'pending_approval') throw new Error(`expected pending_approval, got ${JSON.stringify(raised)}`);
      const arrivalKey = `DELETE /items/${id}`;
      const arrived = new Promise<void>((r) => arrivalWaiters.set(arrivalKey, r));
      const t0 = performance.now();
      await json('POST', `/v1/approvals/${raised.approval_id}/resolve`, admin, { decision: 'allow_once' });
      resolveAnswer.push(performance.now() - t0);
      await arrived;
      arrivalWaiters.delete(arrivalKey);
      resumeToUpstream.push(arrivals.get(arrivalKey)! - t0);
    }

    const soak: Array<{ round: number; calls_per_s: number; p50: number; p95: number; rss_mb: number; peak_mb: number }> = [];
    if (flags.soak) {
      for (let r = 1; r <= SOAK_ROUNDS; r++) {
        log(`soak round ${r}/${SOAK_ROUNDS}: ${SOAK_SECONDS} s at concurrency ${CONCURRENCY}…`);
        const run = await runConcurrent({ seconds: SOAK_SECONDS, concurrency: CONCURRENCY }, gatewayCall);
        const l = latency(run.latencies);
        const m = memoryMb(pids.gateway);
        soak.push({ round: r, calls_per_s: run.perSecond, p50: l.p50, p95: l.p95, rss_mb: round(m.rss, 0), peak_mb: round(m.peak, 0) });
      }
    }

    const d = latency(direct);
    const g = latency(viaGateway);
    const c = latency(load.value.latencies);
    const f = latency(floor);
    const fc = latency(floorLoad.value.latencies);
    const report = {
      machine: { cores: os.cpus().length, loadavg_at_end: os.loadavg().map((x) => round(x)) },
      direct: d,
      temporal_floor: {
        sequential: f,
        concurrent: { concurrency: CONCURRENCY, calls: floorLoad.value.latencies.length, per_second: floorLoad.value.perSecond, p50: fc.p50, p95: fc.p95 },
        cpu_ms_per_workflow: perCall(floorLoad.cpu, floorLoad.value.latencies.length),
      },
      gateway: {
        sequential: g,
        overhead_ms: { p50: round(g.p50 - d.p50), p95: round(g.p95 - d.p95) },
        concurrent: {
          concurrency: CONCURRENCY,
          calls: load.value.latencies.length,
          per_second: load.value.perSecond,
          vs_floor: round(load.value.perSecond / floorLoad.value.perSecond),
          p50: c.p50,
          p95: c.p95,
          p99: c.p99,
        },
        cpu_ms_per_call: perCall(load.cpu, load.value.latencies.length),
        sql_statements_per_call: sqlPerCall,
      },
      resume: { approval_allowed_to_upstream: latency(resumeToUpstream), resolve_answer: latency(resolveAnswer) },
      memory: { rss_mb_after_warmup: round(rssStart.rss, 0), rss_mb_after_load: round(rssAfterLoad.rss, 0), peak_mb: round(rssAfterLoad.peak, 0), soak },
      shutdown: null as null | { seconds: number; signals: number; code: number | null },
      goals: GOALS,
    };
    await stop();
    report.shutdown = shutdown ?? null;
    process.stdout.write(flags.json ? JSON.stringify(report, null, 2) + '\n' : render(report) + '\n');
    if (shutdown && shutdown.signals > 1) process.exitCode = 1;
  } finally {
    await stop();
  }
}

function render(r: any): string {
  const n = (v: number, w = 8) => (Number.isFinite(v) ? v.toFixed(2) : 'n/a').padStart(w);
  const ok = (good: boolean) => (good ? 'ok' : 'MISSED');
  const row = (label: string, l: Latency, note: string) => `${label.padEnd(34)}${n(l.p50)} ${n(l.p95)} ${n(l.p99)}   ${note}`;
  const { gateway: g, temporal_floor: f, resume, memory: m } = r;
  const cpu = (c: any) => `gateway ${n(c.gateway, 6)}  temporal ${n(c.temporal, 6)}  postgres ${n(c.postgres, 6)}  total ${n(c.total, 6)}`;
  const lines = [
    `covered calls via REST → loopback upstream, disclose + redact on the action (${r.machine.cores} cores, embedded PostgreSQL + Temporal dev server)`,
    `${''.padEnd(34)}  p50 ms   p95 ms   p99 ms`,
    row('direct upstream', r.direct, `(${r.direct.n} sequential)`),
    row('temporal floor (no-op UwS)', f.sequential, `(${f.sequential.n} sequential)`),
    row('gateway covered call', g.sequential, `(${g.sequential.n} sequential)`),
    `${'gateway overhead over direct'.padEnd(34)}${n(g.overhead_ms.p50)} ${n(g.overhead_ms.p95)}            goal ≤ ${GOALS.overheadP50} / ${GOALS.overheadP95} ms: ${ok(g.overhead_ms.p50 <= GOALS.overheadP50 && g.overhead_ms.p95 <= GOALS.overheadP95)}`,
    row(`gateway @${g.concurrent.concurrency}`, { n: g.concurrent.calls, p50: g.concurrent.p50, p95: g.concurrent.p95, p99: g.concurrent.p99 }, `(${g.concurrent.calls} calls)`),
    row('approval allowed → upstream', resume.approval_allowed_to_upstream, `goal p50 ≤ ${GOALS.resumeP50} ms: ${ok(resume.approval_allowed_to_upstream.p50 <= GOALS.resumeP50)}`),
    row('resolve request → its answer', resume.resolve_answer, ''),
    '',
    `throughput @${g.concurrent.concurrency}: gateway ${g.concurrent.per_second.toFixed(1)} calls/s, temporal floor ${f.concurrent.per_second.toFixed(1)} workflows/s, ratio ${g.concurrent.vs_floor.toFixed(2)}` +
      `   goal ≥ ${GOALS.callsPerSecond} and ≥ ${GOALS.floorRatio}: ${ok(g.concurrent.per_second >= GOALS.callsPerSecond && g.concurrent.vs_floor >= GOALS.floorRatio)}`,
    `CPU ms per covered call:     ${cpu(g.cpu_ms_per_call)}   goal gateway ≤ ${GOALS.gatewayCpuMs}: ${ok(g.cpu_ms_per_call.gateway <= GOALS.gatewayCpuMs)}`,
    `CPU ms per no-op workflow:   ${cpu(f.cpu_ms_per_workflow)}`,
    `SQL statements per covered call: ${g.sql_statements_per_call} (PostgreSQL transactions; each standalone statement is one)`,
    `gateway RSS: ${m.rss_mb_after_warmup} MB after warm-up, ${m.rss_mb_after_load} MB after the load (peak ${m.peak_mb} MB)`,
    ...m.soak.map((s: any) => `  soak round ${s.round}: ${s.calls_per_s.toFixed(1)} calls/s, p50 ${s.p50.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms, RSS ${s.rss_mb} MB (peak ${s.peak_mb} MB)`),
    r.shutdown
      ? `shutdown: ${r.shutdown.signals === 1 ? 'stopped' : 'did NOT stop'} ${r.shutdown.seconds} s after one SIGTERM (exit code ${r.shutdown.code})`
      : 'shutdown: n/a',
    `load average at the end: ${r.machine.loadavg_at_end.join(' ')}`,
  ];
  return lines.join('\n');
}

await main();
