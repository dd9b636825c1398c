// The built-in Linear template (services/linear.yaml) is GraphQL: each action pins one query in its
// body schema and names itself in a URL fragment. Pointed at a loopback stand-in for
// api.linear.app, a call must reach POST /graphql (no fragment on the wire) with the pinned query,
// the caller's variables and the API key as the whole Authorization header; a call that brings its
// own query is refused before anything is sent.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

const KEY = 'lin_api_catalog_test';

describe('the Linear template against a loopback stand-in', () => {
  let gw: TestGateway;
  let up: Upstream;
  let call: (action: string, params: Record<string, unknown>) => Promise<{ status: number; body: any }>;

  beforeAll(async () => {
    up = await startUpstream();
    up.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: { issue: { identifier: 'ENG-1', title: 'A title' } } }));
    });
    gw = await startTestGateway();
    const admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const owner = await seedUser(gw.databaseUrl, { orgId, email: 'catalog-owner@example.test' });
    const human = gw.as(await gw.login(owner.email, owner.password));
    const shipped = await readFile(new URL('../../services/linear.yaml', import.meta.url), 'utf8');
    const document = shipped.replace('  - url: https://api.linear.app\n', `  - url: ${up.url}\n`);
    expect(document).not.toBe(shipped);
    const saved = await admin('POST', '/v1/templates', { scope: 'org', document });
    expect(saved.status, saved.text).toBe(201);
    expect((await human('POST', '/v1/secrets', { name: 'LINEAR_API_KEY', value: KEY })).status).toBe(201);
    const agent = await human('POST', '/v1/identities/agents', { name: 'linear-agent' });
    expect(agent.status, agent.text).toBe(201);
    expect((await human('POST', `/v1/identities/${agent.body.identity.id}/rules`, { effect: 'allow', pattern: 'linear:*:*' })).status).toBe(201);
    call = (action, params) => gw.as(agent.body.key.token)('POST', '/v1/actions/call', { service: 'linear', action, params });
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
  });

  it('sends the pinned query with the variables to POST /graphql, keyed by the bare API key', async () => {
    const res = await call('get_issue', { variables: { id: 'ENG-1' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: 'called', result: { status_code: 200, body: { data: { issue: { identifier: 'ENG-1' } } } } });
    const sent = up.requests.at(-1)!;
    expect(sent.method).toBe('POST');
    expect(sent.url).toBe('/graphql');
    expect(sent.headers.authorization).toBe(KEY);
    const body = JSON.parse(sent.body);
    expect(body.variables).toEqual({ id: 'ENG-1' });
    expect(body.query).toMatch(/^query Issue\(\$id: String!\) \{ issue\(id: \$id\)/);
  });

  it('refuses a call that brings a query of its own, and sends nothing', async () => {
    const before = up.requests.length;
    const res = await call('get_issue', { query: 'mutation { issueArchive(id: "ENG-1") { success } }', variables: { id: 'ENG-1' } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(/query/);
    expect(up.requests.length).toBe(before);
  });
});
