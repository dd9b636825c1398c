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

/** How long the end of a call waits for its last progress to come through (a lost one costs nothing). */
const LAST_PROGRESS_WAIT_MS = 1_000;

/**
 * Starts relaying; the returned function stops it — call it when the request is answered, before
 * the answer goes out. It first lets through the progress NOTIFYed before the answer came (the
 * runtime sends it before the call ends, but it travels by PostgreSQL while the answer travels by
 * Temporal and may arrive first), so the agent's last notification is the tool's last progress.
 */
export async function relayProgress(
  events: AgentEventHub,
  to: { agentId: string; requestId: string; progressToken: ProgressToken },
  notify: (n: Notification) => Promise<void>,
  logger: Pick<Logger, 'warn'>,
): Promise<() => Promise<void>> {
  let last = Number.NEGATIVE_INFINITY;
  const sending = new Set<Promise<void>>();
  let unsubscribe: () => void;
  try {
    unsubscribe = await events.subscribe(
      to.agentId,
      (e) => {
        // MCP: progress only increases; anything else (a replayed or reordered event) is dropped.
        if (e.type !== CALL_PROGRESS || e.request_id !== to.requestId || typeof e.progress !== 'number' || e.progress <= last) return;
        last = e.progress;
        const params = { progressToken: to.progressToken, progress: e.progress, ...(e.total !== undefined ? { total: e.total } : {}), ...(e.message ? { message: e.message } : {}) };
        const sent = notify({ method: 'notifications/progress', params }).catch(() => undefined);
        sending.add(sent);
        void sent.finally(() => sending.delete(sent));
      },
      () => undefined,
    );
  } catch (err) {
    // The call goes on without progress.
    logger.warn({ err: (err as Error).message }, 'cannot relay progress: agent events unavailable');
    return async () => undefined;
  }
  return async () => {
    await events.fence(LAST_PROGRESS_WAIT_MS);
    unsubscribe();
    await Promise.all(sending);
  };
}
