// `subscriptions/listen` (2026-07-28): a Server-Sent Events stream of the notifications the client
// opted in to, for the caller's own agent. Served by the gateway, not the SDK's listen router: the
// SDK's change-event bus carries list changes only, and this stream also carries the caller's
// approval events as log messages (sent when the request's `_meta` asks for a log level), fed by
// PostgreSQL LISTEN/NOTIFY so any replica streams what any replica changed. The request's envelope
// has been checked by the SDK's classification (endpoint.ts) before it gets here.
import { LOG_LEVEL_META_KEY, SUBSCRIPTION_ID_META_KEY, type JSONRPCRequest, type LoggingLevel } from '@modelcontextprotocol/server';
import type { Response } from 'express';
import type { AgentPrincipal } from '../auth/principal.ts';
import type { Logger } from '../logger.ts';
import type { StreamGuard } from '../auth/stream-guard.ts';
import { streamNotice, type AgentEvent, type AgentEventHub } from '../events/agent-events.ts';
import { openEventStream } from './event-stream.ts';

const LOG_LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** Whether a log message at `level` may be sent to a request that asked for `wanted` (absent: none). */
export function logLevelAllows(wanted: unknown, level: LoggingLevel): boolean {
  const at = LOG_LEVELS.indexOf(wanted as LoggingLevel);
  return at >= 0 && LOG_LEVELS.indexOf(level) >= at;
}

/** What a listen stream sends for an agent event: only what its client opted in to. */
export function listenMessage<M>(event: AgentEvent, granted: { toolsListChanged?: boolean }, logLevel: unknown, send: (method: string, body: Record<string, unknown>) => M): M | null {
  const notice = streamNotice(event);
  if (notice === 'tools_list_changed') return granted.toolsListChanged ? send('notifications/tools/list_changed', {}) : null;
  if (notice === 'approval' && logLevelAllows(logLevel, 'info')) return send('notifications/message', { level: 'info', logger: 'gateway', data: event });
  return null;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface ListenDeps {
  events: AgentEventHub;
  guard: StreamGuard;
  keepAliveMs: number;
}

/** Serves one `subscriptions/listen` request on `res` until the client or the credential goes away. */
export async function serveListen(deps: ListenDeps, message: JSONRPCRequest, p: AgentPrincipal, token: string, res: Response, logger: Pick<Logger, 'error'>): Promise<void> {
  const params = message.params ?? {};
  const filter = isRecord(params.notifications) ? params.notifications : {};
  const logLevel = isRecord(params._meta) ? params._meta[LOG_LEVEL_META_KEY] : undefined;
  // Only tool-list changes exist here (no prompts, no resources).
  const granted = filter.toolsListChanged === true ? { toolsListChanged: true } : {};
  const meta = { [SUBSCRIPTION_ID_META_KEY]: message.id };
  const send = (method: string, body: Record<string, unknown>) => ({ jsonrpc: '2.0', method, params: { ...body, _meta: meta } });
  await openEventStream(res, {
    ...deps,
    agentId: p.identityId,
    principal: p,
    token,
    logger,
    first: send('notifications/subscriptions/acknowledged', { notifications: granted }),
    toMessage: (event) => listenMessage(event, granted, logLevel, send),
  });
}
