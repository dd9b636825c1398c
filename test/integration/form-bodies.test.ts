// Form request bodies end to end (issue 41, "form bodies"): the shipped Stripe template, its
// server pointed at a loopback upstream, sends form-encoded bodies (a covered call, and an approved
// call after an approver's edit); a template's multipart action sends text fields. Permission keys,
// disclose, redact, the stored request and the edit path all see the body object as for JSON;
// the upstream sees exactly the bytes the vendor documents. Real gateway, PostgreSQL and Temporal.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { callWorkflowId } from '../../workflows/definitions.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { historyText } from '../support/history.ts';
import { startUpstream, type RecordedRequest, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

const STRIPE_KEY = 'sk_test_form_bodies_51c2';
const TOKEN = 'form-field-token-plaintext-8e1d';
const FORM = 'application/x-www-form-urlencoded';

/** A template whose write takes a multipart body: text fields, a JSON part, a file part skipped at load. */
function uploadsDoc(baseUrl: string) {
  return {
    openapi: '3.1.0',
    info: { title: 'Uploads', key: 'uploads', version: '1' },
    servers: [{ url: baseUrl }],
    components: { securitySchemes: { api_key: { type: 'apiKey', in: 'header', name: 'X-Api-Key', default_secret_name: 'UPLOADS_KEY' } } },
    security: [{ api_key: [] }],
    paths: {
      '/notes': {
        post: {
          operationId: 'post_note',
          summary: 'Post a note to {channel}',
          'x-gateway-scope_param': 'channel',
          'x-gateway-redact': ['body.token'],
          'x-gateway-disclose': [{ label: 'Tags', filter: '.body.tags | join(", ")' }],
          requestBody: {
            required: true,
            content: {
              'multipart/form-data': {
                schema: {
                  type: 'object',
                  required: ['channel', 'text'],
                  additionalProperties: false,
                  properties: {
                    channel: { type: 'string' },
                    text: { type: 'string' },
                    tags: { type: 'array', items: { type: 'string' } },
                    layout: { type: 'object' },
                    token: { type: 'string' },
                    attachment: { type: 'string', format: 'binary' },
                  },
                },
              },
            },
          },
          responses: { '201': { description: 'posted' } },
        },
      },
    },
  };
}

describe('form request bodies through the gateway', () => {
  let gw: TestGateway;
  let up: Upstream;
  let admin: ReturnType<TestGateway['as']>;
  let agent: { id: string; call: ReturnType<TestGateway['as']> };

  const hits = (p: string): RecordedRequest[] => up.requests.filter((r) => r.url.split('?')[0] === p);
  const executed = (approvalId: string) => until(() => admin('GET', `/v1/approvals/${approvalId}`), (r) => r.body.execution?.status === 'executed', 30_000);
  const auditText = async (approvalId: string) =>
    JSON.stringify(await gw.pool.any(sql.type(z.object({ details: z.any() }))`SELECT details FROM audit_log WHERE approval_id = ${approvalId}`));

  beforeAll(async () => {
    up = await startUpstream();
    up.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'obj_1' }));
    });
    gw = await startTestGateway({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    admin = gw.as(gw.adminToken);
    // The shipped Stripe template as it is, its server at the upstream (an org template of the same key wins).
    const stripe = parse(readFileSync(path.resolve(import.meta.dirname, '..', '..', 'services', 'stripe.yaml'), 'utf8')) as Record<string, unknown>;
    stripe.servers = [{ url: up.url }];
    for (const document of [stripe, uploadsDoc(up.url)]) {
      const tpl = await admin('POST', '/v1/templates', { scope: 'org', document });
      expect(tpl.status, tpl.text).toBe(201);
    }
    for (const [name, value] of [['STRIPE_SECRET_KEY', STRIPE_KEY], ['UPLOADS_KEY', 'uploads-key']]) {
      expect((await admin('POST', '/v1/secrets', { name, value })).status).toBe(201);
    }
    const created = await admin('POST', '/v1/identities/agents', { name: 'biller' });
    expect(created.status, created.text).toBe(201);
    agent = { id: created.body.identity.id, call: gw.as(created.body.key.token) };
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
  });

  it('sends a covered Stripe write as the form Stripe documents: nested metadata as metadata[key], the key as a bearer token', async () => {
    expect((await admin('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'stripe:create_customer:*' })).status).toBe(201);
    const res = await agent.call('POST', '/v1/actions/call', {
      service: 'stripe',
      action: 'create_customer',
      params: { email: 'jane@example.com', name: 'Jane Doe', metadata: { order_id: '6735', 'plan tier': 'gold & co' } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    const [sent, ...more] = hits('/v1/customers');
    expect(more).toEqual([]);
    expect(sent!.url).toBe('/v1/customers');
    expect(sent!.headers['content-type']).toBe(FORM);
    expect(sent!.headers.authorization).toBe(`Bearer ${STRIPE_KEY}`);
    expect(sent!.body).toBe('email=jane%40example.com&name=Jane+Doe&metadata[order_id]=6735&metadata[plan+tier]=gold+%26+co');
    expect(sent!.headers['content-length']).toBe(String(Buffer.byteLength(sent!.body)));
  });

  it('keys, discloses and edits a form body as a JSON one; the approved, edited call leaves as a form', async () => {
    const params = { amount: 5000, currency: 'usd', customer: 'cus_9', payment_method_types: ['card', 'link'], metadata: { order: 'A1' } };
    const raised = await agent.call('POST', '/v1/actions/call', { service: 'stripe', action: 'create_payment_intent', params });
    expect(raised.status, raised.text).toBe(202);
    const approvalId = raised.body.approval_id as string;

    const view = await admin('GET', `/v1/approvals/${approvalId}`);
    expect(view.body.permission_keys).toEqual(['stripe:create_payment_intent:cus_9']);
    expect(view.body.action).toMatchObject({
      description: 'Create a payment intent for 5000 usd for customer cus_9',
      disclosed: [
        { label: 'Amount', value: '5000 USD' },
        { label: 'Confirm now', value: false },
      ],
      request: { method: 'POST', body: { ...params, confirm: false } },
    });
    // The edit form lists the body's fields, as for a JSON body.
    const form = await admin('GET', `/v1/approvals/${approvalId}/edit`);
    expect(form.body.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(
      expect.arrayContaining(['body:amount', 'body:currency', 'body:customer', 'body:metadata', 'body:payment_method_types']),
    );
    // Moving the scope field (the customer) widens the key: refused.
    expect((await admin('POST', `/v1/approvals/${approvalId}/edit-preview`, { params: { customer: 'cus_other' } })).status).toBe(422);
    // A field name the form cannot carry is refused by name, as a JSON body's bad field would be.
    const bad = await admin('POST', `/v1/approvals/${approvalId}/edit-preview`, { params: { metadata: { 'a][b': 'x' } } });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.text).toContain('metadata.a][b');

    const resolved = await admin('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'allow_once', params: { amount: 50, metadata: { order: 'A1', note: 'cut' } } });
    expect(resolved.status, resolved.text).toBe(200);
    expect(resolved.body).toMatchObject({
      modified_by_approver: true,
      edited_permission_keys: ['stripe:create_payment_intent:cus_9'],
      diff: expect.arrayContaining([{ field: 'body.amount', before: 5000, after: 50 }]),
    });
    await executed(approvalId);
    const [sent, ...more] = hits('/v1/payment_intents');
    expect(more).toEqual([]);
    expect(sent!.headers['content-type']).toBe(FORM);
    expect(sent!.body).toBe(
      'amount=50&currency=usd&customer=cus_9&payment_method_types[]=card&payment_method_types[]=link&metadata[order]=A1&metadata[note]=cut&confirm=false',
    );
    const resumed = await agent.call('POST', '/v1/actions/call', { approval_id: approvalId });
    expect(resumed.body).toMatchObject({ status: 'called', modified_by_approver: true, result: { status_code: 200 } });
  });

  it('refuses a form value the encoding cannot carry before anything is asked or sent', async () => {
    const before = up.requests.length;
    const res = await agent.call('POST', '/v1/actions/call', {
      service: 'stripe',
      action: 'create_refund',
      params: { payment_intent: 'pi_1', metadata: { 'x[y]': 'nested?' } },
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.details.problems).toEqual([{ field: 'metadata.x[y]', message: 'a form field name cannot contain [ or ]' }]);
    expect(res.body.approval_id).toBeUndefined();
    expect(up.requests.length).toBe(before);
  });

  it('sends a multipart body as text parts and a JSON part, redacting a field everywhere but upstream', async () => {
    const raised = await agent.call('POST', '/v1/actions/call', {
      service: 'uploads',
      action: 'post_note',
      params: { channel: 'ops', text: 'Line one\r\nLine "two"', tags: ['a', 'b'], layout: { cols: 2 }, token: TOKEN },
    });
    expect(raised.status, raised.text).toBe(202);
    const approvalId = raised.body.approval_id as string;
    const view = await admin('GET', `/v1/approvals/${approvalId}`);
    expect(view.body.permission_keys).toEqual(['uploads:post_note:ops']);
    expect(view.body.action).toMatchObject({ disclosed: [{ label: 'Tags', value: 'a, b' }], request: { body: { channel: 'ops', token: '[REDACTED]' } } });
    expect(JSON.stringify(view.body)).not.toContain(TOKEN);
    // The skipped file part is not a field an agent can send.
    const file = await agent.call('POST', '/v1/actions/call', { service: 'uploads', action: 'post_note', params: { channel: 'ops', text: 't', attachment: 'AAAA' } });
    expect(file.status, file.text).toBe(400);
    expect(file.text).toContain('attachment');

    expect((await admin('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'allow_once' })).status).toBe(200);
    await executed(approvalId);
    const [sent, ...more] = hits('/notes');
    expect(more).toEqual([]);
    const type = String(sent!.headers['content-type']);
    const boundary = /^multipart\/form-data; boundary=([0-9a-f]{32})$/.exec(type)?.[1];
    expect(boundary, type).toBeDefined();
    const part = (name: string, value: string, json = false) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n${json ? 'Content-Type: application/json\r\n' : ''}\r\n${value}\r\n`;
    expect(sent!.body).toBe(
      part('channel', 'ops') + part('text', 'Line one\r\nLine "two"') + part('tags', 'a') + part('tags', 'b') + part('layout', '{"cols":2}', true) + part('token', TOKEN) + `--${boundary}--\r\n`,
    );
    // A real multipart parser reads the same fields back.
    const parsed = await new Response(sent!.body, { headers: { 'content-type': type } }).formData();
    expect(parsed.getAll('tags')).toEqual(['a', 'b']);
    expect(parsed.get('text')).toBe('Line one\r\nLine "two"');

    // Redacted everywhere it is kept: the approval, the audit, the workflow's history, the logs.
    expect(await auditText(approvalId)).not.toContain(TOKEN);
    const callId = view.body.call_id ?? raised.body.call_id;
    const history = await gw.temporal.workflow.getHandle(callWorkflowId(callId)).fetchHistory();
    expect(historyText(history)).not.toContain(TOKEN);
    expect(gw.logs.join('\n')).not.toContain(TOKEN);
  });
});
