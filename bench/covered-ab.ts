// npm run bench:ab -- --other <checkout> [--base <checkout>] [--calls 300] — the covered call of two
// versions of the gateway in one run: this tree or --base (A) and another checkout (B, e.g. `git worktree add /tmp/b <rev>`),
// each with its own embedded PostgreSQL and Temporal, called alternately call by call (A then B,
// then B then A, …), so both meet the same moments of a noisy machine. Prints p50/p95 of each and
// the p50 difference, with a bootstrap 95 % interval. Loopback only; bounded by --calls.
import http from 'node:http';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { setUpCoveredAgent } from './support/covered-agent.ts';
import { latency, round } from './support/figures.ts';
import { startEmbeddedTarget, type BenchTarget } from './targets.ts';

const { values: args } = parseArgs({ options: { other: { type: 'string' }, base: { type: 'string' }, calls: { type: 'string', default: '300' }, warmup: { type: 'string', default: '60' } } });
if (!args.other) {
  process.stderr.write('usage: npm run bench:ab -- --other <checkout of the other version> [--calls 300] [--warmup 60]\n');
  process.exit(2);
}
const CALLS = Number(args.calls);
const WARMUP = Number(args.warmup);

/** A target set up as bench:call sets up its own: the widgets service, its key, a covered agent. */
async function covered(t: BenchTarget, upstreamUrl: string): Promise<() => Promise<number>> {
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
  const { key } = await setUpCoveredAgent(json, t.admin, upstreamUrl);
  const body = JSON.stringify({ service: 'widgets', action: 'get_item', params: { id: 'a1' } });
  return async () => {
    const started = performance.now();
    const res = await fetch(`${base}/v1/actions/call`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
    const out = (await res.json()) as { status: string };
    if (out.status !== 'called') throw new Error(`unexpected outcome ${JSON.stringify(out)}`);
    return performance.now() - started;
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

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

/** A 95 % bootstrap interval of p50(a) − p50(b) (seeded, so a run can be repeated). */
function bootstrapDiff(a: number[], b: number[], rounds = 2000): [number, number] {
  let state = 42;
  const rand = () => (state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32;
  const pick = (xs: number[]) => Array.from({ length: xs.length }, () => xs[Math.floor(rand() * xs.length)]!);
  const diffs = Array.from({ length: rounds }, () => median(pick(a)) - median(pick(b))).sort((x, y) => x - y);
  return [diffs[Math.floor(rounds * 0.025)]!, diffs[Math.floor(rounds * 0.975)]!];
}

async function main() {
  const upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true,"item":{"id":"a1","name":"bench"}}');
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  const targets: BenchTarget[] = [];
  try {
    targets.push(await startEmbeddedTarget(args.base ? { root: args.base } : {}));
    targets.push(await startEmbeddedTarget({ root: args.other! }));
    const [a, b] = [await covered(targets[0]!, upstreamUrl), await covered(targets[1]!, upstreamUrl)];
    for (let i = 0; i < WARMUP; i++) await Promise.all([a(), b()].map((p) => p.catch((err: unknown) => Promise.reject(err))));
    const before = await Promise.all(targets.map(statements));
    const la: number[] = [];
    const lb: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      // Alternate who goes first, so neither always follows the other's garbage or timers.
      if (i % 2 === 0) {
        la.push(await a());
        lb.push(await b());
      } else {
        lb.push(await b());
        la.push(await a());
      }
    }
    const perCall = (await Promise.all(targets.map(statements))).map((n, i) => round((n - before[i]!) / CALLS, 2));
    const A = latency(la);
    const B = latency(lb);
    const [lo, hi] = bootstrapDiff(la, lb);
    console.log(`covered calls, alternated call by call (${CALLS} each, after ${WARMUP} warm-up pairs)`);
    console.log(`                     p50 ms   p95 ms   p99 ms`);
    console.log(`A (${args.base ?? 'this tree'})      ${String(A.p50).padStart(7)}  ${String(A.p95).padStart(7)}  ${String(A.p99).padStart(7)}`);
    console.log(`B (${args.other})  ${String(B.p50).padStart(7)}  ${String(B.p95).padStart(7)}  ${String(B.p99).padStart(7)}`);
    console.log(`SQL statements per covered call: A ${perCall[0]}, B ${perCall[1]} (PostgreSQL transactions in the gateway's database)`);
    console.log(`p50 A − B: ${round(median(la) - median(lb), 2)} ms (95 % bootstrap interval ${round(lo, 2)} … ${round(hi, 2)} ms); p50 A / B: ${round(median(la) / median(lb), 3)}`);
  } finally {
    for (const t of targets) await t.stop().catch(() => undefined);
    upstream.closeAllConnections();
    upstream.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
