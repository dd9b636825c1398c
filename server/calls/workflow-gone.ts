// An update found no running workflow behind an approval that the database still shows open: the
// workflow is gone (terminated, deleted, lost with Temporal's data). The open state is closed here
// with the reason, written like any other final state (the row, an audit row, the events and
// webhooks), so `GET` says what the caller's `workflow_gone` error says and nothing waits forever.
// An execution that was already sending when its workflow went is not "failed": its request may
// have reached the upstream, so it closes as `outcome_unknown` (502), as a send that cannot be
// confirmed does on the execution path. A workflow Temporal does not find at once right after a
// restart is asked about again before it is taken for gone.
import { WorkflowNotFoundError } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { callWorkflowId } from '../../workflows/definitions.ts';
import { callAuditEntry } from '../audit/entry.ts';
import { OUTCOME_UNKNOWN } from '../../activities/outcome-unknown.ts';
import type { ErrorBody } from '../../workflows/definitions.ts';
import { AppError, notFound } from '../errors.ts';
import { publishApprovalEvent } from '../events/approval-events.ts';
import { approvalEventData } from './approval-event-data.ts';
import type { ChainReader } from '../identities/readers.ts';
import type { Logger } from '../logger.ts';
import { emitWebhookEvent } from '../webhooks/emit.ts';
import * as store from './store.ts';

export const WORKFLOW_GONE_REASON = 'the workflow that ran this approval no longer exists';

/** How long a workflow Temporal did not find is given to show up (a restart) before it is taken for gone. */
const ABSENCE_CONFIRMED_AFTER_MS = 1_000;

/** The execution's closing error: a send that had begun may have reached the upstream. */
function closingError(exec: store.ExecutionRow): ErrorBody {
  const sending = exec.status === 'executing' || (exec.send_attempts ?? 0) > 0 || exec.send_marked_at != null;
  return sending ? OUTCOME_UNKNOWN : { code: 'workflow_gone', message: WORKFLOW_GONE_REASON };
}

export interface WorkflowGoneDeps {
  pool: DatabasePool;
  chains: ChainReader;
  temporal: Client;
  taskQueue: string;
  logger: Logger;
}

export function createWorkflowGoneSettler(deps: WorkflowGoneDeps) {
  const { pool, temporal } = deps;
  const events = {
    db: pool,
    logger: deps.logger,
    emitWebhook: async (e: Parameters<typeof emitWebhookEvent>[1]) => {
      await emitWebhookEvent({ pool, temporal, taskQueue: deps.taskQueue }, e);
    },
  };

  /** Closes what is open and throws `workflow_gone`; a closed approval gets `conflict` with its state. */
  return async function settleWithoutWorkflow(approvalId: string): Promise<never> {
    const a = await store.getApproval(pool, approvalId);
    if (!a) throw notFound('approval');
    const exec = await store.getExecutionByApproval(pool, a.id);
    const approvalOpen = a.status === 'pending' || a.status === 'bubbled';
    const executionOpen = a.status === 'allowed' && exec !== null && (exec.status === 'pending' || exec.status === 'executing');
    if (!approvalOpen && !executionOpen) {
      throw new AppError('conflict', `the approval is ${a.status}${exec ? ` and its execution ${exec.status}` : ''}`, { status: a.status, ...(exec ? { execution_status: exec.status } : {}) });
    }
    if (!(await workflowAbsent(a.call_id))) throw new AppError('conflict', 'the approval is being updated; retry shortly', { status: a.status });
    const reason = WORKFLOW_GONE_REASON;
    const executionId = executionOpen ? exec.id : null;
    const error = executionOpen ? closingError(exec) : { code: 'workflow_gone', message: reason };
    const entry = await closureEntry(a, executionId, error);
    const closed = await store.closeWithoutWorkflow(pool, { approvalId: a.id, callId: a.call_id, executionId, reason, executionError: error, entry });
    // Only the request that closed it announces it: a concurrent one finds it closed and says the same.
    if (closed) await announceClosure(a, executionId);
    if (error.code === OUTCOME_UNKNOWN.code) throw new AppError('outcome_unknown', error.message, { status: 'allowed', execution_status: 'failed' });
    throw new AppError('workflow_gone', `${reason}; the approval was closed (${executionOpen ? 'execution failed' : 'cancelled'}): raise the call again`, {
      status: executionOpen ? 'allowed' : 'cancelled',
      ...(executionOpen ? { execution_status: 'failed' } : {}),
    });
  };

  /** True when Temporal has no running workflow for the call, asked twice a moment apart (a restart may hide it briefly). */
  async function workflowAbsent(callId: string): Promise<boolean> {
    for (let asked = 1; ; asked++) {
      try {
        const d = await temporal.workflow.getHandle(callWorkflowId(callId)).describe();
        return d.status.name !== 'RUNNING';
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        if (asked === 2) return true;
      }
      await new Promise((r) => setTimeout(r, ABSENCE_CONFIRMED_AFTER_MS));
    }
  }

  async function closureEntry(a: store.ApprovalRow, executionId: string | null, error: ErrorBody) {
    const [call, chain] = await Promise.all([store.getCall(pool, a.call_id), deps.chains.getChain(a.requester_id)]);
    return callAuditEntry(
      { orgId: a.org_id, userId: a.user_id, identityChain: chain.map((c) => c.id), service: call?.service ?? null, action: call?.action ?? null, permissionKeys: a.permission_keys, callId: a.call_id },
      {
        event: executionId ? 'execution.failed' : 'approval.cancelled',
        actorId: null,
        decision: executionId ? (error.code === OUTCOME_UNKNOWN.code ? 'outcome_unknown' : 'failed') : 'cancelled',
        approvalId: a.id,
        executionId,
        details: { error },
      },
    );
  }

  async function announceClosure(a: store.ApprovalRow, executionId: string | null): Promise<void> {
    const type = executionId ? 'approval.execution_failed' : 'approval.resolved';
    await publishApprovalEvent(events, { orgId: a.org_id, userId: a.user_id, requesterId: a.requester_id }, type, await approvalEventData(pool, a.id));
  }
}
