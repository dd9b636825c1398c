// npm run bench:profile — only covered calls, through the REST API to a loopback upstream, with
// the gateway's V8 CPU profile (written to BENCH_PROFILE_DIR, default a temporary folder) summed
// up at the end: where the gateway's own CPU goes per covered call, without the floor and the
// least gateway that bench:call runs on the same worker. Prints CPU ms per call from /proc too.
//   npm run bench:profile [-- --calls 1000] [--concurrency 4] [--top 30] [--bare]
//   BENCH_GATEWAY_NODE_OPTIONS='--import ./hook.mjs' npm run bench:profile   # e.g. a counting hook in the gateway
import http from 'node:http';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setUpCoveredAgent } from './support/covered-agent.ts';
import { runConcurrent } from './support/load.ts';
import { processCpuMs } from './support/proc.ts';
import { renderSummary, summariseProfile, type CpuProfile } from './support/profile-summary.ts';
import { startEmbeddedTarget } from './targets.ts';

const { values: args } = parseArgs({ options: { calls: { type: 'string', default: '1000' }, concurrency: { type: 'string', default: '1' }, top: { type: 'string', default: '30' }, bare: { type: 'boolean', default: false } }, strict: true });
const CALLS = Number(args.calls);
const CONCURRENCY = Number(args.concurrency);
// --bare: no profiler (it costs CPU of its own), only the CPU per call from /proc.
if (args.bare) delete process.env.BENCH_PROFILE_DIR;
else process.env.BENCH_PROFILE_DIR ??= await mkdtemp(path.join(os.tmpdir(), 'gateway-profile-'));
const dir = process.env.BENCH_PROFILE_DIR;

const upstream = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true,"item":{"id":"a1","name":"bench"}}');
  });
});
await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
const target = await startEmbeddedTarget(process.env.BENCH_GATEWAY_NODE_OPTIONS ? { env: { NODE_OPTIONS: process.env.BENCH_GATEWAY_NODE_OPTIONS } } : {});
try {
  const base = target.apiUrls[0]!;
  const json = async (method: string, p: string, token: string | null, body?: unknown) => {
    const res = await fetch(base + p, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const parsed = (await res.json()) as any;
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(parsed)}`);
    return parsed;
  };
  const { key } = await setUpCoveredAgent(json, target.admin, upstreamUrl);
  let n = 0;
  const call = async () => {
    const res = await fetch(`${base}/v1/actions/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ service: 'widgets', action: 'get_item', params: { id: `a${n++}` } }),
    });
    const out = (await res.json()) as { status: string };
    if (out.status !== 'called') throw new Error(`covered call answered ${JSON.stringify(out)}`);
  };
  for (let i = 0; i < 100; i++) await call();
  const gateway = target.processes.find((p) => p.name === 'gateway')!;
  const cpu0 = processCpuMs(gateway.pid);
  const t0 = performance.now();
  await runConcurrent({ total: CALLS, concurrency: CONCURRENCY }, call);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = processCpuMs(gateway.pid) - cpu0;
  process.stdout.write(`${CALLS} covered calls at concurrency ${CONCURRENCY}: ${(CALLS / seconds).toFixed(1)} calls/s, gateway CPU ${(cpu / CALLS).toFixed(2)} ms per call\n`);
} finally {
  await target.stop();
  upstream.close();
}
for (const file of dir === undefined ? [] : (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile')).sort()) {
  const profile = JSON.parse(await readFile(path.join(dir!, file), 'utf8')) as CpuProfile;
  process.stdout.write(`== ${file}\n${renderSummary(summariseProfile(profile, path.resolve(import.meta.dirname, '..'), Number(args.top)))}\n`);
}
