// npm run bench:imported [-- --calls 300] — does a call through an imported vendor action cost
// more than one through a hand-written template? One gateway (embedded PostgreSQL and Temporal),
// two covered actions on the same loopback upstream, called alternately call by call: `get_item`
// of the hand-written widgets template (bench/support/covered-agent.ts) and `repos/get` of GitHub's
// own published document (@octokit/openapi, 13 MB, ~1,200 operations) imported with
// POST /v1/templates/import, its server pointed at the loopback upstream, and published. Prints
// p50/p95 of each and the p50 difference with a bootstrap 95 % interval. Loopback only.
import http from 'node:http';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { setUpCoveredAgent } from './support/covered-agent.ts';
import { bootstrapDiff, median } from './support/ab-stats.ts';
import { latency, round } from './support/figures.ts';
import { startEmbeddedTarget, type BenchTarget } from './targets.ts';

const { values: args } = parseArgs({ options: { calls: { type: 'string', default: '300' }, warmup: { type: 'string', default: '40' } } });
const CALLS = Number(args.calls);
const WARMUP = Number(args.warmup);

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
  let target: BenchTarget | undefined;
  try {
    target = await startEmbeddedTarget();
    const base = target.apiUrls[0]!;
    const json = async (method: string, p: string, token: string | null, body?: unknown) => {
      const res = await fetch(base + p, {
        method,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const parsed = (await res.json()) as any;
      if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(parsed).slice(0, 500)}`);
      return parsed;
    };
    const { adminToken, key } = await setUpCoveredAgent(json, target.admin, upstreamUrl);
    // GitHub's document as GitHub publishes it, but served by the loopback upstream.
    const github = createRequire(import.meta.url)('@octokit/openapi/generated/api.github.com.json') as { servers: { url: string }[] };
    const started = performance.now();
    const imported = await json('POST', '/v1/templates/import', adminToken, { document: { ...github, servers: [{ url: upstreamUrl }] }, key: 'gh', scope: 'org' });
    const importMs = performance.now() - started;
    await json('POST', `/v1/templates/${imported.template.id}/publish`, adminToken);
    const me = await json('GET', '/v1/identities/me', key);
    await json('POST', `/v1/identities/${me.identity.id}/rules`, adminToken, { effect: 'allow', pattern: 'gh:repos_get:*' });
    const call = (body: string) => async () => {
      const t0 = performance.now();
      const res = await fetch(`${base}/v1/actions/call`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
      const out = (await res.json()) as { status: string };
      if (out.status !== 'called') throw new Error(`unexpected outcome ${JSON.stringify(out)}`);
      return performance.now() - t0;
    };
    const handWritten = call(JSON.stringify({ service: 'widgets', action: 'get_item', params: { id: 'a1' } }));
    const vendor = call(JSON.stringify({ service: 'gh', action: 'repos_get', params: { owner: 'octo', repo: 'bench' } }));
    for (let i = 0; i < WARMUP; i++) await Promise.all([handWritten(), vendor()]);
    const lh: number[] = [];
    const lv: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      if (i % 2 === 0) {
        lh.push(await handWritten());
        lv.push(await vendor());
      } else {
        lv.push(await vendor());
        lh.push(await handWritten());
      }
    }
    const H = latency(lh);
    const V = latency(lv);
    const [lo, hi] = bootstrapDiff(lv, lh);
    console.log(`GitHub's published document imported in ${round(importMs / 1000, 2)} s (${imported.report.operations} operations → ${imported.report.actions} actions)`);
    console.log(`covered calls, alternated call by call (${CALLS} each, after ${WARMUP} warm-up pairs)`);
    console.log(`                                   p50 ms   p95 ms   p99 ms`);
    console.log(`hand-written (widgets get_item)   ${String(H.p50).padStart(7)}  ${String(H.p95).padStart(7)}  ${String(H.p99).padStart(7)}`);
    console.log(`imported (GitHub repos/get)       ${String(V.p50).padStart(7)}  ${String(V.p95).padStart(7)}  ${String(V.p99).padStart(7)}`);
    console.log(`p50 imported − hand-written: ${round(median(lv) - median(lh), 2)} ms (95 % bootstrap interval ${round(lo, 2)} … ${round(hi, 2)} ms); ratio ${round(median(lv) / median(lh), 3)}`);
  } finally {
    await target?.stop().catch(() => undefined);
    upstream.closeAllConnections();
    upstream.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
