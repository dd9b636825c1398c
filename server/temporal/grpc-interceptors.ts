import { InterceptingCall, Metadata, status, type Interceptor } from '@grpc/grpc-js';
import { Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type ConnectionOptions } from '@temporalio/client';

/**
 * The gRPC interceptors of the gateway's Temporal client: the SDK's retries, then a guard below them.
 *
 * Why the guard: the SDK's retry interceptor waits with a timer before its next attempt, and closing
 * the connection does not clear that timer. When it fires after the close, asking the closed channel
 * for a call throws inside the timer — an uncaught exception that ended a test run, and would end a
 * gateway that closes its connection while Temporal is unreachable. Below the retries, the guard
 * turns that throw into the attempt's status (CANCELLED, not retried), so the RPC that was being
 * retried fails like any other, to the code that awaits it.
 */
function temporalClientInterceptors(): Interceptor[] {
  return [makeGrpcRetryInterceptor(defaultGrpcRetryOptions()), failOnClosedChannel];
}

/** `Connection.connect` with these interceptors: every Temporal client connection opens through here. */
export function connectTemporal(options: Omit<ConnectionOptions, 'interceptors'>): Promise<Connection> {
  return Connection.connect({ ...options, interceptors: temporalClientInterceptors() });
}

const failOnClosedChannel: Interceptor = (options, nextCall) => {
  try {
    return new InterceptingCall(nextCall(options));
  } catch (err) {
    return new InterceptingCall(failedCall(`the Temporal connection was closed before this call could be sent: ${(err as Error).message}`));
  }
};

/** What InterceptingCall wraps: the next call down (grpc-js does not export its interface by name). */
type NextCallDown = ConstructorParameters<typeof InterceptingCall>[0];

/** A call that never reaches the network: started, it reports CANCELLED to its listener. */
function failedCall(details: string): NextCallDown {
  return {
    start(_metadata, listener) {
      queueMicrotask(() => listener?.onReceiveStatus?.({ code: status.CANCELLED, details, metadata: new Metadata() }));
    },
    sendMessageWithContext(context) {
      context.callback?.();
    },
    sendMessage() {},
    startRead() {},
    halfClose() {},
    cancelWithStatus() {},
    getPeer: () => '',
    getAuthContext: () => null,
  };
}
