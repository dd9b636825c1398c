// One Server-Sent Events stream of the caller's agent events (GET /mcp on the 2025 revisions,
// `subscriptions/listen` on 2026-07-28): subscribed before the headers go out, ended when the
// client goes away, the listener is lost, or the credential is revoked (on any replica).
import type { Response } from 'express';
import type { Principal } from '../auth/principal.ts';
import type { StreamGuard } from '../auth/stream-guard.ts';
import { AppError } from '../errors.ts';
import type { AgentEvent, AgentEventHub } from '../events/agent-events.ts';
import type { Logger } from '../logger.ts';
import { writeOrEnd } from '../http/stream-write.ts';

export interface EventStreamOptions {
  events: AgentEventHub;
  guard: StreamGuard;
  keepAliveMs: number;
  agentId: string;
  /** Whom the stream's token authenticated as (the credential guard's audience). */
  principal: Principal;
  /** The bearer token the stream lives on. */
  token: string;
  /** Written right after the headers (e.g. the subscription's acknowledgement). */
  first?: unknown;
  /** The JSON-RPC message an event becomes, or null to skip it. */
  toMessage(event: AgentEvent): unknown;
  logger: Pick<Logger, 'error'>;
}

const frame = (message: unknown) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;

export async function openEventStream(res: Response, opts: EventStreamOptions): Promise<void> {
  // Whatever ends the stream undoes the subscription, the credential watch and the timer.
  const cleanup: Array<() => void> = [];
  let closed = false;
  const end = () => {
    closed = true;
    for (const undo of cleanup.splice(0)) undo();
    if (!res.writableEnded) res.end();
  };
  res.on('close', end);
  try {
    const unsubscribe = await opts.events.subscribe(
      opts.agentId,
      (event) => {
        const message = opts.toMessage(event);
        if (message !== null) writeOrEnd(res, frame(message), end);
      },
      end,
    );
    if (closed) return unsubscribe();
    cleanup.push(unsubscribe);
    cleanup.push(await opts.guard.watch(opts.token, { session: false, agentKey: true, oauth: true }, end, opts.principal));
  } catch (err) {
    end();
    opts.logger.error({ err }, 'could not open the MCP event stream');
    throw new AppError('unavailable', 'the notification stream is not available right now');
  }
  if (closed) return;
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
  res.write('retry: 5000\n: connected\n\n');
  if (opts.first !== undefined) res.write(frame(opts.first));
  const keepAlive = setInterval(() => writeOrEnd(res, ': keep-alive\n\n', end), opts.keepAliveMs);
  cleanup.push(() => clearInterval(keepAlive));
}
