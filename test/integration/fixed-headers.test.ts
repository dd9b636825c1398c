// Fixed headers (issue 41 leftover): a template declares the API version an action needs as an
// OpenAPI header parameter with a `const` value, and the executor sends it with every request of
// the action. The shipped LinkedIn and Notion templates, their servers at a loopback upstream,
// send `LinkedIn-Version` + `X-Restli-Protocol-Version` and `Notion-Version` (with a `resolve`
// lookup's GET too); the service view and
// the approval show them; a caller cannot set or override them; a template that would fix a
// credential or a framing header is refused and nothing is saved.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startUpstream, type RecordedRequest, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

type Doc = Record<string, any>;

function shipped(file: string, baseUrl: string): Doc {
  const doc = parse(readFileSync(path.resolve(import.meta.dirname, '..', '..', 'services', file), 'utf8')) as Doc;
  doc.servers = [{ url: baseUrl }];
  return doc;
}

/**
 * LinkedIn ships OAuth only; connections are covered elsewhere, so this copy adds a token scheme
 * each action also accepts. Its paths, parameters and fixed headers are the shipped ones.
 */
function linkedinWithToken(baseUrl: string): Doc {
  const doc = shipped('linkedin.yaml', baseUrl);
  doc.components.securitySchemes.linkedin_token = { type: 'apiKey', in: 'header', name: 'Authorization', prefix: 'Bearer ', default_secret_name: 'LINKEDIN_TOKEN' };
  for (const item of Object.values(doc.paths as Record<string, Doc>)) {
    for (const op of Object.values(item)) if (op && typeof op === 'object' && Array.isArray(op.security)) op.security.push({ linkedin_token: [] });
  }
  return doc;
}

describe('fixed headers declared by a template', () => {
  let gw: TestGateway;
  let up: Upstream;
  let admin: ReturnType<TestGateway['as']>;
  let agent: { id: string; call: ReturnType<TestGateway['as']> };
  const hits = (p: string): RecordedRequest[] => up.requests.filter((r) => r.url.split('?')[0] === p);

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    admin = gw.as(gw.adminToken);
    for (const document of [linkedinWithToken(up.url), shipped('notion.yaml', up.url)]) {
      const tpl = await admin('POST', '/v1/templates', { scope: 'org', document });
      expect(tpl.status, tpl.text).toBe(201);
    }
    for (const [name, value] of [['LINKEDIN_TOKEN', 'li-token-value'], ['NOTION_API_KEY', 'ntn-key-value']]) {
      expect((await admin('POST', '/v1/secrets', { name, value })).status).toBe(201);
    }
    const created = await admin('POST', '/v1/identities/agents', { name: 'poster' });
    expect(created.status, created.text).toBe(201);
    agent = { id: created.body.identity.id, call: gw.as(created.body.key.token) };
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
  });

  it("sends Notion's version header with every action", async () => {
    const res = await admin('POST', '/v1/actions/call', { service: 'notion', action: 'search', params: { query: 'roadmap' } });
    expect(res.body.status, res.text).toBe('called');
    const [sent] = hits('/v1/search');
    expect(sent!.headers['notion-version']).toBe('2022-06-28');
    expect(sent!.headers.authorization).toBe('Bearer ntn-key-value');
    expect((await admin('POST', '/v1/actions/call', { service: 'notion', action: 'get_bot_user', params: {} })).body.status).toBe('called');
    expect(hits('/v1/users/me')[0]!.headers['notion-version']).toBe('2022-06-28');
  });

  it("sends them with a resolve lookup too: the GET is the service's own action, with its headers", async () => {
    const res = await admin('POST', '/v1/actions/call', { service: 'notion', action: 'update_page', params: { page_id: 'pg_1', archived: true } });
    expect(res.body.status, res.text).toBe('called');
    const lookup = hits('/v1/pages/pg_1').find((r) => r.method === 'GET');
    expect(lookup, 'the page_id lookup').toBeDefined();
    expect(lookup!.headers['notion-version']).toBe('2022-06-28');
    expect(hits('/v1/pages/pg_1').find((r) => r.method === 'PATCH')!.headers['notion-version']).toBe('2022-06-28');
  });

  it('lists the headers with the action, and keeps them out of its parameters', async () => {
    const service = await admin('GET', '/v1/services/linkedin');
    expect(service.status, service.text).toBe(200);
    const actions = Object.fromEntries(service.body.actions.map((a: Doc) => [a.action, a]));
    expect(actions.create_post.headers).toEqual({ 'LinkedIn-Version': '202501', 'X-Restli-Protocol-Version': '2.0.0' });
    expect(actions.create_post.parameters.map((p: Doc) => p.name)).toEqual([]);
    // /v2/userinfo is the OpenID Connect endpoint, outside the versioned /rest API.
    expect(actions.get_userinfo.headers).toBeUndefined();
  });

  it('shows the approver the headers, then sends them with the approved post', async () => {
    const params = { author: 'urn:li:person:abc', commentary: 'Shipped the gateway' };
    const raised = await agent.call('POST', '/v1/actions/call', { service: 'linkedin', action: 'create_post', params });
    expect(raised.status, raised.text).toBe(202);
    const approvalId = raised.body.approval_id as string;
    const view = await admin('GET', `/v1/approvals/${approvalId}`);
    expect(view.body.action.request).toMatchObject({
      method: 'POST',
      url: `${up.url}/rest/posts`,
      fixed_headers: { 'LinkedIn-Version': '202501', 'X-Restli-Protocol-Version': '2.0.0' },
    });
    expect((await admin('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'allow_once' })).status).toBe(200);
    await until(() => admin('GET', `/v1/approvals/${approvalId}`), (r) => r.body.execution?.status === 'executed', 30_000);
    const [sent, ...more] = hits('/rest/posts');
    expect(more).toEqual([]);
    expect(sent!.headers['linkedin-version']).toBe('202501');
    expect(sent!.headers['x-restli-protocol-version']).toBe('2.0.0');
    expect(sent!.headers.authorization).toBe('Bearer li-token-value');
    expect(JSON.parse(sent!.body)).toMatchObject({ ...params, visibility: 'PUBLIC', lifecycleState: 'PUBLISHED' });
  });

  it('refuses a caller who tries to set a fixed header, before anything is asked or sent', async () => {
    const before = up.requests.length;
    const res = await agent.call('POST', '/v1/actions/call', { service: 'linkedin', action: 'delete_post', params: { post_urn: 'urn:li:share:1', 'LinkedIn-Version': '202401' } });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.details.problems).toEqual([{ field: 'LinkedIn-Version', message: 'is not a parameter of linkedin.delete_post' }]);
    expect(res.body.approval_id).toBeUndefined();
    expect(up.requests.length).toBe(before);
  });

  it('refuses a template fixing a credential, framing or unfixed header, and saves nothing', async () => {
    const header = (name: string, schema: Doc) => {
      const doc = shipped('notion.yaml', up.url);
      doc.info.key = 'notion-bad';
      doc.paths['/v1/search'].parameters.push({ name, in: 'header', required: true, schema });
      return doc;
    };
    const cases: Array<[string, Doc]> = [
      ['Authorization', { type: 'string', const: 'Bearer leaked' }],
      ['X-Api-Token', { type: 'string', const: 'abc' }],
      ['Host', { type: 'string', const: 'evil.example' }],
      ['Transfer-Encoding', { type: 'string', const: 'chunked' }],
      ['X-Trace', { type: 'string', default: 'caller-set' }],
      ['X-Split', { type: 'string', const: 'a\r\nInjected: yes' }],
    ];
    for (const [name, schema] of cases) {
      const res = await admin('POST', '/v1/templates', { scope: 'org', document: header(name, schema) });
      expect(res.status, `${name}: ${res.text}`).toBe(422);
      expect(res.body.error.details.problems.map((p: Doc) => p.code)).toContain('invalid_parameter');
      expect(res.text).toContain(`header '${name}'`);
    }
    expect((await admin('GET', '/v1/templates')).text).not.toContain('notion-bad');
  });
});
