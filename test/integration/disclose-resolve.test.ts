// `disclose` and parameter `resolve` end to end: real PostgreSQL, real Temporal, a real upstream
// on loopback that serves the calls and the name lookups.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, type RecordedRequest, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

const SECRET = 'sk_disclose_KNOWN_SECRET_1357';
const PASSWORD = 'hunter2-DISCLOSE-PASSWORD';
const TOKEN = 'tok-QUERY-SECRET-2468';


const pathParam = (name: string, extra: Record<string, unknown> = {}) => ({ name, in: 'path', required: true, schema: { type: 'string' }, ...extra });
const jsonBody = (properties: Record<string, unknown>, required: string[] = []) => ({
  required: true,
  content: { 'application/json': { schema: { type: 'object', required, properties, additionalProperties: false } } },
});

/** A widgets-like service whose actions exercise disclose and resolve. */
function discloseServiceDoc(key: string, baseUrl: string) {
  return {
    openapi: '3.1.0',
    info: { title: `Disclosing widgets (${key})`, key, version: '1' },
    servers: [{ url: baseUrl }],
    components: {
      securitySchemes: { api_key: { type: 'apiKey', in: 'header', name: 'X-Api-Key', default_secret_name: 'WIDGETS_KEY' } },
    },
    security: [{ api_key: [] }],
    paths: {
      '/items': {
        post: {
          operationId: 'create_item',
          summary: 'Create item "{name}"',
          'x-gateway-redact': ['body.password'],
          'x-gateway-disclose': [
            { label: 'Name', filter: '.body.name' },
            { label: 'Note', filter: '.body.note', max_chars: 12 },
            { label: 'Password', filter: '.body.password' },
            { label: 'Everything', filter: '.body' },
            { label: 'Broken', filter: 'error("no such thing")' },
            { label: 'Tags', filter: '.body.tags[] | ascii_upcase' },
          ],
          requestBody: jsonBody({ name: { type: 'string' }, note: { type: 'string' }, password: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } }, ['name']),
          responses: { '201': { description: 'created' } },
        },
      },
      '/spin': {
        post: {
          operationId: 'spin',
          summary: 'Spin {speed}',
          'x-gateway-disclose': [
            { label: 'Forever', filter: 'def f: f; f' },
            { label: 'Until never', filter: 'until(false; .)' },
            { label: 'Speed', filter: '.body.speed' },
          ],
          requestBody: jsonBody({ speed: { type: 'string' } }, ['speed']),
          responses: { '200': { description: 'ok' } },
        },
      },
      '/search': {
        get: {
          operationId: 'search',
          summary: 'Search for {q}',
          'x-gateway-redact': ['params.token'],
          'x-gateway-disclose': [
            { label: 'URL', filter: '.url' },
            { label: 'Params', filter: '.params' },
            { label: 'Raw token', filter: '.params.token' },
          ],
          parameters: [
            { name: 'q', in: 'query', required: true, schema: { type: 'string' } },
            { name: 'token', in: 'query', required: true, schema: { type: 'string' } },
          ],
          responses: { '200': { description: 'ok' } },
        },
      },
      '/folders/{folder_id}': {
        get: {
          operationId: 'get_folder',
          summary: 'Read folder {folder_id}',
          'x-gateway-scope_param': 'folder_id',
          parameters: [pathParam('folder_id')],
          responses: { '200': { description: 'ok' } },
        },
      },
      '/folders/{folder_id}/items': {
        get: {
          operationId: 'list_folder',
          summary: 'List items in folder {folder_id}',
          parameters: [pathParam('folder_id', { 'x-gateway-resolve': { get: '/folders/{folder_id}', pick: 'folder.name' } })],
          responses: { '200': { description: 'ok' } },
        },
      },
      '/compare/{a}/{b}': {
        get: {
          operationId: 'compare',
          summary: 'Compare {a} with {b}',
          parameters: [
            pathParam('a', { 'x-gateway-resolve': { get: '/folders/{a}', pick: 'folder.name' } }),
            pathParam('b', { 'x-gateway-resolve': { get: '/folders/{b}', pick: 'folder.name' } }),
          ],
          responses: { '200': { description: 'ok' } },
        },
      },
    },
  };
}

describe('disclose and resolve', () => {
  let gw: TestGateway;
  let up: Upstream;
  let admin: ReturnType<TestGateway['as']>;
  let human: ReturnType<TestGateway['as']>;
  let agent: { id: string; call: ReturnType<TestGateway['as']> };
  let secretId: string;

  const lookups = (path: string): RecordedRequest[] => up.requests.filter((r) => r.url === path);

  beforeAll(async () => {
    up = await startUpstream();
    up.handle((r, res) => {
      const folder = /^\/folders\/([^/?]+)$/.exec(r.url)?.[1];
      if (folder === 'f1') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ folder: { id: 'f1', name: 'Quarterly reports' } }));
      } else if (folder === 'f2') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ folder: { id: 'f2', name: 'Invoices' } }));
      } else if (folder === 'slow') {
        setTimeout(() => {
          if (!res.destroyed) {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ folder: { name: 'Too late' } }));
          }
        }, 6_000);
      } else if (folder === 'nameless') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ folder: { id: 'nameless' } }));
      } else if (folder !== undefined) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'not found' }));
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, method: r.method, url: r.url }));
      }
    });
    gw = await startTestGateway();
    admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const m = await seedUser(gw.databaseUrl, { orgId, email: 'discloser@example.test' });
    human = gw.as(await gw.login(m.email, m.password));
    const created = await admin('POST', '/v1/templates', { scope: 'org', document: discloseServiceDoc('discl', up.url) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const secret = await human('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: SECRET });
    expect(secret.status).toBe(201);
    secretId = secret.body.id;
    const res = await human('POST', '/v1/identities/agents', { name: 'discloser' });
    expect(res.status).toBe(201);
    agent = { id: res.body.identity.id, call: gw.as(res.body.key.token) };
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
  });

  it('shows disclosed values in the pending approval, the resolve answer and the audit row', async () => {
    const note = 'Please file this under the quarterly numbers';
    const res = await agent.call('POST', '/v1/actions/call', {
      service: 'discl',
      action: 'create_item',
      params: { name: 'report', note, password: PASSWORD, tags: ['a', 'b'] },
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'pending_approval', action_description: 'Create item "report"' });
    const expected = [
      { label: 'Name', value: 'report' },
      { label: 'Note', value: 'Please file…' }, // max_chars 12, the ellipsis included
      { label: 'Password', value: '[REDACTED]' }, // redact wins over disclose
      { label: 'Everything', value: { name: 'report', note, password: '[REDACTED]', tags: ['a', 'b'] } },
      { label: 'Broken', value: null, error: true },
      { label: 'Tags', value: ['A', 'B'] }, // several outputs: a list
    ];

    const view = await human('GET', `/v1/approvals/${res.body.approval_id}`);
    expect(view.status).toBe(200);
    expect(view.body.action.disclosed).toEqual(expected);
    expect((view.body.action.disclosed[1].value as string).length).toBe(12);

    const audit = await until(
      () => admin('GET', '/v1/audit?event=approval.raised&limit=200'),
      (r) => r.body.entries.some((e: any) => e.approval_id === res.body.approval_id),
    );
    const raised = audit.body.entries.find((e: any) => e.approval_id === res.body.approval_id);
    expect(raised.details.disclosed).toEqual(expected);

    const resolved = await human('POST', `/v1/approvals/${res.body.approval_id}/resolve`, { decision: 'deny', reason: 'not today' });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ status: 'denied', disclosed: expected });

    const everything = JSON.stringify([view.body, audit.body, resolved.body]);
    expect(everything).not.toContain(PASSWORD);
    expect(everything).not.toContain(SECRET);
  });

  // The filter's own time bound (500 ms) is what ends it; the test's timeout bounds the answer. No
  // wall-clock assertion here: on a busy machine that would measure the machine, not the gateway.
  it('cuts off filters that never end: the call still answers', async () => {
    const res = await agent.call('POST', '/v1/actions/call', { service: 'discl', action: 'spin', params: { speed: 'fast' } });
    expect(res.status).toBe(202);
    const expected = [
      { label: 'Forever', value: null, error: true },
      { label: 'Until never', value: null, error: true },
      { label: 'Speed', value: 'fast' },
    ];
    const view = await human('GET', `/v1/approvals/${res.body.approval_id}`);
    expect(view.body.action.disclosed).toEqual(expected);

    // A covered call too: it executes, and its call.called audit row carries the values.
    expect((await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'discl:spin:*' })).status).toBe(201);
    const called = await agent.call('POST', '/v1/actions/call', { service: 'discl', action: 'spin', params: { speed: 'slow' } });
    expect(called.status).toBe(200);
    expect(called.body).toMatchObject({ status: 'called', result: { status_code: 200, body: { url: '/spin' } } });
    const audit = await until(
      () => admin('GET', '/v1/audit?event=call.called&limit=200'),
      (r) => r.body.entries.some((e: any) => e.action === 'spin'),
    );
    const row = audit.body.entries.find((e: any) => e.action === 'spin');
    expect(row.details.disclosed).toEqual([expected[0], expected[1], { label: 'Speed', value: 'slow' }]);
    // The gateway process keeps a clean exit code although jq failed inside the workers.
    expect(process.exitCode ?? 0).toBe(0);
  });

  it('never shows a redacted query parameter through disclose, not even inside the URL', async () => {
    const res = await agent.call('POST', '/v1/actions/call', { service: 'discl', action: 'search', params: { q: 'cats', token: TOKEN } });
    expect(res.status).toBe(202);
    const view = await human('GET', `/v1/approvals/${res.body.approval_id}`);
    const disclosed = view.body.action.disclosed;
    expect(disclosed).toEqual([
      { label: 'URL', value: `${up.url}/search?q=cats&token=%5BREDACTED%5D` },
      { label: 'Params', value: { q: 'cats', token: '[REDACTED]' } },
      { label: 'Raw token', value: '[REDACTED]' },
    ]);
    expect(JSON.stringify(view.body)).not.toContain(TOKEN);
  });

  it('runs no lookup for a call the agent may not make: raw ids for the agent, names in the approver\'s view', async () => {
    const before = lookups('/folders/f1').length;
    const res = await agent.call('POST', '/v1/actions/call', { service: 'discl', action: 'list_folder', params: { folder_id: 'f1' } });
    expect(res.status).toBe(202);
    expect(res.body.action_description).toBe('List items in folder f1');
    expect(lookups('/folders/f1').length).toBe(before);
    // The requester's own view of its approval keeps the id: it may not read the folder.
    expect((await agent.call('GET', `/v1/approvals/${res.body.approval_id}`)).body.action.description).toBe('List items in folder f1');
    expect(lookups('/folders/f1').length).toBe(before);
    // The approver (a person: never checked) sees the name, looked up with the approver's authority.
    const view = await human('GET', `/v1/approvals/${res.body.approval_id}`);
    expect(view.body.action.description).toBe('List items in folder Quarterly reports');
    expect(lookups('/folders/f1').length).toBe(before + 1);
    expect(lookups('/folders/f1').at(-1)!.headers['x-api-key']).toBe(SECRET);
    // The upstream call itself still carries the id.
    expect(view.body.action.request).toMatchObject({ params: { folder_id: 'f1' }, url: `${up.url}/folders/f1/items` });
  });

  it('runs a lookup that is itself a read the agent is permitted, and only that one', async () => {
    expect((await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'discl:get_folder:f1' })).status).toBe(201);
    const before = { f1: lookups('/folders/f1').length, f2: lookups('/folders/f2').length };
    const res = await agent.call('POST', '/v1/actions/call', { service: 'discl', action: 'compare', params: { a: 'f1', b: 'f2' } });
    expect(res.status).toBe(202);
    expect(res.body.action_description).toBe('Compare Quarterly reports with f2');
    expect(lookups('/folders/f1').length).toBe(before.f1 + 1);
    expect(lookups('/folders/f2').length).toBe(before.f2);
  });

  it('resolves an id into a readable name with the service credential when the call is covered, once per distinct lookup', async () => {
    for (const pattern of ['discl:list_folder:*', 'discl:compare:*']) {
      expect((await human('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern })).status).toBe(201);
    }
    const before = lookups('/folders/f1').length;
    const res = await agent.call('POST', '/v1/actions/call', { service: 'discl', action: 'list_folder', params: { folder_id: 'f1' } });
    expect(res.status).toBe(200);
    expect(res.body.action_description).toBe('List items in folder Quarterly reports');
    const calls = lookups('/folders/f1');
    expect(calls.length).toBe(before + 1);
    expect(calls.at(-1)!.method).toBe('GET');
    expect(calls.at(-1)!.headers['x-api-key']).toBe(SECRET);

    // Two parameters with the same lookup URL: one fetch; different ids: one fetch each.
    const f2 = lookups('/folders/f2').length;
    const same = await agent.call('POST', '/v1/actions/call', { service: 'discl', action: 'compare', params: { a: 'f1', b: 'f1' } });
    expect(same.body.action_description).toBe('Compare Quarterly reports with Quarterly reports');
    expect(lookups('/folders/f1').length).toBe(before + 2);
    const both = await agent.call('POST', '/v1/actions/call', { service: 'discl', action: 'compare', params: { a: 'f1', b: 'f2' } });
    expect(both.body.action_description).toBe('Compare Quarterly reports with Invoices');
    expect(lookups('/folders/f1').length).toBe(before + 3);
    expect(lookups('/folders/f2').length).toBe(f2 + 1);
  });

  it('falls back to the raw id when a lookup fails, finds nothing or times out', async () => {
    // Covered calls (rules of the previous test), so the lookups run.
    const missing = await agent.call('POST', '/v1/actions/call', { service: 'discl', action: 'list_folder', params: { folder_id: 'gone' } });
    expect(missing.status).toBe(200);
    expect(missing.body.action_description).toBe('List items in folder gone');
    expect(lookups('/folders/gone').length).toBe(1);

    const nameless = await agent.call('POST', '/v1/actions/call', { service: 'discl', action: 'list_folder', params: { folder_id: 'nameless' } });
    expect(nameless.body.action_description).toBe('List items in folder nameless');

    // A lookup slower than the 2 s budget is given up on: the id stays, the call goes on.
    const started = Date.now();
    const slow = await agent.call('POST', '/v1/actions/call', { service: 'discl', action: 'list_folder', params: { folder_id: 'slow' } });
    expect(slow.status).toBe(200);
    expect(slow.body.action_description).toBe('List items in folder slow');
    expect(lookups('/folders/slow').length).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900); // it did wait for the budget

    // Only the failed lookup falls back: another id in the same call still resolves.
    const mixed = await agent.call('POST', '/v1/actions/call', { service: 'discl', action: 'compare', params: { a: 'gone', b: 'f2' } });
    expect(mixed.body.action_description).toBe('Compare gone with Invoices');
  });

  it('looks nothing up when the service credential is missing: the call is refused before any lookup', async () => {
    expect((await admin('DELETE', `/v1/secrets/${secretId}`)).status).toBe(204);
    const before = lookups('/folders/f2').length;
    const res = await agent.call('POST', '/v1/actions/call', { service: 'discl', action: 'list_folder', params: { folder_id: 'f2' } });
    expect(res.status).toBe(424);
    expect(res.body.error.code).toBe('credential_missing');
    expect(lookups('/folders/f2').length).toBe(before);
  });
});
