// The gateway's worker enters the workflow sandbox without the SDK's per-entry `vm` timeout and
// watches its workflow threads instead (server/temporal/workflow-threads.ts). On the real Temporal
// server: a workflow stuck in a loop is reported and its thread ended, and it is our watch that
// reports it — the stuck threshold is past the SDK's own 5 s, which, were it still on, would end
// each attempt first and keep the thread answering.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { createWatchedWorker } from '../../server/temporal/workflow-threads.ts';
import { connectTemporal } from '../../server/temporal/grpc-interceptors.ts';

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error };

describe('the workflow thread watch', () => {
  it('reports a workflow stuck in a loop past the SDK timeout, ends its thread and fails the worker', async () => {
    const address = inject('temporalAddress');
    const { code } = await bundleWorkflowCode({ workflowsPath: path.resolve(import.meta.dirname, '../support/workflows/stuck.ts'), logger: quiet });
    const taskQueue = `stuck-${randomUUID()}`;
    const connection = await NativeConnection.connect({ address });
    const { worker, stuck } = await createWatchedWorker(
      { connection, taskQueue, workflowBundle: { code }, shutdownForceTime: '2 seconds' },
      { stuckAfterMs: 7_000, intervalMs: 250 },
    );
    const running = worker.run().then(
      () => 'stopped',
      (err: Error) => `failed: ${err.message}`,
    );
    const clientConnection = await connectTemporal({ address });
    const client = new Client({ connection: clientConnection });
    const handle = await client.workflow.start('stuckWorkflow', { taskQueue, workflowId: `stuck-${randomUUID()}` });
    try {
      await expect(stuck).rejects.toThrow(/has not answered a workflow task for \d+ ms: workflow code stuck/);
      // The thread was ended, so the worker does not go on as if nothing happened.
      if (worker.getState() === 'RUNNING') worker.shutdown();
      expect(await running).toMatch(/^failed: /);
    } finally {
      await handle.terminate('test over').catch(() => undefined);
      await clientConnection.close();
      await connection.close().catch(() => undefined);
    }
  }, 90_000);
});
