// Crash safety: the process running API and worker is SIGKILLed with approvals pending; after a
// restart each approved call executes exactly once, and a timer that was running still fires.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../server/runtime/processes.ts';
import { createTestDatabase } from '../support/gateway.ts';
import { runCli, waitForReady, type CliProcess } from '../support/processes.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';


describe('crash safety (SIGKILL of the API + worker process)', () => {
  let up: Upstream;
  let proc: CliProcess | undefined;
  let env: Record<string, string>;
  let base: string;

  const api = async (token: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const start = async () => {
    proc = runCli(['serve'], env);
    await waitForReady(base, proc);
  };

  beforeAll(async () => {
    up = await startUpstream();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = {
      PORT: String(port),
      PUBLIC_URL: base,
      DATABASE_URL: await createTestDatabase(),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      GATEWAY_MASTER_KEY: randomBytes(32).toString('base64'),
      GATEWAY_ADMIN_EMAIL: 'crash-admin@example.test',
      GATEWAY_ADMIN_PASSWORD: 'crash admin password',
      LOG_LEVEL: 'warn',
    };
    await start();
  });
  afterAll(async () => {
    if (proc && proc.child.exitCode === null) {
      proc.child.kill('SIGTERM');
      await proc.exited;
    }
    await up?.close();
  });

  it('executes each approved call exactly once after a restart, and fires timers set before the crash', async () => {
    const login = await fetch(`${base}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: env.GATEWAY_ADMIN_EMAIL, password: env.GATEWAY_ADMIN_PASSWORD }),
    });
    const adminToken = ((await login.json()) as { token: string }).token;
    const orgId = (await api(adminToken, 'GET', '/v1/identities/me')).body.org.id;
    const owner = await seedUser(env.DATABASE_URL!, { orgId, email: 'crash-owner@example.test' });
    const ownerLogin = await fetch(`${base}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: owner.email, password: owner.password }),
    });
    const ownerToken = ((await ownerLogin.json()) as { token: string }).token;
    expect((await api(adminToken, 'POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await api(ownerToken, 'POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'crash-secret' })).status).toBe(201);
    const auto = (await api(ownerToken, 'POST', '/v1/identities/agents', { name: 'auto' })).body.key.token;
    const manual = (await api(ownerToken, 'POST', '/v1/identities/agents', { name: 'manual', auto_call_on_approve: false })).body.key.token;

    const a1 = (await api(auto, 'POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'after-crash-auto' } })).body;
    const a2 = (await api(manual, 'POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'after-crash-manual' } })).body;
    expect(a1.status).toBe('pending_approval');
    expect(a2.status).toBe('pending_approval');
    // A short approval TTL for the next call: its expiry timer is running when the process dies.
    expect((await api(adminToken, 'PATCH', '/v1/org/settings', { approval_ttl_seconds: 6 })).status).toBe(200);
    const a3 = (await api(manual, 'POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'will-expire' } })).body;
    expect(a3.status).toBe('pending_approval');
    expect((await api(adminToken, 'PATCH', '/v1/org/settings', { approval_ttl_seconds: 900 })).status).toBe(200);
    expect(up.requests).toHaveLength(0);

    proc!.child.kill('SIGKILL');
    expect(await proc!.exited).toBeNull();
    await start();

    const r1 = await api(ownerToken, 'POST', `/v1/approvals/${a1.approval_id}/resolve`, { decision: 'allow' });
    expect(r1.status).toBe(200);
    const r2 = await api(ownerToken, 'POST', `/v1/approvals/${a2.approval_id}/resolve`, { decision: 'allow' });
    expect(r2.status).toBe(200);
    const resumed = await api(manual, 'POST', '/v1/actions/call', { approval_id: a2.approval_id });
    expect(resumed.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    await until(() => api(ownerToken, 'GET', `/v1/approvals/${a1.approval_id}`), (r) => r.body.execution?.status === 'executed', 30_000);

    const expired = await until(() => api(ownerToken, 'GET', `/v1/approvals/${a3.approval_id}`), (r) => r.body.status === 'expired', 30_000);
    expect(expired.body.status).toBe('expired');

    // Exactly once each, even after waiting for stragglers.
    await new Promise((r) => setTimeout(r, 1_000));
    const names = up.requests.map((r) => JSON.parse(r.body).name).sort();
    expect(names).toEqual(['after-crash-auto', 'after-crash-manual']);
  });
});
