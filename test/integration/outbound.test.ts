// The outbound side (issue 6 items 5, 6 and 8): result shapes, binary downloads, raw HTTP with
// per-call secret injection, private-address refusal (also after redirects), credentials never
// following a redirect off-origin, size and time limits, and the per-agent rate limit.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';

const SECRET = 'sk_outbound_KNOWN_9731';
const RAW_SECRET = 'raw-injected-KNOWN-5555';

function binaryDoc(key: string, baseUrl: string) {
  const doc = upstreamServiceDoc(key, baseUrl) as any;
  doc.paths['/files/{id}'] = {
    get: {
      operationId: 'download_file',
      summary: 'Download file {id}',
      'x-gateway-response_type': 'binary',
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: { '200': { description: 'bytes' } },
    },
  };
  doc.paths['/big'] = { get: { operationId: 'get_big', summary: 'Big body', responses: { '200': { description: 'ok' } } } };
  doc.paths['/slow'] = { get: { operationId: 'get_slow', summary: 'Slow', responses: { '200': { description: 'ok' } } } };
  doc.paths['/status/{code}'] = {
    get: {
      operationId: 'get_status',
      summary: 'Status {code}',
      parameters: [{ name: 'code', in: 'path', required: true, schema: { type: 'integer' } }],
      responses: { '200': { description: 'ok' } },
    },
  };
  doc.paths['/redirect'] = { get: { operationId: 'follow_redirect', summary: 'Redirect', responses: { '302': { description: 'moved' } } } };
  return doc;
}

describe('outbound HTTP: results, safety and limits', () => {
  let gw: TestGateway;
  let up: Upstream;
  let other: Upstream;
  let admin: ReturnType<TestGateway['as']>;
  let agentKey: string;
  const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 256));
  let redirectTarget = '';

  beforeAll(async () => {
    up = await startUpstream();
    other = await startUpstream();
    up.handle((r, res) => {
      if (r.url.startsWith('/files/')) {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return res.end(bytes);
      }
      if (r.url === '/big') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ blob: 'x'.repeat(20_000) }));
      }
      if (r.url === '/huge') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end('y'.repeat(200_000));
      }
      if (r.url === '/slow') {
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"late":true}');
        }, 2_000);
        return;
      }
      const status = /^\/status\/(\d+)/.exec(r.url);
      if (status) {
        res.writeHead(Number(status[1]), { 'content-type': 'application/json', 'x-upstream': 'yes' });
        return res.end(JSON.stringify({ code: Number(status[1]) }));
      }
      if (r.url.startsWith('/redirect')) {
        res.writeHead(302, { location: redirectTarget });
        return res.end();
      }
      res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      res.end(JSON.stringify({ ok: true, path: r.url.split('?')[0] }));
    });
    gw = await startTestGateway({
      env: { OUTBOUND_ALLOWLIST: 'localhost', UPSTREAM_TIMEOUT_MS: '700', UPSTREAM_MAX_RESPONSE_BYTES: '100000', GATEWAY_RATE_LIMIT_PER_MINUTE: '20' },
    });
    admin = gw.as(gw.adminToken);
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: binaryDoc('files', up.url) })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: SECRET })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'RAW_TOKEN', value: RAW_SECRET, allowed_hosts: ['localhost'] })).status).toBe(201);
    const agent = await admin('POST', '/v1/identities/agents', { name: 'fetcher' });
    agentKey = agent.body.key.token;
    await admin('POST', `/v1/identities/${agent.body.identity.id}/rules`, { effect: 'allow', pattern: 'files:*:*' });
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
    await other?.close();
  });

  const call = (body: unknown, token = gw.adminToken) => gw.as(token)('POST', '/v1/actions/call', body);

  it('returns a download handle for binary actions, readable by the requester chain only', async () => {
    const res = await call({ service: 'files', action: 'download_file', params: { id: 'f1' } }, agentKey);
    expect(res.status).toBe(200);
    const d = res.body.result.body.download;
    expect(d).toMatchObject({ content_type: 'application/octet-stream', size: bytes.length });
    expect(d.url).toBe(`${gw.config.publicUrl}/v1/downloads/${d.id}`);
    const got = await fetch(`${gw.url}/v1/downloads/${d.id}`, { headers: { authorization: `Bearer ${agentKey}` } });
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer())).toEqual(bytes);
    const stranger = (await admin('POST', '/v1/identities/agents', { name: 'stranger' })).body.key.token;
    expect((await fetch(`${gw.url}/v1/downloads/${d.id}`, { headers: { authorization: `Bearer ${stranger}` } })).status).toBe(404);
    expect((await fetch(`${gw.url}/v1/downloads/${d.id}`, { headers: { authorization: `Bearer ${gw.adminToken}` } })).status).toBe(200);
  });

  it('caps compact bodies at 8 KiB with a marker, and returns headers and the raw body when verbose', async () => {
    const compact = await call({ service: 'files', action: 'get_big' });
    expect(compact.body.result.truncated).toBe(true);
    expect(compact.body.result.body).toMatch(/…\[truncated\]$/);
    expect(Buffer.byteLength(compact.body.result.body)).toBeLessThan(8 * 1024 + 20);
    const verbose = await call({ service: 'files', action: 'get_big', verbose: true });
    expect(verbose.body.result.headers['x-upstream']).toBeUndefined();
    expect(verbose.body.result.headers['content-type']).toBe('application/json');
    expect(typeof verbose.body.result.body).toBe('string');
    expect(JSON.parse(verbose.body.result.body).blob).toHaveLength(20_000);
  });

  it('reports upstream non-2xx as a called result with that status', async () => {
    const res = await call({ service: 'files', action: 'get_status', params: { code: 503 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'called', result: { status_code: 503, body: { code: 503 } } });
  });

  it('types network failures, timeouts and oversized responses', async () => {
    const slow = await call({ service: 'files', action: 'get_slow' });
    expect(slow.body.error.code).toBe('upstream_timeout');
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const dead = await call({ service: 'http', method: 'GET', path: `http://localhost:${port}/x` });
    expect(dead.body.error.code).toBe('upstream_unreachable');
    const huge = await call({ service: 'http', method: 'GET', path: `http://localhost:${up.port}/huge` });
    expect(huge.body.error.code).toBe('upstream_error');
    expect(huge.body.error.details.limit_bytes).toBe(100_000);
  });

  it('injects a per-call vault secret for raw HTTP (header or query), never anywhere else', async () => {
    const before = up.requests.length;
    const res = await call({
      service: 'http',
      method: 'POST',
      path: `http://localhost:${up.port}/raw?x=1`,
      body: { hello: 'world' },
      secret: { name: 'RAW_TOKEN', in: 'header', param: 'Authorization', prefix: 'Token ' },
    });
    expect(res.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    const seen = up.requests[before]!;
    expect(seen.headers.authorization).toBe(`Token ${RAW_SECRET}`);
    expect(JSON.parse(seen.body)).toEqual({ hello: 'world' });
    const q = await call({ service: 'http', method: 'GET', path: `http://localhost:${up.port}/q`, secret: { name: 'RAW_TOKEN', in: 'query', param: 'api_key' } });
    expect(q.body.status).toBe('called');
    expect(up.requests.at(-1)!.url).toBe(`/q?api_key=${RAW_SECRET}`);
    // Secret injection belongs to the http service only.
    const bad = await call({ service: 'files', method: 'GET', path: '/items/x', secret: { name: 'RAW_TOKEN', in: 'header', param: 'X' } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(res.body) + JSON.stringify(q.body)).not.toContain(RAW_SECRET);
    expect(gw.logs.join('\n')).not.toContain(RAW_SECRET);
  });

  it('refuses private addresses for raw HTTP, including behind a redirect', async () => {
    const direct = await call({ service: 'http', method: 'GET', path: `http://127.0.0.1:${up.port}/private` });
    expect(direct.status).toBe(403);
    expect(direct.body.error.message).toMatch(/private or reserved address/);
    const metadata = await call({ service: 'http', method: 'GET', path: 'http://169.254.169.254/latest/meta-data/' });
    expect(metadata.status).toBe(403);
    const before = other.requests.length;
    redirectTarget = `http://127.0.0.1:${other.port}/internal`;
    const redirected = await call({ service: 'http', method: 'GET', path: `http://localhost:${up.port}/redirect` });
    expect(redirected.status).toBe(403);
    expect(other.requests.length).toBe(before);
    expect(up.requests.some((r) => r.url === '/private')).toBe(false);
  });

  it('lets a service instance reach only its own hosts, and drops credentials on an off-origin redirect', async () => {
    const offHost = await call({ service: 'files', method: 'GET', path: `http://localhost:${other.port}/x` });
    expect(offHost.status).toBe(400);
    const before = other.requests.length;
    redirectTarget = `http://localhost:${other.port}/landing`;
    const res = await call({ service: 'files', action: 'follow_redirect' });
    expect(res.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    expect(other.requests.length).toBe(before + 1);
    expect(other.requests.at(-1)!.headers['x-api-key']).toBeUndefined();
    expect(up.requests.at(-1)!.headers['x-api-key']).toBe(SECRET);
  });

  it('limits each identity with a token bucket, answering 429 with Retry-After', async () => {
    const limited = (await admin('POST', '/v1/identities/agents', { name: 'chatty' })).body.key.token;
    // 30 calls at once against a bucket of 20 (refilled at 20/min): however slow this machine is,
    // at most 20 + what refilled meanwhile pass, and the rest are refused.
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => call({ service: 'files', action: 'get_item', params: { id: String(i) } }, limited)));
    const refilled = Math.ceil(((Date.now() - started) / 60_000) * 20);
    const passed = answers.filter((a) => a.status !== 429).length;
    expect(passed).toBeGreaterThanOrEqual(20);
    expect(passed).toBeLessThanOrEqual(20 + refilled);
    const last = answers.find((a) => a.status === 429) ?? (await call({ service: 'files', action: 'get_item', params: { id: 'x' } }, limited));
    expect(last.status).toBe(429);
    expect(last.body.error.code).toBe('rate_limited');
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Another identity is unaffected.
    expect((await call({ service: 'files', action: 'get_item', params: { id: 'y' } }, agentKey)).status).not.toBe(429);
  });

  it('refuses request bodies over 1 MiB', async () => {
    const res = await call({ service: 'http', method: 'POST', path: `http://localhost:${up.port}/x`, body: { blob: 'z'.repeat(1_100_000) } });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });
});
