import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';

function doc(key: string, title: string, extraPaths: Record<string, unknown> = {}) {
  return {
    openapi: '3.1.0',
    info: { title, key, version: '1', description: `${title} API`, category: 'Testing' },
    servers: [{ url: 'https://api.example.com' }],
    components: {
      securitySchemes: { key_auth: { type: 'apiKey', in: 'header', name: 'X-Api-Key', default_secret_name: 'EXAMPLE_KEY' } },
    },
    security: [{ key_auth: [] }],
    paths: {
      '/widgets/{id}': {
        get: {
          operationId: 'get_widget',
          summary: 'Get widget {id}',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'ok' } },
        },
      },
      ...extraPaths,
    },
  };
}

describe('registry REST: templates, instances, search', () => {
  let gw: TestGateway;
  let admin: ReturnType<TestGateway['as']>;
  let member: ReturnType<TestGateway['as']>;
  let agentKey: string;

  beforeAll(async () => {
    gw = await startTestGateway();
    admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'dev@example.test' });
    member = gw.as(await gw.login(m.email, m.password));
    agentKey = (await member('POST', '/v1/identities/agents', { name: 'bot' })).body.key.token;
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('lists every built-in template and the raw HTTP pseudo-service', async () => {
    const res = await member('GET', '/v1/templates');
    expect(res.status).toBe(200);
    const keys = res.body.templates.map((t: any) => t.key);
    for (const k of ['github', 'slack', 'google-calendar', 'gmail', 'notion', 'stripe', 'sendgrid', 'openweathermap', 'http']) expect(keys).toContain(k);
    const http = res.body.templates.find((t: any) => t.key === 'http');
    expect(http).toMatchObject({ title: 'Raw HTTP', category: 'Platform', tier: 'global', hosts: [], auth_methods: [] });
    const total = res.body.templates.reduce((n: number, t: any) => n + t.action_count, 0);
    expect(total).toBeGreaterThanOrEqual(60);
    expect(gw.logs.some((l) => l.includes('service definitions loaded'))).toBe(true);
  });

  it('rejects a bad document with 422 listing every problem, storing nothing', async () => {
    const bad = doc('bad', 'Bad');
    (bad as any).openapi = '3.0.3';
    (bad.paths['/widgets/{id}'].get as any).risk = 'explode';
    delete (bad.paths['/widgets/{id}'].get as any).summary;
    const res = await admin('POST', '/v1/templates', { scope: 'org', document: bad });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('invalid_service_definition');
    const codes = res.body.error.details.problems.map((p: any) => p.code);
    expect(codes).toEqual(expect.arrayContaining(['invalid_openapi_version', 'invalid_risk', 'missing_field']));
    const keys = (await admin('GET', '/v1/templates')).body.templates.map((t: any) => t.key);
    expect(keys).not.toContain('bad');
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: 'openapi: [' })).status).toBe(422);
    expect((await admin('POST', '/v1/templates', { scope: 'team', document: doc('x', 'X') })).status).toBe(400);
    expect((await admin('POST', '/v1/templates', { document: doc('x', 'X'), extra: true })).status).toBe(400);
  });

  it('registers org and user templates and resolves user → org → global', async () => {
    expect((await member('POST', '/v1/templates', { scope: 'org', document: doc('widgets', 'Org Widgets') })).status).toBe(403);
    const orgT = await admin('POST', '/v1/templates', { scope: 'org', document: doc('widgets', 'Org Widgets') });
    expect(orgT.status).toBe(201);
    expect(orgT.body).toMatchObject({ key: 'widgets', tier: 'org', action_count: 1 });
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: doc('widgets', 'Again') })).status).toBe(409);

    expect((await member('GET', '/v1/services/widgets')).body).toMatchObject({ template: 'widgets', tier: 'org', title: 'Org Widgets' });
    const userT = await member('POST', '/v1/templates', { scope: 'user', document: doc('widgets', 'My Widgets') });
    expect(userT.status).toBe(201);
    expect((await member('GET', '/v1/services/widgets')).body).toMatchObject({ tier: 'user', title: 'My Widgets' });
    // The admin is another user: still sees the org template.
    expect((await admin('GET', '/v1/services/widgets')).body).toMatchObject({ tier: 'org' });
    // An org template may shadow a global one.
    const shadow = doc('openweathermap', 'Company Weather Proxy');
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: shadow })).status).toBe(201);
    expect((await member('GET', '/v1/services/openweathermap')).body).toMatchObject({ tier: 'org', title: 'Company Weather Proxy' });

    const upd = await member('PUT', `/v1/templates/${userT.body.id}`, { document: doc('widgets', 'My Widgets v2') });
    expect(upd.status).toBe(200);
    expect((await member('GET', '/v1/services/widgets')).body.title).toBe('My Widgets v2');
    expect((await member('PUT', `/v1/templates/${orgT.body.id}`, { document: doc('widgets', 'hijack') })).status).toBe(403);
    expect((await member('DELETE', `/v1/templates/${userT.body.id}`)).status).toBe(204);
    expect((await member('GET', '/v1/services/widgets')).body.tier).toBe('org');
    expect((await gw.as(agentKey)('POST', '/v1/templates', { scope: 'user', document: doc('a', 'A') })).status).toBe(403);
  });

  it('shows instances with actions, parameters and auth status; binds named instances', async () => {
    const list = (await gw.as(agentKey)('GET', '/v1/services')).body.services;
    const github = list.find((s: any) => s.service === 'github');
    expect(github).toMatchObject({ template: 'github', scope: 'implicit', auth_status: 'needs_connection' });
    const http = list.find((s: any) => s.service === 'http');
    expect(http.auth_status).toBe('none_required');
    const slack = (await member('GET', '/v1/services/slack')).body;
    const post = slack.actions.find((a: any) => a.action === 'post_message');
    expect(post).toMatchObject({ method: 'POST', risk: 'write', scope_param: 'channel' });
    expect((await member('GET', '/v1/services/nope')).status).toBe(404);

    const named = await member('POST', '/v1/services', { name: 'widgets-prod', template: 'widgets', secret_name: 'PROD_WIDGET_KEY' });
    expect(named.status).toBe(201);
    expect(named.body).toMatchObject({ service: 'widgets-prod', template: 'widgets', scope: 'user', auth_status: 'needs_secret' });
    expect(named.body.credentials[0]).toMatchObject({ type: 'secret', secret_name: 'PROD_WIDGET_KEY', available: false });
    expect((await member('POST', '/v1/services', { name: 'widgets-prod', template: 'widgets' })).status).toBe(409);
    expect((await member('POST', '/v1/services', { name: 'x', template: 'no-such' })).status).toBe(400);
    expect((await member('POST', '/v1/services', { name: 'Bad Name', template: 'widgets' })).status).toBe(400);
    expect((await member('POST', '/v1/services', { name: 'y', template: 'http', secret_name: 'K' })).status).toBe(400);
    expect((await member('DELETE', '/v1/services/widgets-prod')).status).toBe(204);
    expect((await member('GET', '/v1/services/widgets-prod')).status).toBe(404);
  });

  it('searches instance × action rows by name, summary and description', async () => {
    const res = await gw.as(agentKey)('GET', '/v1/search?q=post%20message&limit=5');
    expect(res.status).toBe(200);
    expect(res.body.results[0]).toMatchObject({ service: 'slack', template: 'slack', action: 'post_message', risk: 'write' });
    expect(res.body.results[0].auth_status).toBeTruthy();
    expect(res.body.results.length).toBeLessThanOrEqual(5);
    const issue = await gw.as(agentKey)('GET', '/v1/search?q=create%20issue');
    expect(issue.body.results[0]).toMatchObject({ template: 'github', action: 'create_issue' });
    // Descriptions read as prose: no template syntax reaches an agent or a person.
    const repos = await gw.as(agentKey)('GET', '/v1/search?q=list%20repositories&limit=50');
    const mine = repos.body.results.find((r: any) => r.template === 'github' && r.action === 'list_my_repos');
    expect(mine.description).toBe('List repositories of the authenticated user');
    for (const r of (await gw.as(agentKey)('GET', '/v1/search?limit=100')).body.results) {
      expect(r.summary, r.action).not.toMatch(/[[\]{}]/);
      if (r.description === r.summary) continue; // an author's own description is prose already
      expect(r.description, r.action).not.toMatch(/\[[^\]]*\{\w+\}[^\]]*\]/);
    }
    const github = await gw.as(agentKey)('GET', '/v1/services/github');
    for (const a of github.body.actions) expect(a.summary, a.action).not.toMatch(/[[\]{}]/);
    expect(github.body.actions.find((a: any) => a.action === 'list_my_repos').summary_template).toMatch(/\[ \(visibility \{visibility\}\)\]/);
    expect((await gw.as(agentKey)('GET', '/v1/search?limit=0')).status).toBe(400);
    expect((await gw.as(agentKey)('GET', '/v1/search?q=x&bogus=1')).status).toBe(400);
  });
});
