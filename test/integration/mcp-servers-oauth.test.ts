// OAuth to an upstream MCP server as the MCP Authorization spec describes (issue 43): gateway A
// connects gateway B's own /mcp (an OAuth-protected MCP server with dynamic client registration).
// A follows B's 401 to its metadata, registers itself, and a person authorizes in real Chromium
// (signs in to B, consents); the tokens are a connection of A's, refreshed as connections are.
import type { Browser } from 'playwright-core';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser, type SeededUser } from '../support/seed.ts';
import { until } from '../support/wait.ts';

/** A JWT (B's access tokens are JWTs) or anything shaped like one. */
const JWT = /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\./;

describe('an OAuth-protected upstream MCP server: another gateway’s /mcp', () => {
  let a: TestGateway;
  let b: TestGateway;
  let browser: Browser;
  let personAtB: SeededUser;
  let adminA: ReturnType<TestGateway['as']>;
  let serverId: string;
  let registeredClientId: string | null;

  beforeAll(async () => {
    [a, b, browser] = await Promise.all([startTestGateway({ realPublicUrl: true }), startTestGateway({ realPublicUrl: true }), launchChromium()]);
    adminA = a.as(a.adminToken);
    const orgB = (await b.as(b.adminToken)('GET', '/v1/identities/me')).body.org.id;
    personAtB = await seedUser(b.databaseUrl, { orgId: orgB, email: 'peer-person@example.test' });
  });
  afterAll(async () => {
    await browser?.close();
    await a?.stop();
    await b?.stop();
  });

  const peerUrl = () => `${b.config.publicUrl}/mcp`;

  it('on B’s 401 A discovers B’s authorization server, registers itself, and answers needs_authentication with B’s auth_url', async () => {
    const res = await adminA('POST', '/v1/mcp-servers', { name: 'peer', url: peerUrl(), auth: { type: 'oauth' } });
    expect(res.status, res.text).toBe(401);
    expect(res.body.error).toMatchObject({ code: 'needs_authentication', details: { provider: expect.stringMatching(/^mcp-[0-9a-f]{24}$/) } });
    const authUrl = new URL(res.body.error.details.auth_url);
    expect(authUrl.origin + authUrl.pathname).toBe(`${b.config.publicUrl}/oauth/authorize`);
    expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authUrl.searchParams.get('resource')).toBe(peerUrl());
    expect(authUrl.searchParams.get('redirect_uri')).toBe(`${a.config.publicUrl}/v1/connections/callback`);
    registeredClientId = authUrl.searchParams.get('client_id');
    expect(registeredClientId).toBeTruthy();
    // Nothing is connected before the person authorizes.
    expect((await adminA('GET', '/v1/mcp-servers')).body.mcp_servers).toEqual([]);
  });

  it('after the person signs in to B and consents in Chromium, connecting again discovers B’s tools', async () => {
    const started = await adminA('POST', '/v1/mcp-servers', { name: 'peer', url: peerUrl(), auth: { type: 'oauth' } });
    expect(started.status, started.text).toBe(401);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(started.body.error.details.auth_url);
    await page.getByLabel('Email').fill(personAtB.email);
    await page.getByLabel('Password').fill(personAtB.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Connect an application' }).waitFor();
    await page.getByRole('textbox', { name: 'New agent name' }).fill('Gateway A');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((u) => u.href.startsWith(a.config.publicUrl));
    await context.close();
    // The client B knows is the one A registered by dynamic client registration, bound now.
    const clients = await b.as(b.adminToken)('GET', '/v1/oauth/clients');
    expect(clients.body.clients.find((c: any) => c.client_id === registeredClientId)).toMatchObject({ client_name: 'Agent Action Gateway' });
    const connection = await until(
      async () => (await adminA('GET', '/v1/connections')).body.connections.find((c: any) => c.provider === started.body.error.details.provider),
      (c) => c?.status === 'active',
      30_000,
    );
    expect(connection.token_expires_at).not.toBeNull();

    const res = await adminA('POST', '/v1/mcp-servers', { name: 'peer', url: peerUrl(), auth: { type: 'oauth' } });
    expect(res.status, res.text).toBe(201);
    serverId = res.body.id;
    expect(res.body.auth).toMatchObject({ type: 'oauth', provider: connection.provider, token_url: `${b.config.publicUrl}/oauth/token` });
    const byName = new Map<string, any>(res.body.tools.map((t: any) => [t.name, t]));
    expect(byName.get('gateway_search')).toMatchObject({ risk: 'read', enabled: true });
    expect(byName.get('gateway_auth')).toMatchObject({ risk: 'write', enabled: true });
  });

  it('a call through A reaches B as the agent the person consented to', async () => {
    // whoami only reads; the admin says so (the annotations call it a write).
    expect((await adminA('PATCH', `/v1/mcp-servers/${serverId}/tools/gateway_auth`, { risk: 'read' })).status).toBe(200);
    const res = await adminA('POST', '/v1/actions/call', { service: 'peer', action: 'gateway_auth', params: { operation: 'whoami' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.status).toBe('called');
    expect(JSON.stringify(res.body.result)).toContain('Gateway A');
    expect(JSON.stringify(res.body.result)).toContain('"authenticated_via":"oauth"');
  });

  it('an expired access token is refreshed at B before the next call, which succeeds', async () => {
    const before = (await adminA('GET', '/v1/connections')).body.connections.find((c: any) => c.provider.startsWith('mcp-'));
    await a.pool.query(sql.unsafe`UPDATE connections SET token_expires_at = now() - interval '1 second' WHERE id = ${before.id}`);
    const res = await adminA('POST', '/v1/actions/call', { service: 'peer', action: 'gateway_auth', params: { operation: 'whoami' } });
    expect(res.status, res.text).toBe(200);
    expect(JSON.stringify(res.body.result)).toContain('Gateway A');
    const after = (await adminA('GET', `/v1/connections/${before.id}`)).body.connection;
    expect(after.refresh_count).toBe(before.refresh_count + 1);
    expect(Date.parse(after.token_expires_at)).toBeGreaterThan(Date.now());
  });

  it('no token reaches a response, the audit log or A’s logs', async () => {
    const shown = [
      (await adminA('GET', '/v1/mcp-servers')).text,
      (await adminA('GET', `/v1/mcp-servers/${serverId}`)).text,
      (await adminA('GET', '/v1/connections')).text,
      (await adminA('GET', '/v1/oauth-apps')).text,
      (await adminA('GET', '/v1/audit')).text,
      a.logs.join('\n'),
    ];
    for (const text of shown) expect(text).not.toMatch(JWT);
  });
});
