// npm run bench:profile — only covered calls, through the REST API to a loopback upstream, with
// the gateway's V8 CPU profile (written to BENCH_PROFILE_DIR, default a temporary folder) summed
// up at the end: where the gateway's own CPU goes per covered call, without the floor and the
// least gateway that bench:call runs on the same worker. Prints CPU ms per call from /proc too.
//   npm run bench:profile [-- --calls 1000] [--concurrency 4] [--top 30] [--bare]
//   BENCH_GATEWAY_NODE_OPTIONS='--import ./hook.mjs' npm run bench:profile   # e.g. a counting hook in the gateway
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { benchAgent } from './support/bench-agent.ts';
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

const target = await startEmbeddedTarget(process.env.BENCH_GATEWAY_NODE_OPTIONS ? { env: { NODE_OPTIONS: process.env.BENCH_GATEWAY_NODE_OPTIONS } } : {});
try {
  const agent = await benchAgent(target);
  try {
    let n = 0;
    const call = async () => {
      const out = (await agent.json('POST', '/v1/actions/call', agent.key, { service: 'widgets', action: 'get_item', params: { id: `a${n++}` } })) as { status: string };
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
    await agent.close();
  }
} finally {
  await target.stop();
}
for (const file of dir === undefined ? [] : (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile')).sort()) {
  const profile = JSON.parse(await readFile(path.join(dir!, file), 'utf8')) as CpuProfile;
  process.stdout.write(`== ${file}\n${renderSummary(summariseProfile(profile, path.resolve(import.meta.dirname, '..'), Number(args.top)))}\n`);
}
