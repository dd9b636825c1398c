// npm run bench:profile — only covered calls, through the REST API to a loopback upstream, with
// the gateway's V8 CPU profile (written to BENCH_PROFILE_DIR, default a temporary folder) summed
// up at the end over the measured calls (start-up and warm-up left out): where the gateway's own
// CPU goes per covered call, without the floor and the least gateway that bench:call runs on the
// same worker. Prints CPU ms per call from /proc too. `--least <workflow>` then runs the same
// calls through the least gateway (bench/support/least-call-gateway.ts: `least`, `operator` or
// `call`, our callWorkflow) on the same PostgreSQL, Temporal and upstream, profiled the same way:
// the two profiles side by side say where the gateway spends what the least one does not.
//   npm run bench:profile [-- --calls 1000] [--concurrency 4] [--top 30] [--bare] [--least call]
//   BENCH_GATEWAY_NODE_OPTIONS='--import ./hook.mjs' npm run bench:profile   # e.g. a counting hook in the gateway
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { benchAgent } from './support/bench-agent.ts';
import { createLeastDatabase, startLeastGateway, type LeastGatewayOptions } from './support/least-call-process.ts';
import { runConcurrent } from './support/load.ts';
import { processCpuMs, threadCpuMs } from './support/proc.ts';
import { renderSummary, summariseProfile, type CpuProfile, type ProfileWindow } from './support/profile-summary.ts';
import { startEmbeddedTarget } from './targets.ts';

const { values: args } = parseArgs({
  options: { calls: { type: 'string', default: '1000' }, concurrency: { type: 'string', default: '1' }, top: { type: 'string', default: '30' }, bare: { type: 'boolean', default: false }, least: { type: 'string' } },
  strict: true,
});
const CALLS = Number(args.calls);
const CONCURRENCY = Number(args.concurrency);
const WARMUP = 100;
const LEAST_WORKFLOWS = ['least', 'operator', 'call'] as const;
if (args.least !== undefined && !(LEAST_WORKFLOWS as readonly string[]).includes(args.least)) throw new Error(`--least must be one of ${LEAST_WORKFLOWS.join(', ')}`);
// --bare: no profiler (it costs CPU of its own), only the CPU per call from /proc.
if (args.bare) delete process.env.BENCH_PROFILE_DIR;
else process.env.BENCH_PROFILE_DIR ??= await mkdtemp(path.join(os.tmpdir(), 'gateway-profile-'));
const dir = process.env.BENCH_PROFILE_DIR;

// Each profile is summed over its process's measured calls only (V8's samples are stamped with
// the same monotonic clock as process.hrtime).
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
/** The measured calls' window of each profiled process, by pid. */
const windows = new Map<number, ProfileWindow>();

/** Warms up with `call`, then runs CALLS of it: calls/s and the process's CPU ms per call. */
async function measure(name: string, pid: number, call: () => Promise<void>): Promise<void> {
  for (let i = 0; i < WARMUP; i++) await call();
  const fromUs = monotonicUs();
  const cpu0 = processCpuMs(pid);
  const threads0 = threadCpuMs(pid);
  const t0 = performance.now();
  await runConcurrent({ total: CALLS, concurrency: CONCURRENCY }, call);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = processCpuMs(pid) - cpu0;
  const threads = [...threadCpuMs(pid)].map(([thread, ms]) => [thread, (ms - (threads0.get(thread) ?? 0)) / CALLS] as const).filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1]);
  windows.set(pid, { fromUs, toUs: monotonicUs() });
  process.stdout.write(`${name}: ${CALLS} covered calls at concurrency ${CONCURRENCY}: ${(CALLS / seconds).toFixed(1)} calls/s, CPU ${(cpu / CALLS).toFixed(2)} ms per call\n`);
  process.stdout.write(`  by thread (ms per call): ${threads.map(([thread, ms]) => `${thread} ${ms.toFixed(2)}`).join(', ')}\n`);
}

const target = await startEmbeddedTarget(process.env.BENCH_GATEWAY_NODE_OPTIONS ? { env: { NODE_OPTIONS: process.env.BENCH_GATEWAY_NODE_OPTIONS } } : {});
try {
  const agent = await benchAgent(target);
  try {
    let n = 0;
    const call = async () => {
      const out = (await agent.json('POST', '/v1/actions/call', agent.key, { service: 'widgets', action: 'get_item', params: { id: `a${n++}` } })) as { status: string };
      if (out.status !== 'called') throw new Error(`covered call answered ${JSON.stringify(out)}`);
    };
    const gateway = target.processes.find((p) => p.name === 'gateway')!;
    await measure('gateway', gateway.pid, call);
    if (args.least !== undefined) {
      const least = await startLeastGateway({
        name: 'least',
        workflow: args.least as LeastGatewayOptions['workflow'],
        taskQueue: 'bench-profile-least',
        upstreamUrl: agent.upstreamUrl,
        databaseUrl: await createLeastDatabase(target.databaseUrl),
        temporalAddress: target.temporalAddress,
      });
      try {
        await measure(`least gateway (${args.least})`, least.pid, least.call);
      } finally {
        await least.stop();
      }
    }
  } finally {
    await agent.close();
  }
} finally {
  await target.stop();
}
// node --cpu-prof names each file CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile.
for (const file of dir === undefined ? [] : (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile')).sort()) {
  const window = windows.get(Number(file.split('.')[3]));
  if (!window) continue;
  const profile = JSON.parse(await readFile(path.join(dir!, file), 'utf8')) as CpuProfile;
  process.stdout.write(`== ${file}\n${renderSummary(summariseProfile(profile, path.resolve(import.meta.dirname, '..'), Number(args.top), window), CALLS)}\n`);
}
