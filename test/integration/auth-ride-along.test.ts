// The call path's instance lookup rides along the agent key's authentication (issue 28: one
// statement less per call). What it reads must be exactly what the call would have read on its
// own, for every way a name resolves (the user's template over the org's, a named instance, a
// global one, none), kept for that request's principal only; and the hint it is read from is
// only a hint: validation still judges the body.
import express from 'express';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../server/auth/middleware.ts';
import { createAuthService } from '../../server/auth/service.ts';
import { callLookupAlong } from '../../server/calls/routes.ts';
import { toolCallLookupAlong } from '../../server/mcp/tools.ts';
import { createIdentityReader } from '../../server/identities/readers.ts';
import { hashToken } from '../../server/auth/tokens.ts';
import { createDatabasePool, type DatabasePool } from '../../server/db/pool.ts';
import { findAgentKeyWithChain } from '../../server/identities/store.ts';
import { instanceLookupAlong } from '../../server/registry/request-lookup.ts';
import { alongInstance, readAlongOf, type ReadAlong } from '../../server/auth/read-along.ts';
import { instanceLookup } from '../../server/registry/store.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';

/** The ride-along for a name it accepts. */
function along(name: string) {
  const r = instanceLookupAlong(name);
  if (!r) throw new Error(`no ride-along for ${JSON.stringify(name)}`);
  return r;
}

describe('the instance lookup read with the agent key', () => {
  let gw: TestGateway;
  let up: Upstream;
  let pool: DatabasePool;
  let orgId: string;
  let member: { id: string; token: string };
  let agent: { id: string; key: string };

  beforeAll(async () => {
    up = await startUpstream();
    // The member's own template calls the loopback upstream: allowed here (private addresses are refused otherwise).
    gw = await startTestGateway({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    pool = await createDatabasePool(gw.databaseUrl, { maxPoolSize: 2 });
    const admin = gw.as(gw.adminToken);
    orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const seeded = await seedUser(gw.databaseUrl, { orgId, email: 'ride-along@example.test' });
    member = { id: seeded.userId, token: await gw.login(seeded.email, seeded.password) };
    const as = gw.as(member.token);
    // The org's widgets, and the member's own (shadowing it for the member's agents) on another path.
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    const mine = upstreamServiceDoc('widgets', `${up.url}/mine`) as any;
    mine.info.title = 'My widgets';
    expect((await as('POST', '/v1/templates', { scope: 'user', document: mine })).status).toBe(201);
    expect((await as('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'ride-along-secret', allowed_hosts: ['127.0.0.1'] })).status).toBe(201);
    expect((await as('POST', '/v1/services', { name: 'widgets-named', template: 'widgets', secret_name: 'WIDGETS_KEY' })).status).toBe(201);
    const made = await as('POST', '/v1/identities/agents', { name: 'ride-along' });
    expect(made.status, made.text).toBe(201);
    agent = { id: made.body.identity.id, key: made.body.key.token };
    for (const pattern of ['widgets:*:*', 'widgets-named:*:*']) {
      expect((await as('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern })).status).toBe(201);
    }
  });

  afterAll(async () => {
    await pool?.end();
    await gw?.stop();
    await up?.close();
  });

  it('reads what the standalone lookup reads, for every way a name resolves', async () => {
    for (const name of ['widgets', 'widgets-named', 'github', 'no-such-service']) {
      const found = await findAgentKeyWithChain(pool, hashToken(agent.key), along(name).sql);
      expect(found, name).not.toBeNull();
      const kept: ReadAlong = {};
      along(name).keep(kept, found!.alongside);
      expect(alongInstance(kept, name), name).toEqual(await instanceLookup(pool, orgId, member.id, name));
    }
    // The user's template and the org's both come back for `widgets` (the resolver picks the user's).
    const widgets = await instanceLookup(pool, orgId, member.id, 'widgets');
    expect(widgets.templates.map((t) => t.owner_id).sort()).toEqual([member.id, null].sort());
    expect((await instanceLookup(pool, orgId, member.id, 'widgets-named')).instances).toHaveLength(1);
  });

  it('is handed on for that request and that name only', async () => {
    const found = await findAgentKeyWithChain(pool, hashToken(agent.key), along('widgets').sql);
    const kept: ReadAlong = {};
    along('widgets').keep(kept, found!.alongside);
    expect(alongInstance(kept, 'widgets')).toBeDefined();
    expect(alongInstance(kept, 'widgets-named')).toBeUndefined();
    expect(alongInstance({}, 'widgets')).toBeUndefined();
    expect(alongInstance(undefined, 'widgets')).toBeUndefined();
    // Without a ride-along the key still authenticates, with nothing alongside.
    expect((await findAgentKeyWithChain(pool, hashToken(agent.key)))?.alongside).toBeNull();
  });

  it('calls resolve as before: the user template over the org one, a named instance, typed errors for bad names', async () => {
    const call = (body: unknown) => gw.request('POST', '/v1/actions/call', { body, headers: { authorization: `Bearer ${agent.key}` } });
    const before = up.requests.length;
    const mine = await call({ service: 'widgets', action: 'get_item', params: { id: 'w1' } });
    expect(mine.status, mine.text).toBe(200);
    const named = await call({ service: 'widgets-named', action: 'get_item', params: { id: 'w2' } });
    expect(named.status, named.text).toBe(200);
    const paths = up.requests.slice(before).map((r) => r.url);
    expect(paths).toEqual(['/mine/items/w1', '/mine/items/w2']);

    const notString = await call({ service: 42, action: 'get_item', params: { id: 'w3' } });
    expect(notString.status).toBe(400);
    expect(notString.body.error.code).toBe('invalid_request');
    const tooLong = await call({ service: 'w'.repeat(101), action: 'get_item', params: { id: 'w4' } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.code).toBe('invalid_request');
    const unknown = await call({ service: 'no-such-service', action: 'get_item', params: { id: 'w5' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    expect(up.requests.length - before).toBe(2);
  });

  it('refuses a revoked key whatever rides along', async () => {
    const as = gw.as(member.token);
    const made = await as('POST', '/v1/identities/agents', { name: 'ride-along-revoked' });
    const keys = await as('GET', `/v1/identities/${made.body.identity.id}/keys`);
    expect(keys.status, keys.text).toBe(200);
    const revoked = await as('POST', `/v1/identities/${made.body.identity.id}/keys/${keys.body.keys[0].id}/revoke`);
    expect(revoked.status, revoked.text).toBeLessThan(300);
    expect(await findAgentKeyWithChain(pool, hashToken(made.body.key.token), along('widgets').sql)).toBeNull();
    const r = await gw.request('POST', '/v1/actions/call', { body: { service: 'widgets', action: 'get_item', params: { id: 'w6' } }, headers: { authorization: `Bearer ${made.body.key.token}` } });
    expect(r.status).toBe(401);
  });

  it('the /v1 authentication reads the lookup of the service a call names, and nothing for other requests', async () => {
    // The gateway's own middleware and auth service on a bare router, to see what each request kept.
    const app = express();
    const v1 = express.Router();
    v1.use(express.json());
    v1.use(authenticate(createAuthService({ pool, identities: createIdentityReader(pool) }), { session: true, agentKey: true, oauth: false }, { alongside: callLookupAlong }));
    v1.use((req, res) => {
      const named = (req.body as { service?: unknown } | undefined)?.service;
      res.json({ kept: typeof named === 'string' && alongInstance(readAlongOf(req), named) !== undefined });
    });
    app.use('/v1', v1);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const kept = async (method: string, path: string, token: string, body?: unknown) => {
      const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
      expect(res.status).toBe(200);
      return ((await res.json()) as { kept: boolean }).kept;
    };
    try {
      expect(await kept('POST', '/actions/call', agent.key, { service: 'widgets', action: 'get_item' })).toBe(true);
      expect(await kept('POST', '/actions/http', agent.key, { service: 'widgets', method: 'GET', path: '/items/1' })).toBe(true);
      // Not a call, or a name the body schema refuses: nothing rides along.
      expect(await kept('POST', '/services', agent.key, { service: 'widgets' })).toBe(false);
      expect(await kept('POST', '/actions/call', agent.key, { service: 'w'.repeat(101) })).toBe(false);
      // A session (a person calling) reads it the same way.
      expect(await kept('POST', '/actions/call', member.token, { service: 'widgets' })).toBe(true);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('/mcp parses before authenticating: a JSON message without a token still gets the 401 challenge; a body that does not parse gets 400 and nothing else', async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${gw.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body });
    const message = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'gateway_call', arguments: { service: 'widgets', action: 'get_item' } } });
    const challenged = await post(message);
    expect(challenged.status).toBe(401);
    expect(challenged.headers.get('www-authenticate')).toMatch(/^Bearer .*resource_metadata=/);
    const garbled = await post('{"jsonrpc": "2.0", ');
    expect(garbled.status).toBe(400);
    expect(garbled.headers.get('www-authenticate')).toBeNull();
    expect(JSON.stringify(await garbled.json())).not.toContain('ride-along-secret');
    // A bad token with a call in the body is refused as before, naming the token.
    const wrong = await post(message, { authorization: 'Bearer gw_not_a_real_key' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/invalid_token/);
  });

  it('rides along only names an instance or template can have, and only for calls over MCP', () => {
    for (const bad of ['a\u0000b', 'w'.repeat(101), '', ' widgets', 'wid gets', 42, null, undefined, { name: 'widgets' }]) {
      expect(instanceLookupAlong(bad), JSON.stringify(bad)).toBeUndefined();
    }
    for (const good of ['widgets', 'widgets-named', 'openweathermap', 'my_service.v2', 'w'.repeat(100)]) expect(instanceLookupAlong(good), good).toBeDefined();
    const message = (name: string, args: unknown) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
    expect(toolCallLookupAlong(message('gateway_call', { service: 'widgets', action: 'get_item' }))).toBeDefined();
    expect(toolCallLookupAlong(message('gateway_read', { service: 'widgets', action: 'get_item' }))).toBeDefined();
    expect(toolCallLookupAlong(message('gateway_search', { query: 'widgets' }))).toBeUndefined();
    expect(toolCallLookupAlong(message('gateway_auth', { action: 'whoami', service: 'widgets' }))).toBeUndefined();
    expect(toolCallLookupAlong(message('gateway_call', { service: 'a\u0000b', action: 'x' }))).toBeUndefined();
    expect(toolCallLookupAlong({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).toBeUndefined();
    expect(toolCallLookupAlong([message('gateway_call', { service: 'widgets' })])).toBeUndefined();
    expect(toolCallLookupAlong('not json')).toBeUndefined();
    expect(toolCallLookupAlong(undefined)).toBeUndefined();
  });
});
