// npm run bench:call — covered calls through the REST API to a loopback upstream, with the
// embedded defaults (PostgreSQL + Temporal dev server started by the gateway). Prints p50/p95
// latency of the gateway and of the direct call, the gateway's overhead, and throughput at
// concurrency 16. Goals (issue 5): overhead p50 < 15 ms, ≥ 150 calls/s on 2 cores.
//   BENCH_SEQUENTIAL=300 BENCH_CONCURRENT=2000 BENCH_CONCURRENCY=16 npm run bench:call
//   BENCH_PROFILE_DIR=/tmp/prof npm run bench:call   # also writes V8 CPU profiles of the gateway
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import { benchmarkFloorUpdate, TASK_QUEUE } from '../workflows/definitions.ts';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../server/runtime/processes.ts';
import { upstreamServiceDoc } from '../test/support/upstream.ts';
import { startClusterTarget, type ClusterTarget } from './targets.ts';

/** `--cluster`: the production shape (bench/targets.ts) instead of the embedded defaults. */
const CLUSTER = process.argv.includes('--cluster');

const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 300);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const WARMUP = 100;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function summary(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p95: percentile(s, 95), p99: percentile(s, 99) };
}

const fmt = (n: number) => n.toFixed(2).padStart(8);

async function timed(fn: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function runConcurrent(total: number, concurrency: number, fn: () => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        latencies.push(await timed(fn));
      }
    }),
  );
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

async function main() {
  // The upstream: a tiny JSON API on loopback.
  const upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
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
    LOG_LEVEL: 'warn',
    // One agent makes every call: keep the bucket (and its cost per call) but never empty it.
    GATEWAY_RATE_LIMIT_PER_MINUTE: '1000000',
  };
  const cluster: ClusterTarget | null = CLUSTER ? await startClusterTarget({ GATEWAY_RATE_LIMIT_PER_MINUTE: env.GATEWAY_RATE_LIMIT_PER_MINUTE }) : null;
  const apiBase = () => (cluster ? cluster.nextApiUrl() : base);
  const gateway = cluster ? null : spawn(process.execPath, [...(process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : []), path.resolve(import.meta.dirname, '..', 'cli', 'gateway.ts'), 'serve'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const stop = async () => {
    await cluster?.stop();
    if (gateway && gateway.exitCode === null) {
      gateway.kill('SIGTERM');
      await new Promise((r) => gateway.once('exit', r));
    }
    upstream.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    if (!cluster) process.stderr.write('starting the gateway with embedded PostgreSQL and Temporal…\n');
    for (let i = 0; ; i++) {
      if (gateway && gateway.exitCode !== null) throw new Error('the gateway exited during start-up');
      const ok = await fetch(`${apiBase()}/readyz`).then((r) => r.ok, () => false);
      if (ok) break;
      if (i > 600) throw new Error('the gateway did not become ready');
      await new Promise((r) => setTimeout(r, 250));
    }
    const json = async (method: string, p: string, token: string | null, body?: unknown) => {
      const res = await fetch(apiBase() + p, {
        method,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const parsed = (await res.json()) as any;
      if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(parsed)}`);
      return parsed;
    };
    const admin = (await json('POST', '/v1/auth/login', null, cluster ? cluster.admin : { email: env.GATEWAY_ADMIN_EMAIL, password: env.GATEWAY_ADMIN_PASSWORD })).token;
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
      const res = await fetch(`${apiBase()}/v1/actions/call`, {
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

    // Temporal's floor: Update-with-Start of a no-op workflow, same server and worker.
    const temporal = new Client({ connection: await Connection.connect({ address: cluster ? cluster.temporalAddress : `127.0.0.1:${env.TEMPORAL_PORT}` }) });
    const floorCall = async () => {
      await temporal.workflow.executeUpdateWithStart(benchmarkFloorUpdate, {
        startWorkflowOperation: new WithStartWorkflowOperation('benchmarkFloorWorkflow', {
          workflowId: `bench-floor-${randomUUID()}`,
          taskQueue: TASK_QUEUE,
          workflowIdConflictPolicy: 'FAIL',
        }),
      });
    };

    for (let i = 0; i < WARMUP; i++) await gatewayCall();
    for (let i = 0; i < 20; i++) await floorCall();
    const floor: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) floor.push(await timed(floorCall));
    const floorLoad = await runConcurrent(Math.min(CONCURRENT, 1000), CONCURRENCY, floorCall);
    await temporal.connection.close();
    const direct: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) direct.push(await timed(directCall));
    const viaGateway: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) viaGateway.push(await timed(gatewayCall));
    const load = await runConcurrent(CONCURRENT, CONCURRENCY, gatewayCall);

    const f = summary(floor);
    const d = summary(direct);
    const g = summary(viaGateway);
    const c = summary(load.latencies);
    const throughput = CONCURRENT / load.seconds;
    const out = [
      `covered calls via REST → loopback upstream, disclose + redact on the action (${os.cpus().length} cores, ${cluster ? cluster.describe : 'embedded PostgreSQL + Temporal dev server'})`,
      `                         p50 ms   p95 ms   p99 ms`,
      `direct upstream       ${fmt(d.p50)} ${fmt(d.p95)} ${fmt(d.p99)}   (${SEQUENTIAL} sequential)`,
      `temporal floor        ${fmt(f.p50)} ${fmt(f.p95)} ${fmt(f.p99)}   (Update-with-Start of a no-op workflow)`,
      `gateway               ${fmt(g.p50)} ${fmt(g.p95)} ${fmt(g.p99)}   (${SEQUENTIAL} sequential)`,
      `gateway overhead p50  ${fmt(g.p50 - d.p50)}                     goal < 15 ms`,
      `gateway @${String(CONCURRENCY).padEnd(3)}          ${fmt(c.p50)} ${fmt(c.p95)} ${fmt(c.p99)}   (${CONCURRENT} calls)`,
      `throughput @${CONCURRENCY}         ${throughput.toFixed(1).padStart(8)} calls/s                goal ≥ 150`,
      `temporal floor @${String(CONCURRENCY).padEnd(3)}   ${(Math.min(CONCURRENT, 1000) / floorLoad.seconds).toFixed(1).padStart(8)} workflows/s (no-op, no gateway work)`,
    ];
    process.stdout.write(out.join('\n') + '\n');
  } finally {
    await stop();
  }
}

await main();
