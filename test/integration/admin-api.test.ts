// REST pieces added for the admin pages, against a real gateway (PostgreSQL, Temporal) and real
// loopback peers: webhook test events, the per-event delivery log and redelivery; the upgrade
// auth_url that adds scopes to an active connection (oidc-provider); org settings' read-only
// figures. Bad input and the wrong caller get typed errors and change nothing.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verify } from '../../core/webhooks/signing.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { authorizeAtProvider, startOAuthProvider, type TestProvider } from '../support/oauth-provider.ts';
import { seedUser } from '../support/seed.ts';
import { until } from '../support/wait.ts';

const NIL = '00000000-0000-4000-8000-000000000000';

describe('admin REST additions (real PostgreSQL, Temporal, loopback receiver and OAuth provider)', () => {
  let gw: TestGateway;
  let op: TestProvider;
  let admin: ReturnType<TestGateway['as']>;
  let member: ReturnType<TestGateway['as']>;
  let agent: ReturnType<TestGateway['as']>;
  let outsider: ReturnType<TestGateway['as']>;
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  let receiver: http.Server;
  let receiverUrl: string;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    gw = await startTestGateway();
    op = await startOAuthProvider(`${gw.config.publicUrl}/v1/connections/callback`, 3600);
    admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'admin-api-member@example.test' });
    member = gw.as(await gw.login(m.email, m.password));
    const o = await seedUser(gw.databaseUrl, { email: 'admin-api-outsider@example.test', role: 'admin' });
    outsider = gw.as(await gw.login(o.email, o.password));
    const a = await admin('POST', '/v1/identities/agents', { name: 'admin-api-agent' });
    agent = gw.as(a.body.key.token);
  });
  afterAll(async () => {
    await gw?.stop();
    await op?.stop();
    await new Promise<void>((resolve) => {
      receiver?.close(() => resolve());
      receiver?.closeAllConnections();
    });
  });

  it('sends a signed test event, logs it per event, and redelivers the same bytes', async () => {
    const created = await admin('POST', '/v1/webhooks', { url: receiverUrl, events: ['approval.executed'] });
    expect(created.status).toBe(201);
    const { id, secret } = created.body as { id: string; secret: string };

    const sent = await admin('POST', `/v1/webhooks/${id}/test`);
    expect(sent.status).toBe(202);
    expect(sent.body.event_id).toMatch(/^evt_test_/);
    await until(async () => received.length, (n) => n >= 1, 30_000);
    const first = received[0]!;
    expect(JSON.parse(first.body)).toMatchObject({ id: sent.body.event_id, type: 'webhook.test', data: { webhook_id: id } });
    expect(verify(first.headers as Record<string, string>, first.body, secret)).toBe(true);
    expect(first.body).not.toContain(secret);

    const log = await until(async () => (await admin('GET', `/v1/webhooks/${id}/events`)).body.events, (e: unknown[]) => e.length === 1);
    expect(log[0]).toMatchObject({ event_id: sent.body.event_id, event_type: 'webhook.test', state: 'delivered', attempts: 1, last_status_code: 200, last_error: null, next_retry_at: null });

    const again = await admin('POST', `/v1/webhooks/${id}/events/${sent.body.event_id}/redeliver`);
    expect(again.status).toBe(202);
    await until(async () => received.length, (n) => n >= 2, 30_000);
    expect(received[1]!.body).toBe(first.body);
    expect(received[1]!.headers['webhook-id']).toBe(sent.body.event_id);
    expect(verify(received[1]!.headers as Record<string, string>, received[1]!.body, secret)).toBe(true);
    const after = await until(async () => (await admin('GET', `/v1/webhooks/${id}/events`)).body.events, (e: { attempts: number }[]) => e[0]?.attempts === 2);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ state: 'delivered', attempts: 2 });
    // The older per-attempt listing sees both attempts too.
    expect((await admin('GET', `/v1/webhooks/${id}/deliveries`)).body.deliveries).toHaveLength(2);
    // Nothing about the secret in the logs.
    expect(gw.logs.filter((l) => l.includes(secret))).toEqual([]);
  });

  it('refuses bad input and the wrong callers with typed errors', async () => {
    const { id } = (await admin('POST', '/v1/webhooks', { url: receiverUrl, events: ['approval.raised'] })).body as { id: string };
    const before = received.length;
    const cases: [ReturnType<TestGateway['as']>, string, string, number, string][] = [
      [admin, 'POST', '/v1/webhooks/not-a-uuid/test', 400, 'invalid_request'],
      [admin, 'POST', `/v1/webhooks/${NIL}/test`, 404, 'not_found'],
      [admin, 'GET', '/v1/webhooks/not-a-uuid/events', 400, 'invalid_request'],
      [admin, 'GET', `/v1/webhooks/${id}/events?limit=0`, 400, 'invalid_request'],
      [admin, 'GET', `/v1/webhooks/${id}/events?nope=1`, 400, 'invalid_request'],
      [admin, 'GET', `/v1/webhooks/${NIL}/events`, 404, 'not_found'],
      [admin, 'POST', `/v1/webhooks/${id}/events/not-an-event/redeliver`, 400, 'invalid_request'],
      [admin, 'POST', `/v1/webhooks/${id}/events/evt_never_sent/redeliver`, 404, 'not_found'],
      [member, 'POST', `/v1/webhooks/${id}/test`, 403, 'forbidden'],
      [member, 'GET', `/v1/webhooks/${id}/events`, 403, 'forbidden'],
      [agent, 'POST', `/v1/webhooks/${id}/test`, 403, 'forbidden'],
      [outsider, 'POST', `/v1/webhooks/${id}/test`, 404, 'not_found'],
      [outsider, 'GET', `/v1/webhooks/${id}/events`, 404, 'not_found'],
    ];
    for (const [who, method, path, status, code] of cases) {
      const res = await who(method, path);
      expect({ path, method, status: res.status, code: res.body?.error?.code }).toEqual({ path, method, status, code });
    }
    expect(received.length).toBe(before);
    expect((await admin('GET', `/v1/webhooks/${id}/events`)).body.events).toEqual([]);
  });

  it('gives an active connection the upgrade auth_url that adds scopes, and returns the browser where asked', async () => {
    expect((await admin('PUT', '/v1/oauth-apps/acme', {
      client_id: op.clientId,
      client_secret: op.clientSecret,
      authorization_url: `${op.issuer}/auth`,
      token_url: `${op.issuer}/token`,
    })).status).toBe(201);
    const started = await admin('POST', '/v1/connections', { provider: 'acme', scopes: ['openid'], redirect_after: '/connections' });
    expect(started.status).toBe(201);
    const connId = started.body.connection.id as string;
    const callback = `${gw.config.publicUrl}/v1/connections/callback`;
    const back = new URL(await authorizeAtProvider(started.body.auth_url, 'erin', callback));
    const done = await fetch(`${gw.url}${back.pathname}${back.search}`, { redirect: 'manual' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`${gw.config.publicUrl}/connections?connection_id=${connId}&status=active`);

    // Active and asking for nothing new: a conflict, nothing changes.
    const same = await admin('POST', `/v1/connections/${connId}/authorize`, { scopes: ['openid'] });
    expect([same.status, same.body.error.code]).toEqual([409, 'conflict']);
    expect((await admin('POST', `/v1/connections/${connId}/authorize`)).status).toBe(409);
    // Bad input.
    for (const body of [{ scopes: [] }, { scopes: ['has space'] }, { scopes: 'email' }, { redirect_after: 'https://elsewhere.example/' }, { nope: true }]) {
      const res = await admin('POST', `/v1/connections/${connId}/authorize`, body);
      expect({ body, status: res.status, code: res.body.error.code }).toEqual({ body, status: 400, code: 'invalid_request' });
    }
    expect((await admin('GET', `/v1/connections/${connId}`)).body.connection.requested_scopes).toEqual(['openid']);

    // More scopes: the provider is asked for the union; the connection stays usable meanwhile.
    const up = await admin('POST', `/v1/connections/${connId}/authorize`, { scopes: ['email'], redirect_after: '/connections?from=upgrade' });
    expect(up.status).toBe(200);
    expect(new URL(up.body.auth_url).searchParams.get('scope')!.split(' ').sort()).toEqual(['email', 'openid']);
    expect(up.body.connection.status).toBe('active');
    const back2 = new URL(await authorizeAtProvider(up.body.auth_url, 'erin', callback));
    const done2 = await fetch(`${gw.url}${back2.pathname}${back2.search}`, { redirect: 'manual' });
    expect(done2.status).toBe(303);
    expect(done2.headers.get('location')).toBe(`${gw.config.publicUrl}/connections?from=upgrade&connection_id=${connId}&status=active`);
    const conn = (await admin('GET', `/v1/connections/${connId}`)).body.connection;
    expect([...conn.granted_scopes].sort()).toEqual(['email', 'openid']);
    // Agents cannot authorize connections.
    expect((await agent('POST', `/v1/connections/${connId}/authorize`, { scopes: ['email'] })).status).toBe(403);
  });

  it('org settings carry the deployment rate limit and de-duplication, read-only', async () => {
    const s = await member('GET', '/v1/org/settings');
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ rate_limit_per_minute: gw.config.rateLimitPerMinute, pending_deduplication: true });
    for (const body of [{ rate_limit_per_minute: 5 }, { pending_deduplication: false }]) {
      const res = await admin('PATCH', '/v1/org/settings', body);
      expect([res.status, res.body.error.code]).toEqual([400, 'invalid_request']);
    }
    expect((await admin('GET', '/v1/org/settings')).body).toEqual(s.body);
  });
});
