// A call that could never run is answered at once with its typed error, not raised for approval:
// the human would otherwise approve a call that must then fail at execution.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

type As = ReturnType<TestGateway['as']>;

describe('calls whose credential does not exist for the requester', () => {
  let gw: TestGateway;
  let admin: As;
  let agent: As;

  const approvals = async () => (await admin('GET', '/v1/approvals')).body.approvals.length as number;

  beforeAll(async () => {
    gw = await startTestGateway();
    admin = gw.as(gw.adminToken);
    const created = await admin('POST', '/v1/identities/agents', { name: 'no-credentials agent' });
    expect(created.status).toBe(201);
    agent = gw.as(created.body.key.token);
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it('no OAuth app for the provider: credential_missing, no approval', async () => {
    const res = await agent('POST', '/v1/actions/call', { service: 'github', action: 'list_my_repos' });
    expect(res.status, res.text).toBe(424);
    expect(res.body.error).toMatchObject({ code: 'credential_missing', details: { provider: 'github', secret_name: 'GITHUB_TOKEN' } });
    expect(res.body.error.message).toMatch(/PUT \/v1\/oauth-apps\/github/);
    expect(await approvals()).toBe(0);
  });

  it('an OAuth app but no connection: needs_authentication with auth_url and connection_id, no approval; the pending connection is reused', async () => {
    const app = await admin('PUT', '/v1/oauth-apps/github', {
      client_id: 'gh-client',
      client_secret: 'gh-secret-value-1234',
      authorization_url: 'https://github.com/login/oauth/authorize',
      token_url: 'https://github.com/login/oauth/access_token',
    });
    expect(app.status, app.text).toBe(201);
    const first = await agent('POST', '/v1/actions/call', { service: 'github', action: 'list_my_repos' });
    expect(first.status, first.text).toBe(401);
    expect(first.body.error).toMatchObject({ code: 'needs_authentication', details: { provider: 'github', connection_id: expect.any(String), auth_url: expect.stringMatching(/^https:\/\/github\.com\/login\/oauth\/authorize\?/) } });
    const url = new URL(first.body.error.details.auth_url);
    expect(url.searchParams.get('scope')?.split(' ')).toContain('repo');
    expect(await approvals()).toBe(0);

    const again = await agent('POST', '/v1/actions/call', { service: 'github', action: 'list_my_repos' });
    expect(again.body.error).toMatchObject({ code: 'needs_authentication', details: { connection_id: first.body.error.details.connection_id } });
    const conns = (await admin('GET', '/v1/connections')).body.connections.filter((c: any) => c.provider === 'github');
    expect(conns).toHaveLength(1);
    expect(conns[0]).toMatchObject({ id: first.body.error.details.connection_id, status: 'pending' });
    expect(await approvals()).toBe(0);
  });

  it('a missing vault secret: credential_missing naming the secret, no approval; once stored, the call raises its approval', async () => {
    const res = await agent('POST', '/v1/actions/call', { service: 'sendgrid', action: 'list_templates' });
    expect(res.status, res.text).toBe(424);
    expect(res.body.error).toMatchObject({ code: 'credential_missing', details: { secret_name: 'SENDGRID_API_KEY' } });
    expect(await approvals()).toBe(0);
    expect((await admin('POST', '/v1/secrets', { name: 'SENDGRID_API_KEY', value: 'SG.not-a-real-key' })).status).toBe(201);
    const now = await agent('POST', '/v1/actions/call', { service: 'sendgrid', action: 'list_templates' });
    expect(now.status, now.text).toBe(202);
    expect(now.body.status).toBe('pending_approval');
  });

  it('bad params are still reported before a missing credential', async () => {
    const res = await agent('POST', '/v1/actions/call', { service: 'sendgrid', action: 'list_templates', params: { nope: 1 } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
  });
});
