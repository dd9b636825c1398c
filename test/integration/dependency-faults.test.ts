// Dependency faults (issue 11, item 4): an embedded gateway whose Temporal dev server or
// PostgreSQL child is SIGKILLed answers calls with 503 `unavailable` + Retry-After instead of
// hanging, keeps PostgreSQL-only reads working, says in /readyz which dependency is down,
// restarts the child on the same data, and then finishes what was in flight.
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort, isAlive } from '../../server/embedded/processes.ts';
import { createTestDatabase } from '../support/gateway.ts';
import { apiClient, childPid, gatewayEnv, setUpTenant, startServe, stopGently, type Tenant } from '../support/gateway-process.ts';
import type { CliProcess } from '../support/processes.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

async function tempDataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-faults-'));
  await chmod(dir, 0o755); // the embedded PostgreSQL runs as its own OS user
  return dir;
}

interface ServedGateway {
  up: Upstream;
  dataDir: string;
  base: string;
  t: Tenant;
  stop(): Promise<void>;
}

/**
 * One `gateway serve` child in a data directory of its own, a loopback upstream and a tenant.
 * `env` picks its Temporal and PostgreSQL; without a DATABASE_URL it runs the embedded PostgreSQL,
 * and the tenant is seeded through that database's own URL (read from its password file).
 */
async function serveGateway(env: Record<string, string>): Promise<ServedGateway> {
  const up = await startUpstream();
  const dataDir = await tempDataDir();
  let proc: CliProcess | undefined;
  const stop = async () => {
    await stopGently(proc);
    await up.close();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const full = gatewayEnv(port, { DATA_DIR: dataDir, ...env });
    proc = await startServe(full);
    const t = await setUpTenant(base, full, env.DATABASE_URL ?? (await embeddedDatabaseUrl(dataDir)), up.url);
    return { up, dataDir, base, t, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

describe('a gateway whose embedded Temporal dies', () => {
  let g: ServedGateway | undefined;
  const api = () => apiClient(g!.base);

  beforeAll(async () => {
    g = await serveGateway({
      DATABASE_URL: await createTestDatabase(),
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      TEMPORAL_CLI_PATH: inject('temporalCliPath'),
    });
  });
  afterAll(async () => {
    await g?.stop();
  });

  it('answers calls 503 with Retry-After while it is down, keeps reads, and recovers on its own', async () => {
    const { up, dataDir, base, t } = g!;
    const me = (await api()(t.auto, 'GET', '/v1/identities/me')).body;
    expect((await api()(t.ownerToken, 'POST', `/v1/identities/${me.identity.id}/rules`, { effect: 'allow', pattern: 'widgets:get_item:*' })).status).toBe(201);
    expect((await api()(t.auto, 'POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: 'before' } })).body.status).toBe('called');

    // A covered call is at the (slow) upstream when Temporal stops answering (SIGSTOP: nothing
    // answers, nothing exits): its caller is released with 503 as soon as the probe notices.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    up.handle((req, res) => {
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, url: req.url }));
      };
      if (req.url === '/items/in-flight') void held.then(answer);
      else answer();
    });
    const inFlight = api()(t.auto, 'POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: 'in-flight' } });
    await until(async () => up.requests.filter((r) => r.url === '/items/in-flight').length, (n) => n === 1, 30_000);
    const pid = await childPid(dataDir, 'temporal');
    const stoppedAt = performance.now();
    process.kill(pid, 'SIGSTOP');
    const released = await inFlight;
    console.log(`covered call in flight when Temporal stopped answering: ${released.status} after ${Math.round(performance.now() - stoppedAt)} ms`);
    expect(released.status).toBe(503);
    expect(released.body.error).toMatchObject({ code: 'unavailable', details: { dependency: 'temporal', call_id: expect.any(String) } });
    expect(released.headers.get('retry-after')).toBeTruthy();
    release();

    // From then on calls are refused at once, before anything is written.
    let attempt = 0;
    const refused = await until(
      async () => {
        const started = performance.now();
        const r = await api()(t.auto, 'POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: `while-down-${attempt++}` } });
        return { ...r, ms: Math.round(performance.now() - started) };
      },
      (r) => r.status === 503 && r.body.error.details.call_id === undefined,
      30_000,
    );
    const refusedId = `/items/while-down-${attempt - 1}`;
    console.log(`covered call while Temporal does not answer: ${refused.status} in ${refused.ms} ms`);
    expect(refused.body.error).toMatchObject({ code: 'unavailable', details: { dependency: 'temporal' } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Reads that need only PostgreSQL still work; /readyz names the dependency that is down.
    expect((await api()(t.ownerToken, 'GET', '/v1/approvals')).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as any).down).toEqual(['temporal']);

    // Then dead: the supervisor restarts the dev server on the same database file and port.
    process.kill(pid, 'SIGKILL');
    await until(async () => isAlive(pid), (alive) => !alive);
    await until(async () => (await fetch(`${base}/readyz`)).status, (s) => s === 200, 90_000);
    expect(await childPid(dataDir, 'temporal')).not.toBe(pid);
    const after = await until(
      () => api()(t.auto, 'POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: 'after' } }),
      (r) => r.status === 200,
      60_000,
    );
    expect(after.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    expect(up.requests.filter((r) => r.url === refusedId)).toHaveLength(0);
    expect(up.requests.filter((r) => r.url === '/items/after')).toHaveLength(1);
  });
});

describe('a gateway whose embedded PostgreSQL dies during a replay', () => {
  let g: ServedGateway | undefined;
  const api = () => apiClient(g!.base);

  beforeAll(async () => {
    g = await serveGateway({ TEMPORAL_ADDRESS: inject('temporalAddress') });
  });
  afterAll(async () => {
    await g?.stop();
  });

  it('finishes the approved call exactly once after PostgreSQL is restarted under it', async () => {
    const { up, dataDir, base, t } = g!;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    up.handle((req, res) => {
      void gate.then(() => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, url: req.url }));
      });
    });
    const raised = (await api()(t.auto, 'POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'pg-kill' } })).body;
    expect(raised.status).toBe('pending_approval');
    expect((await api()(t.ownerToken, 'POST', `/v1/approvals/${raised.approval_id}/resolve`, { decision: 'allow' })).status).toBe(200);
    // The replay is at the upstream (held there) when PostgreSQL dies.
    await until(async () => up.requests.length, (n) => n === 1, 30_000);
    const pid = await childPid(dataDir, 'postgres');
    process.kill(pid, 'SIGKILL');
    const down = await until(
      async () => {
        const r = await fetch(`${base}/readyz`);
        return { status: r.status, body: (await r.json()) as any };
      },
      (r) => r.status === 503,
      30_000,
    );
    expect(down.body.down).toContain('database');
    const refused = await api()(t.ownerToken, 'GET', `/v1/approvals/${raised.approval_id}`);
    if (refused.status !== 200) {
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('unavailable');
      expect(refused.headers.get('retry-after')).toBeTruthy();
    }
    release();

    // Restarted on the same data; the result is recorded once it lands.
    await until(async () => (await fetch(`${base}/readyz`)).status, (s) => s === 200, 90_000);
    const final = await until(
      () => api()(t.ownerToken, 'GET', `/v1/approvals/${raised.approval_id}`),
      (r) => r.status === 200 && ['executed', 'failed'].includes(r.body.execution?.status),
      90_000,
    );
    expect(final.body.execution).toMatchObject({ status: 'executed', http_status_code: 201 });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(up.requests.filter((r) => r.url === '/items')).toHaveLength(1);
  });
});

/** The embedded PostgreSQL's URL: its password file, and its port from postmaster.pid (line 4). */
async function embeddedDatabaseUrl(dataDir: string): Promise<string> {
  const password = (await readFile(path.join(dataDir, 'postgres.password'), 'utf8')).trim();
  const lines = (await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n');
  const port = Number.parseInt(lines[3]!.trim(), 10);
  return `postgres://gateway:${encodeURIComponent(password)}@127.0.0.1:${port}/gateway`;
}
