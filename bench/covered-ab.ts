// npm run bench:ab -- --other <checkout> [--base <checkout>] [--calls 300] [--allows 60] [--tracing] — the
// covered call, and an allowed call from the decision to the upstream, of two versions of the
// gateway in one run: this tree or --base (A) and another checkout (B, e.g. `git worktree add /tmp/b <rev>`),
// each with its own embedded PostgreSQL and Temporal, called alternately call by call (A then B,
// then B then A, …), so both meet the same moments of a noisy machine. Prints p50/p95 of each and
// the p50 difference, with a bootstrap 95 % interval. Loopback only; bounded by --calls and --allows.
// --tracing: A exports traces (OTEL_EXPORTER_OTLP_ENDPOINT) to an OTLP sink the bench starts on
// loopback; with `--other .` (this tree again, untraced) the difference is tracing's cost.
import http from 'node:http';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { setUpCoveredAgent } from './support/covered-agent.ts';
import { bootstrapDiff, median } from './support/ab-stats.ts';
import { latency, round } from './support/figures.ts';
import { startEmbeddedTarget, type BenchTarget } from './targets.ts';
import { startOtlpSink } from './support/otlp-sink.ts';

const { values: args } = parseArgs({ options: { other: { type: 'string' }, base: { type: 'string' }, calls: { type: 'string', default: '300' }, allows: { type: 'string', default: '60' }, warmup: { type: 'string', default: '60' }, tracing: { type: 'boolean', default: false } } });
if (!args.other) {
  process.stderr.write('usage: npm run bench:ab -- --other <checkout of the other version> [--calls 300] [--warmup 60]\n');
  process.exit(2);
}
const CALLS = Number(args.calls);
const WARMUP = Number(args.warmup);
const ALLOWS = Number(args.allows);

/** When each DELETE reached the upstream (the allowed calls), and who waits for one. */
const arrivals = new Map<string, number>();
const arrivalWaiters = new Map<string, () => void>();

/**
 * A target set up as bench:call sets up its own: the widgets service, its key, a covered agent.
 * `call`: one covered call's time; `allow`: one uncovered call raised, then allowed by the admin
 * (auto-call), timed from sending the decision to the upstream receiving the request, and waited
 * for until its call is final (so its tail is not measured beside the next).
 */
async function covered(t: BenchTarget, upstreamUrl: string): Promise<{ call: () => Promise<number>; allow: () => Promise<number> }> {
  const base = t.apiUrls[0]!;
  const json = async (method: string, p: string, token: string | null, body?: unknown) => {
    const res = await fetch(base + p, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const parsed = (await res.json()) as any;
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(parsed)}`);
    return parsed;
  };
  const { key, adminToken } = await setUpCoveredAgent(json, t.admin, upstreamUrl);
  const body = JSON.stringify({ service: 'widgets', action: 'get_item', params: { id: 'a1' } });
  let allows = 0;
  return {
    async call() {
      const started = performance.now();
      const res = await fetch(`${base}/v1/actions/call`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
      const out = (await res.json()) as { status: string };
      if (out.status !== 'called') throw new Error(`unexpected outcome ${JSON.stringify(out)}`);
      return performance.now() - started;
    },
    async allow() {
      const id = `ab-${t.apiUrls[0]!.split(':').at(-1)}-${allows++}`;
      const raised = await json('POST', '/v1/actions/call', key, { service: 'widgets', action: 'delete_item', params: { id } });
      if (raised.status !== 'pending_approval') throw new Error(`expected pending_approval, got ${JSON.stringify(raised)}`);
      const arrivalKey = `DELETE /items/${id}`;
      const arrived = new Promise<void>((r) => arrivalWaiters.set(arrivalKey, r));
      const t0 = performance.now();
      await json('POST', `/v1/approvals/${raised.approval_id}/resolve`, adminToken, { decision: 'allow_once' });
      await arrived;
      arrivalWaiters.delete(arrivalKey);
      const took = arrivals.get(arrivalKey)! - t0;
      for (let final = false; !final; ) {
        const view = await json('GET', `/v1/calls/${raised.call_id}`, key);
        final = !['pending_approval', 'allowed', 'executing', 'checking'].includes(view.status);
        if (!final) await new Promise((r) => setTimeout(r, 20));
      }
      return took;
    },
  };
}

/** The gateway database's transaction count (each standalone statement is one), once backends have published it. */
async function statements(t: BenchTarget): Promise<number> {
  await new Promise((r) => setTimeout(r, 1_500));
  const client = new pg.Client({ connectionString: t.databaseUrl });
  await client.connect();
  try {
    const r = await client.query<{ n: string }>('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()');
    return Number(r.rows[0]!.n);
  } finally {
    await client.end();
  }
}

async function main() {
  const upstream = http.createServer((req, res) => {
    const at = performance.now();
    req.resume();
    req.on('end', () => {
      if (req.method === 'DELETE') {
        arrivals.set(`${req.method} ${req.url}`, at);
        arrivalWaiters.get(`${req.method} ${req.url}`)?.();
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true,"item":{"id":"a1","name":"bench"}}');
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  const targets: BenchTarget[] = [];
  const sink = args.tracing ? await startOtlpSink() : undefined;
  // A short batch delay, as a test would use: the export's work falls inside the measured run.
  const tracing = sink ? { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_BSP_SCHEDULE_DELAY: '200' } : undefined;
  const labelA = `${args.base ?? 'this tree'}${sink ? ', tracing on' : ''}`;
  try {
    targets.push(await startEmbeddedTarget({ ...(args.base ? { root: args.base } : {}), ...(tracing ? { env: tracing } : {}) }));
    targets.push(await startEmbeddedTarget({ root: args.other! }));
    const [a, b] = [await covered(targets[0]!, upstreamUrl), await covered(targets[1]!, upstreamUrl)];
    for (let i = 0; i < WARMUP; i++) await Promise.all([a.call(), b.call()]);
    const before = await Promise.all(targets.map(statements));
    const la: number[] = [];
    const lb: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      // Alternate who goes first, so neither always follows the other's garbage or timers.
      if (i % 2 === 0) {
        la.push(await a.call());
        lb.push(await b.call());
      } else {
        lb.push(await b.call());
        la.push(await a.call());
      }
    }
    const perCall = (await Promise.all(targets.map(statements))).map((n, i) => round((n - before[i]!) / CALLS, 2));
    const A = latency(la);
    const B = latency(lb);
    const [lo, hi] = bootstrapDiff(la, lb);
    console.log(`covered calls, alternated call by call (${CALLS} each, after ${WARMUP} warm-up pairs)`);
    console.log(`                     p50 ms   p95 ms   p99 ms`);
    console.log(`A (${labelA})      ${String(A.p50).padStart(7)}  ${String(A.p95).padStart(7)}  ${String(A.p99).padStart(7)}`);
    console.log(`B (${args.other})  ${String(B.p50).padStart(7)}  ${String(B.p95).padStart(7)}  ${String(B.p99).padStart(7)}`);
    console.log(`SQL statements per covered call: A ${perCall[0]}, B ${perCall[1]} (PostgreSQL transactions in the gateway's database)`);
    console.log(`p50 A − B: ${round(median(la) - median(lb), 2)} ms (95 % bootstrap interval ${round(lo, 2)} … ${round(hi, 2)} ms); p50 A / B: ${round(median(la) / median(lb), 3)}`);
    // The allowed path, alternated the same way: decision sent → request at the upstream.
    const aa: number[] = [];
    const ab: number[] = [];
    for (let i = 0; i < ALLOWS; i++) {
      if (i % 2 === 0) {
        aa.push(await a.allow());
        ab.push(await b.allow());
      } else {
        ab.push(await b.allow());
        aa.push(await a.allow());
      }
    }
    const AA = latency(aa);
    const AB = latency(ab);
    const [alo, ahi] = bootstrapDiff(aa, ab);
    console.log(`\nallowed calls, decision sent → request at the upstream, alternated (${ALLOWS} each)`);
    console.log(`                     p50 ms   p95 ms   p99 ms`);
    console.log(`A (${labelA})      ${String(AA.p50).padStart(7)}  ${String(AA.p95).padStart(7)}  ${String(AA.p99).padStart(7)}`);
    console.log(`B (${args.other})  ${String(AB.p50).padStart(7)}  ${String(AB.p95).padStart(7)}  ${String(AB.p99).padStart(7)}`);
    console.log(`p50 A − B: ${round(median(aa) - median(ab), 2)} ms (95 % bootstrap interval ${round(alo, 2)} … ${round(ahi, 2)} ms); p50 A / B: ${round(median(aa) / median(ab), 3)}`);
    if (sink) console.log(`\ntracing: A exported ${sink.spans()} spans in ${sink.requests()} OTLP requests to the loopback sink`);
  } finally {
    for (const t of targets) await t.stop().catch(() => undefined);
    await sink?.close();
    upstream.closeAllConnections();
    upstream.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
