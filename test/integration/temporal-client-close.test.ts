// Closing the gateway's Temporal client while one of its RPCs waits to be retried. The SDK's retry
// timer survives the close; when it fired, the closed channel threw inside the timer — an uncaught
// exception (it failed a CI run). With the gateway's interceptors the RPC fails to its caller instead.
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTemporalClient } from '../../server/temporal/client.ts';
import { startGrpcFaultProxy, type GrpcFaultProxy } from '../support/grpc-fault-proxy.ts';
import { until } from '../support/wait.ts';

const RESOURCE_EXHAUSTED = 8; // retried, first after ~1.7 s: the close lands while the timer waits

describe("the gateway's Temporal client closed while an RPC waits for its retry", () => {
  let proxy: GrpcFaultProxy;
  const uncaught: unknown[] = [];
  const record = (err: unknown) => uncaught.push(err);

  beforeAll(async () => {
    proxy = await startGrpcFaultProxy(inject('temporalAddress'));
    process.on('uncaughtException', record);
  });
  afterEach(() => {
    uncaught.length = 0;
  });
  afterAll(async () => {
    process.off('uncaughtException', record);
    await proxy?.close();
  });

  it('fails that RPC to its caller with a clear error; nothing is thrown outside it', async () => {
    const temporal = await connectTemporalClient(proxy.address, 'default');
    proxy.failAfterReply('DescribeWorkflowExecution', RESOURCE_EXHAUSTED, 'busy');
    const settled = temporal.client.workflow
      .getHandle('never-started')
      .describe()
      .then(
        () => 'answered',
        (err: Error) => err,
      );
    await until(async () => proxy.calls('DescribeWorkflowExecution'), (n) => n >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300)); // the refusal is back; the retry waits
    await temporal.close();

    // Unguarded, the retry threw in its timer and the RPC never settled: 20 s is far past its one retry.
    const outcome = await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, 20_000, 'never settled'))]);
    expect(outcome).toBeInstanceOf(Error);
    expect(String((outcome as Error).message) + String((outcome as Error).cause ?? '')).toMatch(/closed before this call could be sent/);
    expect(proxy.calls('DescribeWorkflowExecution')).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 100)); // an uncaught throw would be recorded by now
    expect(uncaught).toEqual([]);
  });
});
