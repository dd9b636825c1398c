// A call whose workflow never started: the process that wrote its row stopped (or lost Temporal)
// before the start landed (the row is written first). Nothing was sent — only the workflow sends —
// so the call is closed as failed with that reason, like any final state (its audit row included),
// and `GET /v1/calls/{id}` stops saying `checking` forever. The close is written only while no
// workflow has claimed the row (store.closeUnclaimedCall): a workflow that did run keeps its own
// final state, and one whose start lands later finds the final row and sends nothing.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { callWorkflowId } from '../../workflows/definitions.ts';
import { callAuditEntry } from '../audit/entry.ts';
import type { ChainReader } from '../identities/readers.ts';
import * as store from './store.ts';

/** A workflow start takes milliseconds; a row this old without one is not going to get one. */
export const START_GRACE_MS = 30_000;

export const NEVER_STARTED = {
  code: 'unavailable',
  message: 'the call never started: the gateway stopped before its workflow began, and nothing was sent; make the call again',
} as const;

type Deps = { pool: DatabasePool; temporal: Client; chains: ChainReader };

/** The row as it stands, settled first when it is a call that never started. */
export async function settleIfNeverStarted(deps: Deps, call: store.CallRow): Promise<store.CallRow> {
  if (call.status !== 'checking' || call.finished_at || call.send_marked_at || Date.now() - call.created_at.getTime() < START_GRACE_MS) return call;
  try {
    await deps.temporal.workflow.getHandle(callWorkflowId(call.id)).describe();
    return call; // its workflow exists: it will write the final state
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) return call;
  }
  await closeNeverStarted(deps, call);
  return (await store.getCall(deps.pool, call.id)) ?? call;
}

/** Closes the call as never started (unless a workflow claimed it meanwhile): true when it did. */
async function closeNeverStarted(deps: Pick<Deps, 'pool' | 'chains'>, call: store.CallRow): Promise<boolean> {
  const chain = await deps.chains.getChain(call.requester_id);
  const entry = callAuditEntry(
    {
      orgId: call.org_id,
      userId: call.user_id,
      identityChain: chain.map((c) => c.id),
      service: call.service,
      action: call.action,
      permissionKeys: call.permission_keys,
      callId: call.id,
      requestId: call.request_id,
    },
    { event: 'call.failed', approvalId: null, executionId: null, decision: 'not_started', details: { error: NEVER_STARTED } },
  );
  return store.closeUnclaimedCall(deps.pool, call.id, NEVER_STARTED, entry);
}
