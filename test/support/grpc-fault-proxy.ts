// A real gRPC (HTTP/2, cleartext) proxy on loopback between a gateway and its Temporal server: the
// network and frontend a test can make misbehave for one RPC method. Every call is relayed; for a
// method set to fail after its reply, the request still reaches Temporal (it takes effect), its
// real reply is dropped once it arrives, and the client gets the given gRPC status instead — what
// a client sees when Temporal restarts while its RPC is in flight. A refused call never reaches
// Temporal at all.
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';

export interface GrpcFaultProxy {
  /** host:port to give the gateway instead of Temporal's. */
  address: string;
  /** From now on, calls of `method` (e.g. "ExecuteMultiOperation") answer this gRPC status after Temporal answered. */
  failAfterReply(method: string, grpcStatus: number, message: string): void;
  /** The next call of `method` is answered with this gRPC status without reaching Temporal. */
  refuseNext(method: string, grpcStatus: number, message: string): void;
  /** Calls of `method` are relayed normally again. */
  heal(method: string): void;
  /** Calls of `method` seen so far. */
  calls(method: string): number;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set([':scheme', ':authority', 'connection', 'keep-alive', 'transfer-encoding']);

export async function startGrpcFaultProxy(target: string): Promise<GrpcFaultProxy> {
  const upstream = http2.connect(`http://${target}`);
  upstream.on('error', () => undefined);
  const faults = new Map<string, { grpcStatus: number; message: string }>();
  const refusals = new Map<string, { grpcStatus: number; message: string }>();
  const answerWith = (stream: http2.ServerHttp2Stream, f: { grpcStatus: number; message: string }) =>
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(f.grpcStatus), 'grpc-message': encodeURIComponent(f.message) }, { endStream: true });
  const seen = new Map<string, number>();
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    const method = String(headers[':path'] ?? '').split('/').pop() ?? '';
    seen.set(method, (seen.get(method) ?? 0) + 1);
    const refusal = refusals.get(method);
    if (refusal) {
      refusals.delete(method);
      stream.resume();
      answerWith(stream, refusal);
      return;
    }
    const fault = faults.get(method);
    const forwarded = Object.fromEntries(Object.entries(headers).filter(([k]) => !HOP_BY_HOP.has(k)));
    const req = upstream.request(forwarded);
    stream.pipe(req);
    stream.on('error', () => req.close());
    req.on('error', () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    if (fault) {
      // Temporal's answer is read to its end and thrown away; the client hears the fault.
      req.resume();
      req.on('end', () => {
        if (!stream.closed) answerWith(stream, fault);
      });
      return;
    }
    let trailers: http2.OutgoingHttpHeaders | undefined;
    req.on('response', (h) => {
      const { ':status': status, ...rest } = h;
      // A trailers-only answer (an error) carries its status in the headers and ends there.
      if (rest['grpc-status'] !== undefined) {
        stream.respond({ ':status': status, ...rest }, { endStream: true });
        req.resume();
        return;
      }
      stream.respond({ ':status': status, ...rest }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers(trailers ?? {}));
      req.pipe(stream);
    });
    req.on('trailers', (t) => {
      trailers = t;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    failAfterReply(method, grpcStatus, message) {
      faults.set(method, { grpcStatus, message });
    },
    refuseNext(method, grpcStatus, message) {
      refusals.set(method, { grpcStatus, message });
    },
    heal(method) {
      faults.delete(method);
      refusals.delete(method);
    },
    calls: (method) => seen.get(method) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        upstream.destroy();
        server.close(() => resolve());
      }),
  };
}
