// A long upstream MCP tool's progress, relayed to the agent that is waiting for the call: when the
// agent's `tools/call` carries a `progressToken`, its request listens to the agent's events (any
// replica: PostgreSQL NOTIFY, agent-events.ts) for the progress the mcp runtime reports for the
// API request that made the call, and sends each as `notifications/progress` with the agent's
// token. Only a response that streams (SSE) can carry them: endpoint.ts answers such a request
// with SSE on the 2025 revisions; a JSON answer drops them, as the SDK says.
import type { Notification } from '@modelcontextprotocol/server';
import { CALL_PROGRESS, type AgentEventHub } from '../events/agent-events.ts';
import type { Logger } from '../logger.ts';

export type ProgressToken = string | number;

/** The progress token of a request's `_meta`, if it names one MCP allows. */
export function progressTokenOf(meta: unknown): ProgressToken | undefined {
  const token = (meta as { progressToken?: unknown } | undefined)?.progressToken;
  return typeof token === 'string' || (typeof token === 'number' && Number.isInteger(token)) ? token : undefined;
}

/** Starts relaying; the returned function stops it (call it when the request is answered). */
export async function relayProgress(
  events: AgentEventHub,
  to: { agentId: string; requestId: string; progressToken: ProgressToken },
  notify: (n: Notification) => Promise<void>,
  logger: Pick<Logger, 'warn'>,
): Promise<() => void> {
  let last = Number.NEGATIVE_INFINITY;
  try {
    return await events.subscribe(
      to.agentId,
      (e) => {
        // MCP: progress only increases; anything else (a replayed or reordered event) is dropped.
        if (e.type !== CALL_PROGRESS || e.request_id !== to.requestId || typeof e.progress !== 'number' || e.progress <= last) return;
        last = e.progress;
        const params = { progressToken: to.progressToken, progress: e.progress, ...(e.total !== undefined ? { total: e.total } : {}), ...(e.message ? { message: e.message } : {}) };
        notify({ method: 'notifications/progress', params }).catch(() => undefined);
      },
      () => undefined,
    );
  } catch (err) {
    // The call goes on without progress.
    logger.warn({ err: (err as Error).message }, 'cannot relay progress: agent events unavailable');
    return () => undefined;
  }
}
