// Requests Node's HTTP parser refuses never reach Express: by default Node writes a bare status
// line with an empty body (a query string over the 16 KB header limit gets `431` and nothing
// else). Answer them with the error envelope like every other refusal.
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError, toEnvelope } from '../errors.ts';

/** Node's default `maxHeaderSize`: request line plus headers, the query string included. */
export const MAX_HEADER_BYTES = 16 * 1024;

export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || (err.code === 'ECONNRESET' && !socket.readable)) {
      socket.destroy();
      return;
    }
    const appErr =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new AppError('headers_too_large', `the request line and headers exceed ${MAX_HEADER_BYTES} bytes`, { limit_bytes: MAX_HEADER_BYTES })
        : new AppError('invalid_request', 'the request is not valid HTTP');
    const requestId = randomUUID();
    const body = JSON.stringify(toEnvelope(appErr, requestId));
    const reason = appErr.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
    socket.end(
      `HTTP/1.1 ${appErr.status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
