// `gateway serve --role api|worker`: an API-only process starts workflows, a worker-only process
// (same database, same task queue) runs them and answers only health checks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';

describe('split roles', () => {
  let api: TestGateway;
  let worker: TestGateway;
  let up: Upstream;

  beforeAll(async () => {
    up = await startUpstream();
    api = await startTestGateway({ role: 'api' });
    worker = await startTestGateway({ role: 'worker', databaseUrl: api.databaseUrl, taskQueue: api.taskQueue, env: { GATEWAY_MASTER_KEY: api.config.masterKey!.toString('base64') } });
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.stop();
    await up?.close();
  });

  it('the worker-only process answers health checks and nothing else', async () => {
    expect((await worker.request('GET', '/healthz')).status).toBe(200);
    expect((await worker.request('GET', '/readyz')).body.status).toBe('ready');
    const v1 = await worker.request('POST', '/v1/auth/login', { body: { email: 'a@b.c', password: 'x' } });
    expect(v1.status).toBe(404);
    expect(v1.body.error.code).toBe('not_found');
  });

  it('calls made on the API-only process run on the worker-only process', async () => {
    const admin = api.as(api.adminToken);
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'split-roles-key' })).status).toBe(201);
    const res = await admin('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: 'r1' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    expect(up.requests.at(-1)!.headers['x-api-key']).toBe('split-roles-key');
    // The API process runs no worker and this task queue is unique to the pair: the worker-only
    // process executed the call above and this workflow too.
    const ping = await admin('POST', '/v1/diagnostics/ping', { message: 'split' });
    expect(ping.status).toBe(201);
  });
});
