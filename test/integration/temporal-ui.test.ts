// The Temporal UI the embedded dev server ships is read-only: its settings say so (the UI hides
// its buttons) and its HTTP API refuses every write, so nobody who reaches the UI can signal,
// update, cancel or terminate a call's workflow. Against the dev server exactly as `serve` starts it.
import { randomBytes } from 'node:crypto';
import type { Connection } from '@temporalio/client';
import { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTemporalDevServer, type DevServer } from '../../server/embedded/temporal-dev-server.ts';
import { freePort } from '../../server/embedded/processes.ts';
import { createLogger } from '../../server/logger.ts';
import { connectTemporal } from '../../server/temporal/grpc-interceptors.ts';

describe('embedded Temporal UI', () => {
  let dev: DevServer;
  let connection: Connection;
  let client: Client;
  let ui: string;
  const workflowId = `ui-read-only-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    dev = await startTemporalDevServer({
      cliPath: inject('temporalCliPath'),
      namespace: 'default',
      port: await freePort(),
      uiPort: await freePort(),
      logger: createLogger('warn'),
    });
    ui = dev.uiUrl!;
    connection = await connectTemporal({ address: dev.address });
    client = new Client({ connection, namespace: 'default' });
    // A workflow nobody polls for stays running: what a pending call looks like to the UI.
    await client.workflow.start('pendingCall', { taskQueue: 'nobody-polls', workflowId });
  });

  afterAll(async () => {
    await connection?.close();
    await dev?.stop();
  });

  /** A request as the UI's own page makes it; an Authorization header spares the CSRF cookie. */
  const uiRequest = (method: string, path: string, body?: unknown) =>
    fetch(ui + path, {
      method,
      headers: { authorization: 'Bearer anyone', 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });

  it('reports every write action disabled in its settings', async () => {
    const res = await uiRequest('GET', '/api/v1/settings');
    expect(res.status).toBe(200);
    const settings = (await res.json()) as Record<string, unknown>;
    for (const flag of [
      'DisableWriteActions',
      'WorkflowTerminateDisabled',
      'WorkflowCancelDisabled',
      'WorkflowSignalDisabled',
      'WorkflowUpdateDisabled',
      'WorkflowResetDisabled',
      'BatchActionsDisabled',
      'StartWorkflowDisabled',
    ]) {
      expect(settings[flag], flag).toBe(true);
    }
    expect(settings.Version).toEqual(expect.any(String)); // the UI server's own answer, passed on
  });

  it('still shows workflows (reads pass)', async () => {
    // The UI server dials Temporal while the dev server is still starting: until its gRPC
    // connection is back from backoff it answers 503.
    let res: Response;
    do {
      res = await uiRequest('GET', `/api/v1/namespaces/default/workflows/${workflowId}`);
      if (res.status === 503) await new Promise((r) => setTimeout(r, 500));
    } while (res.status === 503);
    expect(res.status).toBe(200);
    expect(JSON.stringify(await res.json())).toContain(workflowId);
  });

  it('refuses signal, update, cancel, terminate, reset and start, and the workflow is untouched', async () => {
    const base = `/api/v1/namespaces/default/workflows/${workflowId}`;
    const writes: Array<[string, string, unknown]> = [
      ['POST', `${base}/signal/decision`, { input: { payloads: [] } }],
      ['POST', `${base}/update/decide`, { request: { input: { name: 'decide' } } }],
      ['POST', `${base}/cancel`, {}],
      ['POST', `${base}/terminate`, { reason: 'from the UI' }],
      ['POST', `${base}/reset`, { reason: 'from the UI' }],
      ['POST', `/api/v1/namespaces/default/workflows/started-from-ui`, { workflowType: { name: 'x' }, taskQueue: { name: 'nobody-polls' } }],
      ['DELETE', `${base}`, undefined],
      // An id with an escaped "/query/" must not pass for a (read-only) query.
      ['POST', `/api/v1/namespaces/default/workflows/x%2Fquery%2Fy/terminate`, { reason: 'smuggled' }],
    ];
    for (const [method, path, body] of writes) {
      const res = await uiRequest(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(405);
    }
    const described = await client.workflow.getHandle(workflowId).describe();
    expect(described.status.name).toBe('RUNNING');
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    expect(history.events?.some((e) => e.workflowExecutionSignaledEventAttributes || e.workflowExecutionCancelRequestedEventAttributes)).toBe(false);
  });
});
