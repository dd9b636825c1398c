import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';

describe('foundation wiring (real PostgreSQL + real Temporal)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('reports healthy and ready', async () => {
    expect((await gw.request('GET', '/healthz')).body).toEqual({ status: 'ok' });
    const ready = await gw.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', temporal: 'ok' }, down: [] });
  });

  it('runs a real workflow whose activity writes a row, readable from PostgreSQL and Temporal', async () => {
    const admin = gw.as(gw.adminToken);
    expect((await gw.request('POST', '/v1/diagnostics/ping', { body: { message: 'x' } })).status).toBe(401);
    const created = await admin('POST', '/v1/diagnostics/ping', { message: 'wiring' });
    expect(created.status).toBe(201);
    expect(created.body.workflow_id).toMatch(/^diagnostic-ping-/);
    const read = await admin('GET', `/v1/diagnostics/ping/${created.body.workflow_id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ row_id: created.body.row_id, message: 'wiring', workflow_status: 'COMPLETED' });
  });

  it('answers bad input with the typed error envelope and a request id', async () => {
    const auth = { authorization: `Bearer ${gw.adminToken}` };
    const bad = await gw.request('POST', '/v1/diagnostics/ping', { body: '{"message":', headers: auth });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
    expect(bad.body.request_id).toBe(bad.headers.get('x-request-id'));

    const unknownField = await gw.request('POST', '/v1/diagnostics/ping', { body: { message: 'x', extra: 1 }, headers: auth });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.error.details.issues[0].code).toBe('unrecognized_keys');

    const tooBig = await gw.request('POST', '/v1/diagnostics/ping', { body: { message: 'x'.repeat(2 * 1024 * 1024) }, headers: auth });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error.code).toBe('payload_too_large');

    const missing = await gw.request('GET', '/v1/no-such-thing', { headers: auth });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
  });

  it('keeps a caller-supplied request id and logs JSON lines carrying it', async () => {
    // A health poll is logged at debug (operators poll it every few seconds); any other request at info.
    const res = await gw.request('GET', '/v1/openapi.json', { headers: { 'x-request-id': 'trace-abc-123456' } });
    expect(res.headers.get('x-request-id')).toBe('trace-abc-123456');
    const line = gw.logs.map((l) => JSON.parse(l)).find((l) => l.request_id === 'trace-abc-123456');
    expect(line).toMatchObject({ level: 'info', path: '/v1/openapi.json', status: 200 });
  });

  it('serves the dashboard shell or says how to build it', async () => {
    const res = await gw.request('GET', '/');
    expect([200, 503]).toContain(res.status);
    if (res.status === 200) expect(res.text).toContain('<!doctype html>');
    else expect(res.text).toContain('npm run build');
  });
});
