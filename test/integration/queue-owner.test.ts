// The task-queue claim against a real Temporal namespace: a queue is owned by the first database
// that claims it, and gateways starting together (their claims are conditional namespace updates
// that fail each other) all get their own queues.
import { randomUUID } from 'node:crypto';
import type { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../server/logger.ts';
import { claimTaskQueue, ownerKey, TaskQueueTakenError } from '../../server/temporal/queue-owner.ts';
import { connectTemporal } from '../../server/temporal/grpc-interceptors.ts';

describe('task queue ownership in the namespace', () => {
  let connection: Connection;
  const logger = createLogger('silent');
  const claim = (taskQueue: string, instanceId: string) =>
    claimTaskQueue({ connection, namespace: 'default', taskQueue, address: inject('temporalAddress'), instanceId, logger });

  beforeAll(async () => {
    connection = await connectTemporal({ address: inject('temporalAddress') });
  });
  afterAll(async () => {
    await connection?.close();
  });

  it('keeps a queue for the database that claimed it first', async () => {
    const queue = `owner-${randomUUID()}`;
    const [a, b] = [randomUUID(), randomUUID()];
    await claim(queue, a);
    await claim(queue, a); // a restart of the same gateway
    await expect(claim(queue, b)).rejects.toBeInstanceOf(TaskQueueTakenError);
    const data = (await connection.workflowService.describeNamespace({ namespace: 'default' })).namespaceInfo?.data ?? {};
    expect(data[ownerKey(queue)]).toBe(a);
  });

  it('gives each of several gateways starting at once its own queue', async () => {
    const claims = Array.from({ length: 8 }, () => ({ queue: `owner-${randomUUID()}`, id: randomUUID() }));
    await Promise.all(claims.map((c) => claim(c.queue, c.id)));
    const data = (await connection.workflowService.describeNamespace({ namespace: 'default' })).namespaceInfo?.data ?? {};
    for (const c of claims) expect(data[ownerKey(c.queue)]).toBe(c.id);
  });
});
