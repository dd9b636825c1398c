// npm run chaos [-- --trials N] — crash safety under SIGKILL (issue 11, item 5).
// Each trial raises approvals against a loopback upstream, allows them (half replay on allow,
// half are resumed by their agent), and at a random moment SIGKILLs one of: the whole gateway
// (process and children), the worker role, the API role, the Temporal child, the PostgreSQL
// child; restarts what it killed (children: the gateway's own supervisor does) and waits. It
// counts approvals raised, resolved, lost (no final state 60 s after recovery), duplicated (more
// than one upstream hit for one execution), outcome_unknown, and the time to recover. Exits 1
// if anything was lost or duplicated. Loopback only; bounded by --trials and --max-minutes.
//
// Two deployments run side by side: an embedded one (`serve`, PostgreSQL and Temporal as its
// children) for the gateway / Temporal / PostgreSQL kills, and a split one (`serve --role api` and
// `serve --role worker` on a PostgreSQL and Temporal this script runs) for the role kills.
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger } from '../server/logger.ts';
import { startEmbeddedPostgres } from '../server/embedded/embedded-postgres.ts';
import { freePort, isAlive } from '../server/embedded/processes.ts';
import { resolveTemporalCli } from '../server/embedded/temporal-cli.ts';
import { startTemporalDevServer } from '../server/embedded/temporal-dev-server.ts';
import { apiClient, childPid, gatewayEnv, killHard, setUpTenant, startServe, stopGently, type Api, type Tenant } from '../test/support/gateway-process.ts';
import type { CliProcess } from '../test/support/processes.ts';
import { startUpstream, type RecordedRequest } from '../test/support/upstream.ts';

const { values: args } = parseArgs({
  options: {
    trials: { type: 'string', default: '100' },
    approvals: { type: 'string', default: '4' },
    'max-minutes': { type: 'string', default: '120' },
    seed: { type: 'string' },
    /** Only these kinds of kill (comma-separated), e.g. to reproduce one. */
    kinds: { type: 'string' },
  },
});
const TRIALS = Number(args.trials);
const PER_TRIAL = Math.max(2, Number(args.approvals));
const DEADLINE = Date.now() + Number(args['max-minutes']) * 60_000;
const LOST_AFTER_MS = 60_000;
const ALL_KINDS = ['gateway', 'worker', 'api', 'temporal', 'postgres'] as const;
type Kind = (typeof ALL_KINDS)[number];
const KINDS = args.kinds ? ALL_KINDS.filter((k) => args.kinds!.split(',').includes(k)) : ALL_KINDS;

// A small seeded PRNG: a run can be repeated with --seed.
let state = Number(args.seed ?? Date.now() % 2 ** 31) >>> 0;
const seed = state;
const random = () => {
  state = (state * 1664525 + 1013904223) >>> 0;
  return state / 2 ** 32;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FINAL = new Set(['executed', 'failed', 'cancelled', 'expired']);

interface Deployment {
  name: string;
  base: string;
  api: Api;
  tenant: Tenant;
}

interface TrialResult {
  trial: number;
  kind: Kind;
  raised: number;
  resolved: number;
  lost: number;
  duplicated: number;
  outcomeUnknown: number;
  recoverMs: number;
}

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  await chmod(dir, 0o755); // the embedded PostgreSQL runs as its own OS user
  return dir;
}

async function main() {
  const logger = createLogger('warn');
  const cliPath = await resolveTemporalCli({});
  const dirs: string[] = [];
  const stops: Array<() => Promise<void>> = [];

  // The upstream: answers after a random pause (so kills land mid-request), records every hit.
  const up = await startUpstream();
  up.handle((req: RecordedRequest, res: http.ServerResponse) => {
    setTimeout(() => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
    }, Math.floor(random() * 400));
  });
  const hitsFor = (name: string) => up.requests.filter((r) => r.body.includes(`"${name}"`)).length;

  // Embedded: one `serve` owning its PostgreSQL and Temporal children.
  const eDir = await tempDir('gateway-chaos-e-');
  dirs.push(eDir);
  const ePort = await freePort();
  const eEnv = gatewayEnv(ePort, { DATA_DIR: eDir, TEMPORAL_PORT: String(await freePort()), TEMPORAL_UI_PORT: String(await freePort()), TEMPORAL_CLI_PATH: cliPath });
  let eProc: CliProcess | undefined = await startServe(eEnv);
  const ePassword = (await readFile(path.join(eDir, 'postgres.password'), 'utf8')).trim();
  const ePgPort = Number.parseInt((await readFile(path.join(eDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[3]!.trim(), 10);
  const embedded: Deployment = {
    name: 'embedded',
    base: eEnv.PUBLIC_URL!,
    api: apiClient(eEnv.PUBLIC_URL!),
    tenant: await setUpTenant(eEnv.PUBLIC_URL!, eEnv, `postgres://gateway:${encodeURIComponent(ePassword)}@127.0.0.1:${ePgPort}/gateway`, up.url),
  };
  stops.push(async () => stopGently(eProc));

  // Split: API and worker processes on a PostgreSQL and Temporal run here.
  const sDir = await tempDir('gateway-chaos-s-');
  dirs.push(sDir);
  const pg = await startEmbeddedPostgres({ dataDir: sDir, logger, database: 'chaos' });
  stops.push(pg.stop);
  const temporal = await startTemporalDevServer({ cliPath, dataDir: sDir, namespace: 'default', logger, pidName: 'temporal-chaos' });
  stops.push(temporal.stop);
  const apiPort = await freePort();
  const sEnv = gatewayEnv(apiPort, { DATABASE_URL: pg.url, TEMPORAL_ADDRESS: temporal.address });
  const workerEnv = { ...sEnv, PORT: String(await freePort()) };
  const workerUrl = `http://127.0.0.1:${workerEnv.PORT}`;
  let apiProc: CliProcess | undefined = await startServe(sEnv, 'api');
  let workerProc: CliProcess | undefined = await startServe(workerEnv, 'worker', workerUrl);
  stops.push(async () => stopGently(apiProc), async () => stopGently(workerProc));
  const split: Deployment = { name: 'split', base: sEnv.PUBLIC_URL!, api: apiClient(sEnv.PUBLIC_URL!), tenant: await setUpTenant(sEnv.PUBLIC_URL!, sEnv, pg.url, up.url) };

  const ready = async (url: string) => {
    try {
      return (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3_000) })).status === 200;
    } catch {
      return false;
    }
  };

  /** SIGKILLs the target; returns once what was killed is back (restarted here or by the gateway). */
  async function killAndRecover(kind: Kind): Promise<number> {
    const killedAt = performance.now();
    switch (kind) {
      case 'gateway': {
        // The whole gateway: the process and both of its children, all at once.
        const children = [await childPid(eDir, 'postgres'), await childPid(eDir, 'temporal')];
        eProc!.child.kill('SIGKILL');
        for (const pid of children) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
        await eProc!.exited;
        eProc = await startServe(eEnv);
        break;
      }
      case 'worker':
        await killHard(workerProc);
        workerProc = await startServe(workerEnv, 'worker', workerUrl);
        break;
      case 'api':
        await killHard(apiProc);
        apiProc = await startServe(sEnv, 'api');
        break;
      case 'temporal':
      case 'postgres': {
        const pid = await childPid(eDir, kind);
        process.kill(pid, 'SIGKILL');
        // The gateway's supervisor restarts it: wait for a new pid and a ready gateway.
        for (;;) {
          await sleep(100);
          const now = await childPid(eDir, kind).catch(() => pid);
          if (now !== pid && isAlive(now) && (await ready(embedded.base))) break;
          if (performance.now() - killedAt > 120_000) throw new Error(`${kind} child not restarted within 120 s`);
        }
        break;
      }
    }
    while (!(await ready(kind === 'worker' ? workerUrl : kind === 'api' ? split.base : embedded.base))) await sleep(100);
    return Math.round(performance.now() - killedAt);
  }

  /** Retries an API call through outages (no answer, 500, 503, 504); any other answer is final (502 is outcome_unknown). */
  async function persist<T>(fn: () => Promise<T & { status: number }>, untilMs: number): Promise<(T & { status: number }) | null> {
    while (Date.now() < untilMs) {
      try {
        const r = await fn();
        if (![500, 503, 504].includes(r.status)) return r;
      } catch {
        /* connection refused or reset while a process is down */
      }
      await sleep(250);
    }
    return null;
  }

  async function trial(n: number, kind: Kind): Promise<TrialResult> {
    const d = kind === 'worker' || kind === 'api' ? split : embedded;
    const { api, tenant } = d;
    const names = Array.from({ length: PER_TRIAL }, (_, i) => `chaos-${seed}-${n}-${i}`);
    const agentOf = (i: number) => (i % 2 === 0 ? tenant.auto : tenant.manual);
    const raised: string[] = [];
    for (const [i, name] of names.entries()) {
      const r = await persist(() => api(agentOf(i), 'POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name } }), Date.now() + 120_000);
      if (r?.body?.status !== 'pending_approval') throw new Error(`trial ${n}: could not raise an approval: ${JSON.stringify(r?.body)}`);
      raised.push(r.body.approval_id);
    }
    // Allow all, resume the manual ones, and kill somewhere in the middle of it.
    const drive = async (untilMs: number) => {
      await Promise.all(
        raised.map(async (id, i) => {
          await persist(() => api(tenant.ownerToken, 'POST', `/v1/approvals/${id}/resolve`, { decision: 'allow' }), untilMs);
          if (agentOf(i) !== tenant.manual) return;
          // As an agent would: a 409 while the approval still shows allowed and not started
          // (its decision is being recorded again after a crash) means "resume again shortly".
          for (;;) {
            const r = await persist(() => api(tenant.manual, 'POST', '/v1/actions/call', { approval_id: id }), untilMs);
            if (r?.status !== 409 || Date.now() > untilMs) return;
            const view = await api(tenant.ownerToken, 'GET', `/v1/approvals/${id}`).catch(() => null);
            if (view?.body?.execution?.status !== 'pending') return;
            await sleep(1_000);
          }
        }),
      );
    };
    const firstDrive = drive(Date.now() + 5_000).catch(() => undefined);
    await sleep(Math.floor(random() * 1_500));
    const recoverMs = await killAndRecover(kind);
    await firstDrive;
    // After recovery: whatever the kill interrupted is asked again (a 4xx such as "already
    // allowed" or "already executing" is fine); then every execution must reach a final state.
    const lostAt = Date.now() + LOST_AFTER_MS;
    const driving = drive(lostAt);
    const finals = await Promise.all(
      raised.map(async (id) => {
        while (Date.now() < lostAt) {
          const r = await api(tenant.ownerToken, 'GET', `/v1/approvals/${id}`).catch(() => null);
          if (r?.status === 200 && FINAL.has(r.body.execution?.status)) return r.body.execution;
          await sleep(250);
        }
        return null;
      }),
    );
    await Promise.race([driving, sleep(5_000)]);
    await sleep(500); // stragglers at the upstream
    const lost = finals.filter((f) => f === null).length;
    const duplicated = names.filter((name) => hitsFor(name) > 1).length;
    const outcomeUnknown = finals.filter((f) => f?.error?.code === 'outcome_unknown').length;
    for (const [i, f] of finals.entries()) {
      if (f === null) {
        const view = await api(tenant.ownerToken, 'GET', `/v1/approvals/${raised[i]}`).catch(() => null);
        console.log(`  trial ${n}: approval ${raised[i]} has no final state: ${JSON.stringify({ status: view?.body?.status, execution: view?.body?.execution })}`);
      }
      else if (f.status === 'executed' && hitsFor(names[i]!) !== 1) console.log(`  trial ${n}: approval ${raised[i]} executed with ${hitsFor(names[i]!)} upstream hits`);
    }
    return { trial: n, kind, raised: raised.length, resolved: finals.length - lost, lost, duplicated, outcomeUnknown, recoverMs };
  }

  const results: TrialResult[] = [];
  console.log(`chaos: ${TRIALS} trials, ${PER_TRIAL} approvals each, seed ${seed}`);
  console.log('trial  killed      raised resolved lost dup unknown recover_ms');
  try {
    for (let n = 1; n <= TRIALS; n++) {
      if (Date.now() > DEADLINE) {
        console.log(`stopping after ${n - 1} trials: --max-minutes reached`);
        break;
      }
      const kind = KINDS[(n - 1) % KINDS.length]!;
      const r = await trial(n, kind);
      results.push(r);
      console.log(
        `${String(n).padStart(5)}  ${kind.padEnd(10)} ${String(r.raised).padStart(6)} ${String(r.resolved).padStart(8)} ${String(r.lost).padStart(4)} ${String(r.duplicated).padStart(3)} ${String(r.outcomeUnknown).padStart(7)} ${String(r.recoverMs).padStart(10)}`,
      );
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch((err: unknown) => console.error('stop:', (err as Error).message));
    await up.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }

  const sum = (f: (r: TrialResult) => number) => results.reduce((a, r) => a + f(r), 0);
  const recover = results.map((r) => r.recoverMs).sort((a, b) => a - b);
  const pct = (p: number) => recover[Math.min(recover.length - 1, Math.floor((p / 100) * recover.length))] ?? 0;
  console.log('');
  console.log(`totals: trials ${results.length}, approvals raised ${sum((r) => r.raised)}, resolved ${sum((r) => r.resolved)}, lost ${sum((r) => r.lost)}, duplicated ${sum((r) => r.duplicated)}, outcome_unknown ${sum((r) => r.outcomeUnknown)}`);
  console.log(`time to recover (ms): p50 ${pct(50)}, p95 ${pct(95)}, max ${recover.at(-1) ?? 0}`);
  for (const kind of KINDS) {
    const of = results.filter((r) => r.kind === kind);
    if (of.length) console.log(`  ${kind.padEnd(9)} trials ${of.length}, lost ${of.reduce((a, r) => a + r.lost, 0)}, duplicated ${of.reduce((a, r) => a + r.duplicated, 0)}, outcome_unknown ${of.reduce((a, r) => a + r.outcomeUnknown, 0)}`);
  }
  const failed = sum((r) => r.lost) > 0 || sum((r) => r.duplicated) > 0;
  console.log(failed ? 'FAIL: approvals were lost or duplicated' : 'OK: nothing lost, nothing duplicated');
  process.exitCode = failed ? 1 : 0;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 2;
});
