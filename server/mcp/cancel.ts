// Cancelling a long upstream MCP tool through /mcp (issue 43): a `notifications/cancelled` names
// the JSON-RPC id of the agent's `tools/call`, and may reach any replica. The replica that gets
// it announces it (server/events/call-cancels.ts); the process holding that request — it knows
// the API request id the call was made in — passes it on to the send of that call, which the
// worker aborts. A call waiting for approval is not in flight: its request was already answered
// `pending_approval`, and it is cancelled with `tasks/cancel` or on the approval.
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
 * cancellation of it is passed on to that call's send. Resolves to the release.
 */
export function passCancelThrough(cancels: Pick<CallCancels, 'hold' | 'cancel'>, to: { agentId: string; rpcId: RpcId; requestId: string }): Promise<() => void> {
  return cancels.hold({ kind: 'request', agentId: to.agentId, rpcId: to.rpcId }, () => void cancels.cancel({ kind: 'send', agentId: to.agentId, requestId: to.requestId }));
}
