// Cancelling a long upstream MCP tool through /mcp (issue 43): a `notifications/cancelled` names
// the JSON-RPC id of the agent's `tools/call`, and may reach any replica. The replica that gets
// it announces it (server/events/call-cancels.ts); the process holding that request — it knows
// the API request id the call was made in — passes it on to the send of that call, which the
// worker aborts. On the 2026-07-28 revision the client closes the request's stream instead, and
// the process holding it passes that on directly. A call waiting for approval is not in flight:
// its request was already answered `pending_approval`; it is cancelled with `tasks/cancel` or on
// the approval.
import type { CallCancels } from '../events/call-cancels.ts';

type RpcId = string | number;

/** The request id a `notifications/cancelled` message names (2025 revisions), if it is one. */
export function cancelledRequestId(body: unknown): RpcId | undefined {
  const msg = body as { method?: unknown; id?: unknown; params?: { requestId?: unknown } } | null;
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg) || msg.method !== 'notifications/cancelled' || msg.id !== undefined) return undefined;
  const id = msg.params?.requestId;
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : undefined;
}

/**
 * While the agent's request `rpcId` waits for the call made in API request `requestId`, a
 * cancellation of it is passed on to that call's send. `closed`: on the 2026-07-28 revision the
 * client closing the request's stream is the cancellation (its Streamable HTTP rule); on the 2025
 * revisions a disconnect is not one, and the call finishes. Resolves to the release.
 */
export async function passCancelThrough(cancels: Pick<CallCancels, 'hold' | 'cancel'>, to: { agentId: string; rpcId: RpcId; requestId: string; closed?: AbortSignal | undefined }): Promise<() => void> {
  const cancelSend = () => void cancels.cancel({ kind: 'send', agentId: to.agentId, requestId: to.requestId });
  const release = await cancels.hold({ kind: 'request', agentId: to.agentId, rpcId: to.rpcId }, cancelSend);
  to.closed?.addEventListener('abort', cancelSend, { once: true });
  return () => {
    to.closed?.removeEventListener('abort', cancelSend);
    release();
  };
}
