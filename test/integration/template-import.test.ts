// POST /v1/templates/import end to end: a vendor's document becomes a draft no agent can see or
// call until it is reviewed and published; re-imports show what changed; bad input is refused
// with a 4xx, saves nothing, and never makes the gateway fetch a URL or read a file.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, type Upstream } from '../support/upstream.ts';

/** A vendor's document as published: OpenAPI 3.0, no gateway extensions, a `$ref`'d schema. */
function vendorDoc(url: string, extra: Record<string, unknown> = {}) {
  return {
    openapi: '3.0.3',
    info: { title: 'Widget Works API', version: '1.0' },
    servers: [{ url }],
    components: {
      schemas: { Widget: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, color: { type: 'string', enum: ['red', 'blue'] } } } },
    },
    paths: {
      '/widgets/{widget_id}': {
        parameters: [{ name: 'widget_id', in: 'path', required: true, schema: { type: 'string' } }],
        get: { operationId: 'getWidget', summary: 'Get a widget', responses: { 200: { description: 'ok', content: { 'application/json': {} } } } },
        delete: { operationId: 'deleteWidget', summary: 'Delete a widget', responses: { 204: { description: 'gone' } } },
      },
      '/widgets': {
        post: {
          operationId: 'createWidget',
          summary: 'Create a widget',
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Widget' } } } },
          responses: { 201: { description: 'created' } },
        },
      },
      ...extra,
    },
  };
}

describe('importing a vendor OpenAPI document', () => {
  let gw: TestGateway;
  let up: Upstream;
  let admin: ReturnType<TestGateway['as']>;
  let member: ReturnType<TestGateway['as']>;
  let agent: { id: string; key: string; call: ReturnType<TestGateway['as']> };
  let memberId: string;

  /** What the agent's MCP client finds with gateway_search, as text. */
  const mcpSearch = async (query: string): Promise<string> => {
    const client = new Client({ name: 'import-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.key}` } } }));
    try {
      return JSON.stringify(await client.callTool({ name: 'gateway_search', arguments: { query } }));
    } finally {
      await client.close();
    }
  };
  const templateKeys = async () => (await admin('GET', '/v1/templates')).body.templates.map((t: any) => t.key as string);

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway();
    admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'reviewer@example.test' });
    memberId = m.userId;
    member = gw.as(await gw.login(m.email, m.password));
    const created = await member('POST', '/v1/identities/agents', { name: 'importer-bot' });
    agent = { id: created.body.identity.id, key: created.body.key.token, call: gw.as(created.body.key.token) };
    expect((await member('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'widget-works:*:*' })).status).toBe(201);
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
  });

  it('a dry run answers the converted template and the report, and saves nothing', async () => {
    const res = await admin('POST', '/v1/templates/import', { document: vendorDoc(up.url), dry_run: true });
    expect(res.status).toBe(200);
    expect(res.body.saved).toBe(false);
    expect(res.body.report).toMatchObject({ source_format: 'openapi-3.0', key: 'widget-works', operations: 3, actions: 3, skipped: [] });
    const create = res.body.document.paths['/widgets'].post;
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['name']);
    expect(res.body.document.paths['/widgets/{widget_id}'].delete['x-gateway-risk']).toBe('delete');
    expect(await templateKeys()).not.toContain('widget-works');
  });

  it('saves a draft that no agent can list, search or call until an admin publishes it', async () => {
    expect((await member('POST', '/v1/templates/import', { document: vendorDoc(up.url), scope: 'org' })).status).toBe(403);
    expect((await agent.call('POST', '/v1/templates/import', { document: vendorDoc(up.url), scope: 'user' })).status).toBe(403);

    const saved = await admin('POST', '/v1/templates/import', { document: vendorDoc(up.url) });
    expect(saved.status).toBe(201);
    expect(saved.body.template).toMatchObject({ key: 'widget-works', tier: 'org', status: 'draft', action_count: 3 });
    const id = saved.body.template.id as string;

    const listed = (await member('GET', '/v1/templates')).body.templates.find((t: any) => t.key === 'widget-works');
    expect(listed).toMatchObject({ status: 'draft' });
    expect((await agent.call('GET', '/v1/templates')).body.templates.map((t: any) => t.key)).not.toContain('widget-works');
    expect((await agent.call('GET', '/v1/services')).body.services.map((s: any) => s.service)).not.toContain('widget-works');
    expect((await agent.call('GET', '/v1/search?q=widget')).body.results).toEqual([]);
    expect(await mcpSearch('widget')).not.toContain('getWidget');
    const hits = up.requests.length;
    const call = await agent.call('POST', '/v1/actions/call', { service: 'widget-works', action: 'getWidget', params: { widget_id: 'w1' } });
    expect(call.status).toBe(404);
    expect(up.requests.length).toBe(hits);

    // Review goes through the existing PUT: disable the delete, call reads "read" risk. It stays a draft.
    const source = (await admin('GET', `/v1/templates/${id}`)).body.source as string;
    const { parse, stringify } = await import('yaml');
    const reviewed = parse(source);
    reviewed.paths['/widgets/{widget_id}'].delete['x-gateway-disabled'] = true;
    reviewed.paths['/widgets/{widget_id}'].get.summary = 'Get widget {widget_id}';
    const put = await admin('PUT', `/v1/templates/${id}`, { document: stringify(reviewed) });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ status: 'draft', action_count: 2 });
    expect((await agent.call('GET', '/v1/search?q=widget')).body.results).toEqual([]);

    expect((await member('POST', `/v1/templates/${id}/publish`)).status).toBe(403);
    const published = await admin('POST', `/v1/templates/${id}/publish`);
    expect(published.status).toBe(200);
    expect(published.body).toMatchObject({ key: 'widget-works', status: 'published', action_count: 2 });

    const found = (await agent.call('GET', '/v1/search?q=widget')).body.results.map((r: any) => r.action);
    expect(found).toEqual(expect.arrayContaining(['getWidget', 'createWidget']));
    expect(found).not.toContain('deleteWidget');
    expect(await mcpSearch('widget')).toContain('getWidget');
    const ok = await agent.call('POST', '/v1/actions/call', { service: 'widget-works', action: 'getWidget', params: { widget_id: 'w1' } });
    expect(ok.status).toBe(200);
    expect(up.requests.at(-1)).toMatchObject({ method: 'GET', url: '/widgets/w1' });
  });

  it('a re-import shows what changed, keeps the review edits, and waits for publishing again', async () => {
    const next = vendorDoc(up.url, {
      '/widgets/{widget_id}/paint': {
        post: {
          operationId: 'paintWidget',
          summary: 'Paint a widget',
          parameters: [{ name: 'widget_id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { 200: { description: 'ok' } },
        },
      },
    });
    delete (next.paths as any)['/widgets'];
    (next.paths['/widgets/{widget_id}'] as any).get.parameters = [{ name: 'fields', in: 'query', schema: { type: 'string' } }];

    const preview = await admin('POST', '/v1/templates/import', { document: next, key: 'widget-works', dry_run: true });
    expect(preview.status).toBe(200);
    expect(preview.body.changes).toEqual({ added: ['paintWidget'], removed: ['createWidget'], changed: [{ action: 'getWidget', fields: ['parameters'] }] });
    // The reviewed summary and the disabled delete carried over.
    expect(preview.body.document.paths['/widgets/{widget_id}'].get.summary).toBe('Get widget {widget_id}');
    expect(preview.body.document.paths['/widgets/{widget_id}'].delete['x-gateway-disabled']).toBe(true);
    expect((await agent.call('GET', '/v1/search?q=widget')).body.results.map((r: any) => r.action)).toContain('createWidget');

    const saved = await admin('POST', '/v1/templates/import', { document: next, key: 'widget-works' });
    expect(saved.status).toBe(201);
    expect(saved.body.template).toMatchObject({ status: 'draft' });
    expect(saved.body.changes.added).toEqual(['paintWidget']);
    expect((await agent.call('GET', '/v1/search?q=widget')).body.results).toEqual([]);
    expect((await admin('POST', `/v1/templates/${saved.body.template.id}/publish`)).status).toBe(200);
    expect((await agent.call('GET', '/v1/search?q=paint')).body.results.map((r: any) => r.action)).toContain('paintWidget');
  });

  it('a member imports into their own scope; a relative server must be fixed before publishing', async () => {
    const doc = { ...vendorDoc('/api/v2'), info: { title: 'Relative Things', version: '1' } };
    const saved = await member('POST', '/v1/templates/import', { document: doc, scope: 'user' });
    expect(saved.status).toBe(201);
    expect(saved.body.template).toMatchObject({ key: 'relative-things', tier: 'user', owner_id: memberId, status: 'draft' });
    expect(saved.body.report.warnings.map((w: any) => w.message).join()).toMatch(/set the base URL in review/);
    const refused = await member('POST', `/v1/templates/${saved.body.template.id}/publish`);
    expect(refused.status).toBe(422);
    expect(refused.body.error.details.problems[0]).toMatchObject({ code: 'invalid_server_url', path: '/servers' });
    expect((await admin('POST', `/v1/templates/${saved.body.template.id}/publish`)).status).toBe(404);
  });

  describe('bad input gets a clear 4xx, saves nothing and reaches nothing', () => {
    let before: string[];
    let dir: string;
    beforeAll(async () => {
      before = await templateKeys();
      dir = await mkdtemp(path.join(tmpdir(), 'import-refs-'));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    const refused = async (document: unknown, reason: string) => {
      const res = await admin('POST', '/v1/templates/import', { document });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', details: { reason } });
      return res;
    };

    it('not OpenAPI, unparseable YAML, YAML bombs and deep nesting', async () => {
      await refused({ asyncapi: '2.6.0', info: { title: 'x' } }, 'not_openapi');
      await refused('openapi: 3.0.0\ninfo: [unclosed', 'unparseable');
      const laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
      for (let i = 1; i < 12; i++) laughs.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
      await refused(`openapi: 3.0.0\n${laughs.join('\n')}\n`, 'too_many_aliases');
      await refused(`openapi: 3.0.0\ninfo: ${'['.repeat(5000)}${']'.repeat(5000)}\n`, 'too_deep');
      expect(await templateKeys()).toEqual(before);
    });

    it('a $ref to a URL or a file is refused without fetching or reading it', async () => {
      const fifo = path.join(dir, 'schema.json');
      // Opening a FIFO for reading blocks until a writer comes: a gateway that tried to read it would hang, not answer.
      execFileSync('mkfifo', [fifo]);
      const hits = up.requests.length;
      for (const ref of [`${up.url}/schemas/widget.json`, `file://${fifo}`, fifo, 'schema.json#/Widget']) {
        const doc = vendorDoc(up.url);
        (doc.components.schemas as any).Widget = { $ref: ref };
        const res = await refused(doc, 'external_ref');
        expect(res.body.error.details.at).toBe('/components/schemas/Widget/$ref');
      }
      expect(up.requests.length).toBe(hits);
      expect(await templateKeys()).toEqual(before);
    });

    it('the import takes up to 20 MB; past it 413, and every other route keeps 1 MB', async () => {
      const padding = 'x'.repeat(2 * 1024 * 1024);
      const big = vendorDoc(up.url);
      (big.info as any).description = `Large. ${padding}`;
      const ok = await admin('POST', '/v1/templates/import', { document: big, dry_run: true });
      expect(ok.status).toBe(200);
      expect((await admin('POST', '/v1/templates', { document: { ...big, info: { ...big.info, key: 'big' } } })).status).toBe(413);
      const huge = JSON.stringify({ document: 'x'.repeat(21 * 1024 * 1024) });
      const res = await gw.request('POST', '/v1/templates/import', { headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/json' }, body: huge });
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe('payload_too_large');
      expect(await templateKeys()).toEqual(before);
    });
  });
});
