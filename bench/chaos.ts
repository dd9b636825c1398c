// npm run chaos [-- --trials N] — crash safety under SIGKILL, on every path a call can take
// (issues 11 and 24). Each trial drives, against a loopback upstream whose answers take a random
// while, every path at once:
//   covered_get   a GET covered by the agent's rules (idempotent: a resend after a crash is allowed)
//   covered_post  a POST covered by the agent's rules (sent at most once)
//   covered_nokey a covered POST without an Idempotency-Key (role all starts it eagerly and answers
//                 in-process): made once, never retried; judged by the call row its description names
//   approved      a POST that raises an approval, replayed on allow (auto_call_on_approve)
//   resumed       a POST that raises an approval, resumed by its agent with approval_id
//   deduplicated  the same POST twice while pending: the second joins the first's approval
//   mcp_covered   a covered call of a write tool of a connected MCP server (runtime mcp, issue 43),
//                 keyed like covered_post; the MCP server counts each tool call it receives
// and at a random moment SIGKILLs one of: the whole gateway (process and children), the worker
// role, the API role, the Temporal child, the PostgreSQL child; restarts what it killed (children:
// the gateway's own supervisor does) and waits. Clients behave as careful ones do: covered calls
// carry an Idempotency-Key and are retried with it through the outage; approvals are allowed
// (again) and resumed (again) until they answer. Per path and per kill target it counts calls,
// lost (no final state 60 s after recovery), duplicated (a non-idempotent request that reached the
// upstream more than once), outcome_unknown, disagree (a covered call whose row, GET
// /v1/calls/{id}, keyed retry, audit rows and upstream hits do not tell the same story), and the
// time to recover. Exits 1 if anything was lost, duplicated or disagreed. Loopback only; bounded
// by --trials and --max-minutes.
//
// Two deployments run side by side: an embedded one (`serve`, PostgreSQL and Temporal as its
// children) for the gateway / Temporal / PostgreSQL kills, and a split one (`serve --role api` and
// `serve --role worker` on a PostgreSQL and Temporal this script runs) for the role kills and for
// `split_temporal` / `split_postgres`: the split deployment's Temporal or PostgreSQL, SIGKILLed
// and restarted on the same data and port by this script's own supervisor.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { keyedCallId } from '../server/calls/call-answers.ts';
import { createLogger } from '../server/logger.ts';
import { startEmbeddedPostgres } from '../server/embedded/embedded-postgres.ts';
import { freePort, isAlive } from '../server/embedded/processes.ts';
import { resolveTemporalCli } from '../server/embedded/temporal-cli.ts';
import { startTemporalDevServer } from '../server/embedded/temporal-dev-server.ts';
import { apiClient, childPid, embeddedDatabaseUrl, gatewayEnv, killHard, killWholeGateway, setUpTenant, startServe, stopGently, type Api, type ApiResponse, type Tenant } from '../test/support/gateway-process.ts';
import type { CliProcess } from '../test/support/processes.ts';
import { startCountingToolServer } from '../test/support/mcp-upstreams.ts';
import { startUpstream, type RecordedRequest } from '../test/support/upstream.ts';

const { values: args } = parseArgs({
  options: {
    trials: { type: 'string', default: '100' },
    /** Calls per path per trial. */
    calls: { type: 'string', default: '2' },
    'max-minutes': { type: 'string', default: '120' },
    seed: { type: 'string' },
    /** Only these kinds of kill (comma-separated), e.g. to reproduce one. */
    kinds: { type: 'string' },
    /** Kill this long after the calls are made (default: a random moment within 1.5 s), e.g. 150 to catch starts in flight. */
    'kill-after-ms': { type: 'string' },
  },
});
const TRIALS = Number(args.trials);
const PER_PATH = Math.max(1, Number(args.calls));
const DEADLINE = Date.now() + Number(args['max-minutes']) * 60_000;
const LOST_AFTER_MS = 60_000;
const ALL_KINDS = ['gateway', 'worker', 'api', 'temporal', 'postgres', 'split_temporal', 'split_postgres'] as const;
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
const PATHS = ['covered_get', 'covered_post', 'covered_nokey', 'approved', 'resumed', 'deduplicated', 'mcp_covered'] as const;
type PathName = (typeof PATHS)[number];

interface Deployment {
  name: string;
  base: string;
  /** The gateway's database as it is now (the embedded PostgreSQL takes a new port when restarted). */
  databaseUrl: () => Promise<string>;
  api: Api;
  /** `covered` (identity `coveredId`) has allow rules for the service; `auto` and `manual` raise approvals. */
  tenant: Tenant & { covered: string; coveredId: string };
}

/** What one path did in one trial. */
interface PathResult {
  calls: number;
  lost: number;
  duplicated: number;
  outcomeUnknown: number;
  /** Idempotent requests sent again after a crash (allowed: GET, or keyed). */
  resent: number;
  /** Covered calls whose row, GET, keyed retry, audit and upstream hits disagree. */
  disagree: number;
}

/** A covered call's final state as the caller saw it: the GET, and the keyed retry's answer (none without a key). */
interface CoveredFinal {
  status: string;
  error?: { code: string } | undefined;
  callId: string;
  view: { status: string; result?: unknown; error?: { code: string } };
  retry: ApiResponse | null;
}

const isCoveredFinal = (f: unknown): f is CoveredFinal => typeof (f as Partial<CoveredFinal> | null)?.callId === 'string';

/** The call's row and its audit rows, read from the gateway's database. */
async function callRecord(databaseUrl: string, callId: string) {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const row = await db.query<{ status: string; result: unknown; error: { code: string } | null }>('SELECT status, result, error FROM calls WHERE id = $1', [callId]);
    const audit = await db.query<{ event: string; decision: string | null }>('SELECT event, decision FROM audit_log WHERE call_id = $1 ORDER BY id', [callId]);
    return { row: row.rows[0] ?? null, audit: audit.rows };
  } finally {
    await db.end();
  }
}

/**
 * Why a covered call's records disagree (null: they agree). The row and GET say the same status;
 * the keyed retry answers that state (`called` with the result, or the row's error code); the
 * audit has exactly one final row, of that outcome; a call that reached the upstream is `called`
 * or `outcome_unknown`, never "not sent", and a `called` one reached it.
 */
function disagreement(f: CoveredFinal, rec: Awaited<ReturnType<typeof callRecord>>, hits: number): string | null {
  const { row, audit } = rec;
  if (!row) return 'no call row';
  if (row.status !== f.view.status) return `row ${row.status}, GET ${f.view.status}`;
  if (f.retry) {
    const answered = f.retry.body?.status ?? `error ${f.retry.body?.error?.code}`;
    const expected = row.status === 'called' ? 'called' : `error ${row.error?.code}`;
    if (answered !== expected) return `row ${row.status}${row.error ? ` (${row.error.code})` : ''}, keyed retry ${f.retry.status} ${answered}`;
  }
  const finals = audit.filter((a) => a.event === 'call.called' || a.event === 'call.failed');
  const expectedEvent = row.status === 'called' ? 'call.called' : 'call.failed';
  if (finals.length !== 1 || finals[0]!.event !== expectedEvent) return `row ${row.status}, audit ${finals.map((a) => `${a.event}/${a.decision}`).join(', ') || 'none'}`;
  if (row.status === 'called' && hits === 0) return 'called, but the upstream saw no request';
  if (row.status === 'failed' && hits > 0 && row.error?.code !== 'outcome_unknown') return `failed ${row.error?.code} ("not sent"), but the upstream saw ${hits} request(s)`;
  return null;
}

interface TrialResult {
  trial: number;
  kind: Kind;
  paths: Record<PathName, PathResult>;
  recoverMs: number;
}

/** The MCP server connected in each deployment (the `mcp_covered` path). */
const MCP_SERVICE = 'mcpwidgets';

/** The tenant of a deployment, plus an agent whose rules cover every action of both services. */
async function chaosTenant(base: string, env: Record<string, string>, databaseUrl: string, upstreamUrl: string, mcpUrl: string): Promise<Deployment['tenant']> {
  const api = apiClient(base);
  const tenant = await setUpTenant(base, env, databaseUrl, upstreamUrl);
  const connected = await api(tenant.adminToken, 'POST', '/v1/mcp-servers', { name: MCP_SERVICE, url: mcpUrl });
  if (connected.status !== 201) throw new Error(`mcp server: ${connected.status} ${JSON.stringify(connected.body)}`);
  const made = await api(tenant.ownerToken, 'POST', '/v1/identities/agents', { name: 'covered' });
  for (const pattern of ['widgets:*:*', `${MCP_SERVICE}:*:*`]) {
    const rule = await api(tenant.ownerToken, 'POST', `/v1/identities/${made.body.identity.id}/rules`, { effect: 'allow', pattern });
    if (rule.status !== 201) throw new Error(`rule: ${rule.status} ${JSON.stringify(rule.body)}`);
  }
  // Every trial raises approvals; none may be superseded by the per-agent cap meanwhile.
  const cap = await api(tenant.adminToken, 'PATCH', '/v1/org/settings', { max_pending_per_agent: 1000 });
  if (cap.status !== 200) throw new Error(`settings: ${cap.status} ${JSON.stringify(cap.body)}`);
  return { ...tenant, covered: made.body.key.token, coveredId: made.body.identity.id };
}

/** The id of the call a description names (null: no such call), read from the gateway's database. */
async function callIdByDescription(databaseUrl: string, description: string): Promise<string | null> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const r = await db.query<{ id: string }>('SELECT id FROM calls WHERE description = $1', [description]);
    return r.rows[0]?.id ?? null;
  } finally {
    await db.end();
  }
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
  // The MCP server of the mcp_covered path: the same random pause, each tool call counted by name.
  const mcp = await startCountingToolServer(() => Math.floor(random() * 400));
  // Names are unique per path: a name's hits are its HTTP requests or its MCP tool calls.
  const hitsFor = (name: string) => up.requests.filter((r) => r.body.includes(`"${name}"`) || r.url === `/items/${name}`).length + mcp.hits(name);

  // Embedded: one `serve` owning its PostgreSQL and Temporal children.
  const eDir = await tempDir('gateway-chaos-e-');
  dirs.push(eDir);
  const ePort = await freePort();
  const eEnv = gatewayEnv(ePort, { DATA_DIR: eDir, TEMPORAL_PORT: String(await freePort()), TEMPORAL_UI_PORT: String(await freePort()), TEMPORAL_CLI_PATH: cliPath });
  let eProc: CliProcess | undefined = await startServe(eEnv);
  const embedded: Deployment = {
    name: 'embedded',
    base: eEnv.PUBLIC_URL!,
    databaseUrl: () => embeddedDatabaseUrl(eDir),
    api: apiClient(eEnv.PUBLIC_URL!),
    tenant: await chaosTenant(eEnv.PUBLIC_URL!, eEnv, await embeddedDatabaseUrl(eDir), up.url, mcp.url),
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
  const split: Deployment = { name: 'split', base: sEnv.PUBLIC_URL!, databaseUrl: async () => pg.url, api: apiClient(sEnv.PUBLIC_URL!), tenant: await chaosTenant(sEnv.PUBLIC_URL!, sEnv, pg.url, up.url, mcp.url) };

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
        await killWholeGateway(eProc!, eDir);
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
      case 'split_temporal':
      case 'split_postgres': {
        const child = kind === 'split_temporal' ? temporal : pg;
        const pid = child.pid!;
        process.kill(pid, 'SIGKILL');
        // Restarted by the supervisor this script runs them under: a new pid, then both roles ready.
        while (child.pid === pid || !isAlive(child.pid!) || !(await ready(split.base))) {
          if (performance.now() - killedAt > 120_000) throw new Error(`${kind}: not back within 120 s (pid ${pid} → ${child.pid})`);
          await sleep(100);
        }
        break;
      }
      case 'temporal':
      case 'postgres': {
        const pid = await childPid(eDir, kind);
        process.kill(pid, 'SIGKILL');
        // The gateway's supervisor restarts it: wait for a new pid and a ready gateway.
        for (;;) {
          await sleep(100);
          const now = await childPid(eDir, kind).catch(() => pid);
          if (now !== pid && isAlive(now) && (await ready(embedded.base))) break;
          if (performance.now() - killedAt > 120_000) {
            const readiness = await fetch(`${embedded.base}/readyz`, { signal: AbortSignal.timeout(3_000) }).then(async (r) => `${r.status} ${await r.text()}`, (err: Error) => err.message);
            const gateway = eProc ? `gateway exit code ${eProc.child.exitCode}; its last output:\n${eProc.output().slice(-3000)}` : 'no gateway process';
            throw new Error(`${kind} child not restarted within 120 s (pid ${pid} → ${now}, alive ${isAlive(now)}; /readyz: ${readiness}); ${gateway}`);
          }
        }
        break;
      }
    }
    const readyAt = kind === 'worker' ? [workerUrl] : kind === 'api' ? [split.base] : kind.startsWith('split_') ? [split.base, workerUrl] : [embedded.base];
    for (const url of readyAt) while (!(await ready(url))) await sleep(100);
    return Math.round(performance.now() - killedAt);
  }

  /** Retries an API call through outages (no answer, 500, 503, 504); any other answer is final (502 is outcome_unknown). */
  /** What the last attempt of `persist` got, by label (reported when a call is lost). */
  const lastSeen = new Map<string, string>();
  async function persist(fn: () => Promise<ApiResponse>, untilMs: number, label?: string): Promise<ApiResponse | null> {
    while (Date.now() < untilMs) {
      try {
        const r = await fn();
        if (label) lastSeen.set(label, `${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
        if (![500, 503, 504].includes(r.status)) return r;
      } catch (err) {
        /* connection refused or reset while a process is down */
        if (label) lastSeen.set(label, `no answer: ${(err as Error).message}`);
      }
      await sleep(250);
    }
    return null;
  }

  /** A covered call with its Idempotency-Key: the client's retries attach to the same call. */
  const keyedCall = (base: string, token: string, key: string, body: unknown): Promise<ApiResponse> =>
    fetch(`${base}/v1/actions/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(120_000),
    }).then(async (res) => ({ status: res.status, headers: res.headers, body: await res.json().catch(() => null) }));

  async function trial(n: number, kind: Kind): Promise<TrialResult> {
    const d = kind === 'worker' || kind === 'api' || kind.startsWith('split_') ? split : embedded;
    const { api, tenant } = d;
    const nameOf = (path: PathName, i: number) => `chaos-${seed}-${n}-${path}-${i}`;
    const names = (path: PathName) => Array.from({ length: PER_PATH }, (_, i) => nameOf(path, i));
    const raise = async (token: string, name: string): Promise<string> => {
      const r = await persist(() => api(token, 'POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name } }), Date.now() + 120_000);
      if (r?.body?.status !== 'pending_approval') throw new Error(`trial ${n}: could not raise an approval: ${JSON.stringify(r?.body)}`);
      return r.body.approval_id;
    };

    // Approvals first (they wait for a person, so the kill can only land on their decisions and
    // executions); the dedup pair: the same request twice from one agent, one approval.
    const approved = await Promise.all(names('approved').map((name) => raise(tenant.auto, name)));
    const resumed = await Promise.all(names('resumed').map((name) => raise(tenant.manual, name)));
    const dedup = await Promise.all(
      names('deduplicated').map(async (name) => {
        const first = await raise(tenant.auto, name);
        const second = await raise(tenant.auto, name);
        if (second !== first) throw new Error(`trial ${n}: ${name} was not deduplicated (${first} vs ${second})`);
        return first;
      }),
    );
    const approvals = [...approved, ...resumed, ...dedup];
    const manual = new Set(resumed);

    // Allow all, resume the manual ones, make the covered calls; kill somewhere in the middle.
    const decide = async (untilMs: number) => {
      await Promise.all(
        approvals.map(async (id) => {
          await persist(() => api(tenant.ownerToken, 'POST', `/v1/approvals/${id}/resolve`, { decision: 'allow' }), untilMs);
          if (!manual.has(id)) return;
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
    const coveredBody = (path: PathName, name: string) =>
      path === 'covered_get'
        ? { service: 'widgets', action: 'get_item', params: { id: name } }
        : { service: path === 'mcp_covered' ? MCP_SERVICE : 'widgets', action: 'create_item', params: { name } };
    /** A covered call until it answers (the same key each time): its final answer, or null. */
    const covered = (path: PathName, name: string, untilMs: number) =>
      persist(() => keyedCall(d.base, tenant.covered, `key-${name}`, coveredBody(path, name)), untilMs, name);
    const coveredPaths = ['covered_get', 'covered_post', 'mcp_covered'] as const;
    const firstCovered = coveredPaths.flatMap((path) => names(path).map((name) => covered(path, name, Date.now() + 5_000).catch(() => null)));
    // Without a key the client cannot retry safely: one attempt, whatever it gets.
    const firstUnkeyed = names('covered_nokey').map((name) => api(tenant.covered, 'POST', '/v1/actions/call', coveredBody('covered_post', name)).catch(() => null));
    const firstDrive = decide(Date.now() + 5_000).catch(() => undefined);
    await sleep(args['kill-after-ms'] !== undefined ? Number(args['kill-after-ms']) : Math.floor(random() * 1_500));
    const recoverMs = await killAndRecover(kind);
    await firstDrive;
    await Promise.all(firstCovered);
    const unkeyedAnswers = await Promise.all(firstUnkeyed);

    // After recovery: whatever the kill interrupted is asked again (a 4xx such as "already
    // allowed" or "already executing" is fine); then every call must reach a final state.
    const lostAt = Date.now() + LOST_AFTER_MS;
    const driving = decide(lostAt);
    const approvalFinalsP = Promise.all(
      approvals.map(async (id) => {
        let last: ApiResponse | null = null;
        while (Date.now() < lostAt) {
          last = await api(tenant.ownerToken, 'GET', `/v1/approvals/${id}`).catch(() => null);
          if (last?.status === 200 && FINAL.has(last.body.execution?.status)) return last.body.execution as { status: string; error?: { code: string } };
          await sleep(250);
        }
        // What a person would see of it, for the report.
        console.log(`  trial ${n}: approval ${id} not final: ${last ? `${last.status} status ${last.body?.status} execution ${JSON.stringify(last.body?.execution ?? null)}` : 'unreadable'}`);
        return null;
      }),
    );
    const coveredFinalsP = Promise.all(
      coveredPaths.flatMap((path) =>
        names(path).map(async (name) => {
          const r = await covered(path, name, lostAt);
          // What the caller learns: the call's state, by the id its key names (an answer that is
          // itself an error — 5xx included — still leaves a final state to read).
          const callId = r?.body?.call_id ?? r?.body?.error?.details?.call_id ?? keyedCallId(tenant.coveredId, `key-${name}`);
          const view = await api(tenant.covered, 'GET', `/v1/calls/${callId}`).catch(() => null);
          if (!view || !['called', 'failed'].includes(view.body?.status)) {
            console.log(`  trial ${n}: ${path} ${name} has no final state: answer ${r ? `${r.status} ${JSON.stringify(r.body).slice(0, 300)}` : `none (last: ${lastSeen.get(name) ?? 'nothing'})`}; call ${view ? JSON.stringify(view.body).slice(0, 300) : 'unreadable'}`);
            return null;
          }
          return { status: view.body.status as string, error: view.body.error as { code: string } | undefined, callId, view: view.body, retry: r } satisfies CoveredFinal;
        }),
      ),
    );
    // An unkeyed call is found by the id its answer named, else by its row (a call with no row
    // was refused before anything was written: nothing may have reached the upstream).
    const unkeyedFinalsP = Promise.all(
      names('covered_nokey').map(async (name, i) => {
        const answered = unkeyedAnswers[i]?.body?.call_id ?? unkeyedAnswers[i]?.body?.error?.details?.call_id;
        for (let first = true; first || Date.now() < lostAt; first = false) {
          const callId = answered ?? (await callIdByDescription(await d.databaseUrl(), `Create item "${name}"`).catch(() => undefined));
          if (callId === null) return hitsFor(name) === 0 ? { status: 'not_started' } : null;
          const view = callId ? await api(tenant.covered, 'GET', `/v1/calls/${callId}`).catch(() => null) : null;
          if (callId && view && ['called', 'failed'].includes(view.body?.status)) {
            return { status: view.body.status as string, error: view.body.error as { code: string } | undefined, callId, view: view.body, retry: null } satisfies CoveredFinal;
          }
          await sleep(250);
        }
        const seen = answered ?? (await callIdByDescription(await d.databaseUrl(), `Create item "${name}"`).catch(() => undefined));
        const view = seen ? await api(tenant.covered, 'GET', `/v1/calls/${seen}`).catch(() => null) : null;
        console.log(`  trial ${n}: covered_nokey ${name} has no final state: first answer ${JSON.stringify(unkeyedAnswers[i]?.body ?? null).slice(0, 300)}; call ${seen ?? 'not found'}: ${view ? JSON.stringify(view.body).slice(0, 300) : 'unreadable'}`);
        return null;
      }),
    );
    // Judged side by side: each gets the same 60 s after recovery (judged one after the other, a
    // slow first judgment used up the others' time and they were reported lost unread).
    const [approvalFinals, coveredFinals, unkeyedFinals] = await Promise.all([approvalFinalsP, coveredFinalsP, unkeyedFinalsP]);
    await Promise.race([driving, sleep(5_000)]);
    await sleep(500); // stragglers at the upstream

    // Every covered call with a final state: do its records agree with each other and the upstream?
    const databaseUrl = await d.databaseUrl();
    const disagreeing = new Set<string>();
    const coveredOf = (path: (typeof coveredPaths)[number]) => coveredFinals.slice(coveredPaths.indexOf(path) * PER_PATH, (coveredPaths.indexOf(path) + 1) * PER_PATH);
    for (const [path, finals] of [['covered_get', coveredOf('covered_get')], ['covered_post', coveredOf('covered_post')], ['mcp_covered', coveredOf('mcp_covered')], ['covered_nokey', unkeyedFinals]] as const) {
      for (const [i, f] of finals.entries()) {
        if (!isCoveredFinal(f)) continue; // lost, or never written (nothing to compare)
        const name = names(path)[i]!;
        const why = disagreement(f, await callRecord(databaseUrl, f.callId), hitsFor(name));
        if (why) {
          disagreeing.add(name);
          console.log(`  trial ${n}: ${path} ${name} (call ${f.callId}) disagrees: ${why}`);
        }
      }
    }

    const result = (path: PathName, finals: Array<{ status: string; error?: { code: string } } | null>, idempotent: boolean): PathResult => {
      const ns = names(path);
      const hits = ns.map(hitsFor);
      for (const [i, f] of finals.entries()) if (f === null) console.log(`  trial ${n}: ${path} ${ns[i]} has no final state`);
      return {
        disagree: ns.filter((name) => disagreeing.has(name)).length,
        calls: path === 'deduplicated' ? ns.length * 2 : ns.length,
        lost: finals.filter((f) => f === null).length,
        duplicated: idempotent ? 0 : hits.filter((h) => h > 1).length,
        outcomeUnknown: finals.filter((f) => f?.error?.code === 'outcome_unknown').length,
        resent: idempotent ? hits.filter((h) => h > 1).length : 0,
      };
    };
    const slice = (from: number, count: number) => approvalFinals.slice(from, from + count);
    const paths: Record<PathName, PathResult> = {
      covered_get: result('covered_get', coveredOf('covered_get'), true),
      covered_post: result('covered_post', coveredOf('covered_post'), false),
      mcp_covered: result('mcp_covered', coveredOf('mcp_covered'), false),
      covered_nokey: result('covered_nokey', unkeyedFinals, false),
      approved: result('approved', slice(0, PER_PATH), false),
      resumed: result('resumed', slice(PER_PATH, PER_PATH), false),
      deduplicated: result('deduplicated', slice(2 * PER_PATH, PER_PATH), false),
    };
    return { trial: n, kind, paths, recoverMs };
  }

  const results: TrialResult[] = [];
  console.log(`chaos: ${TRIALS} trials, ${PER_PATH} call(s) per path each (${PATHS.join(', ')}), seed ${seed}`);
  console.log('trial  killed         calls lost dup unknown resent disagree recover_ms');
  try {
    for (let n = 1; n <= TRIALS; n++) {
      if (Date.now() > DEADLINE) {
        console.log(`stopping after ${n - 1} trials: --max-minutes reached`);
        break;
      }
      const kind = KINDS[(n - 1) % KINDS.length]!;
      const r = await trial(n, kind);
      results.push(r);
      const t = total(Object.values(r.paths));
      console.log(
        `${String(n).padStart(5)}  ${kind.padEnd(14)} ${String(t.calls).padStart(5)} ${String(t.lost).padStart(4)} ${String(t.duplicated).padStart(3)} ${String(t.outcomeUnknown).padStart(7)} ${String(t.resent).padStart(6)} ${String(t.disagree).padStart(8)} ${String(r.recoverMs).padStart(10)}`,
      );
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch((err: unknown) => console.error('stop:', (err as Error).message));
    await up.close();
    await mcp.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }

  console.log('');
  console.log(
    `per path and kill target (${results.length} trials; duplicated: a non-idempotent request that reached the upstream twice; resent: an idempotent one sent again, as allowed; disagree: a covered call whose row, GET, keyed retry, audit and upstream hits disagree)`,
  );
  console.log('path          killed         trials calls lost dup unknown resent disagree recover_p50 recover_p95');
  for (const path of PATHS) {
    for (const kind of KINDS) {
      const of = results.filter((r) => r.kind === kind);
      if (of.length === 0) continue;
      const t = total(of.map((r) => r.paths[path]));
      const rec = of.map((r) => r.recoverMs).sort((a, b) => a - b);
      console.log(
        `${path.padEnd(13)} ${kind.padEnd(14)} ${String(of.length).padStart(6)} ${String(t.calls).padStart(5)} ${String(t.lost).padStart(4)} ${String(t.duplicated).padStart(3)} ${String(t.outcomeUnknown).padStart(7)} ${String(t.resent).padStart(6)} ${String(t.disagree).padStart(8)} ${String(pct(rec, 50)).padStart(11)} ${String(pct(rec, 95)).padStart(11)}`,
      );
    }
  }
  const all = total(results.flatMap((r) => Object.values(r.paths)));
  const recover = results.map((r) => r.recoverMs).sort((a, b) => a - b);
  console.log('');
  console.log(`totals: trials ${results.length}, calls ${all.calls}, lost ${all.lost}, duplicated ${all.duplicated}, outcome_unknown ${all.outcomeUnknown}, resent (idempotent) ${all.resent}, disagree ${all.disagree}`);
  console.log(`time to recover (ms): p50 ${pct(recover, 50)}, p95 ${pct(recover, 95)}, max ${recover.at(-1) ?? 0}`);
  const failed = all.lost > 0 || all.duplicated > 0 || all.disagree > 0;
  console.log(failed ? 'FAIL: calls were lost, duplicated or disagree' : 'OK: nothing lost, nothing duplicated, every covered call agrees');
  process.exitCode = failed ? 1 : 0;
}

function total(rs: PathResult[]): PathResult {
  const sum = (f: (r: PathResult) => number) => rs.reduce((a, r) => a + f(r), 0);
  return {
    calls: sum((r) => r.calls),
    lost: sum((r) => r.lost),
    duplicated: sum((r) => r.duplicated),
    outcomeUnknown: sum((r) => r.outcomeUnknown),
    resent: sum((r) => r.resent),
    disagree: sum((r) => r.disagree),
  };
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

main().catch((err: unknown) => {
  console.error(err);
  // Exit, not just set the code: a failure during setup leaves the loopback upstream (and maybe a
  // gateway) holding the event loop, and the script would otherwise hang until killed.
  process.exit(2);
});
