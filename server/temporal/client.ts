import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { connectTemporal } from './grpc-interceptors.ts';

/**
 * Longest pause between the client's attempts to reach a Temporal server that went away. gRPC's
 * default grows to 120 s (×1.6 from 1 s): after a 50 s outage an API replica waited 23 s more
 * before its next attempt, answering 503 the whole time. 2 s is the Retry-After the gateway gives
 * while Temporal is down; one refused connection every 2 s costs nothing.
 */
export const MAX_RECONNECT_BACKOFF_MS = 2_000;

/** `interceptors`: tracing's (server/telemetry/tracing.ts), when it is on; none otherwise. */
export async function connectTemporalClient(address: string, namespace: string, interceptors: WorkflowClientInterceptor[] = []): Promise<{ client: Client; close(): Promise<void> }> {
  const connection = await connectTemporal({
    address,
    connectTimeout: '10 seconds',
    channelArgs: { 'grpc.max_reconnect_backoff_ms': MAX_RECONNECT_BACKOFF_MS },
  });
  return { client: new Client({ connection, namespace, ...(interceptors.length ? { interceptors: { workflow: interceptors } } : {}) }), close: () => connection.close() };
}
