// The approved call's execution, in three steps with their own retry policies (issue 11):
//   prepare  re-check permissions, mark the execution `executing`       (retried: idempotent)
//   send     the upstream request, behind a durable "about to send" mark (never sent twice unless safe)
//   record   the final state: row, call, audit, webhook                  (retried until it lands)
// The send mark lives in PostgreSQL, keyed by the execution id, and is written just before the
// request leaves; a retry of `send` (dead worker, lost completion) reads it to decide.
import { heartbeat } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { appendAudit } from '../server/audit/store.ts';
import * as calls from '../server/calls/store.ts';
import { AppError, appErrorBody, errorBody } from '../server/errors.ts';
import { planUpstream, type ExecutorDeps } from '../server/execution/execute.ts';
import { loadStoredCall } from '../server/calls/stored-call.ts';
import { checkLiveChain, recheckRefusal } from '../server/identities/chain-check.ts';
import type { Logger } from '../server/logger.ts';
import type { RegistryService } from '../server/registry/service.ts';
import type { VaultKeyring } from '../server/vault/keyring.ts';
import type { CallResult, CallSpec, EditedMark, ErrorBody, ExecuteCallResult, ExecutionStatus } from '../workflows/definitions.ts';
import type { WebhookEventType } from '../workflows/webhook-definitions.ts';
import { entryFor, type CallEvent } from './covered-call.ts';
import { OUTCOME_UNKNOWN } from './outcome-unknown.ts';

/** What the send step knows: the upstream answered, a typed error, or it cannot know. */
export type SendOutcome =
  | { kind: 'sent'; result: CallResult; httpStatusCode: number }
  | { kind: 'error'; error: ErrorBody }
  /** An earlier attempt may have sent this non-idempotent request: it is not sent again. */
  | { kind: 'outcome_unknown' };

export type PrepareOutcome = { proceed: true } | { proceed: false; result: ExecuteCallResult };

export { OUTCOME_UNKNOWN };

export interface ExecutionStepDeps {
  pool: DatabasePool;
  logger: Logger;
  keyring: VaultKeyring;
  registry: RegistryService;
  executor: ExecutorDeps;
  emit: (spec: CallSpec, type: WebhookEventType, data: Record<string, unknown>) => Promise<void>;
  approvalEventData: (approvalId: string) => Promise<Record<string, unknown>>;
}

/** An edited request's outcome and audit rows say so, with the diff (edited-request-v1). */
const editedMark = (spec: CallSpec): EditedMark => (spec.edit ? { modified_by_approver: true, diff: spec.edit.diff } : {});

interface StepInput {
  spec: CallSpec;
  approvalId: string;
  executionId: string;
}

export function createExecutionStepActivities(deps: ExecutionStepDeps) {
  const { pool, logger } = deps;

  return {
    /** Step 1. Rules may have changed while the call waited: a new deny, or a revoked identity, wins. */
    async prepareExecution(input: StepInput & { triggeredBy: 'user' | 'agent' | 'auto' }): Promise<PrepareOutcome> {
      const { spec, approvalId, executionId } = input;
      // The two reads are independent: one round trip's wait instead of two.
      const [exec, chain] = await Promise.all([calls.getExecution(pool, executionId), checkLiveChain(pool, spec.requesterId, spec.permissionKeys)]);
      if (!exec) throw new Error(`execution ${executionId} not found`);
      // A retry after the row went final (a crash after the write): the recorded verdict stands.
      if (exec.status === 'cancelled') return { proceed: false, result: { outcome: { status: 'error', error: exec.error as ErrorBody }, httpStatusCode: null, executionStatus: 'cancelled' } };
      const refusal = recheckRefusal(chain);
      if (refusal) return { proceed: false, result: await recordFinal(input, { kind: 'error', error: refusal }, 'cancelled') };
      if (exec.status === 'pending') {
        const actorId = input.triggeredBy === 'auto' ? null : spec.requesterId;
        await calls.startExecution(pool, executionId, input.triggeredBy, entryFor(spec, { event: 'execution.started', actorId, approvalId, executionId, details: { triggered_by: input.triggeredBy } }));
      }
      return { proceed: true };
    },

    /**
     * Step 2. One attempt at the upstream per mark. Credentials are resolved first (a failure there
     * sends nothing); then the mark is written; then the request leaves. Heartbeats let Temporal
     * see a dead worker within seconds, and the retry that follows reads the mark.
     */
    async sendExecution(input: StepInput): Promise<SendOutcome> {
      const { spec, executionId } = input;
      const beat = setInterval(() => heartbeat(), 1_000);
      try {
        heartbeat();
        let planned;
        try {
          // The call row and the instance are read side by side; the instance's failure (e.g.
          // deleted meanwhile) or a disabled action is the call's typed error, nothing sent.
          const { request, instance, action } = await loadStoredCall(deps, spec);
          planned = await planUpstream(deps.executor, { orgId: spec.orgId, requesterId: spec.requesterId, userId: spec.userId, instance, action, request, verbose: false });
        } catch (err) {
          if (err instanceof AppError) return { kind: 'error', error: appErrorBody(err) };
          throw err;
        }
        const marks = await calls.markExecutionSend(pool, executionId);
        if (marks > 1 && !planned.idempotent) {
          logger.warn({ execution_id: executionId, call_id: spec.callId }, 'a non-idempotent request may already have left: not sending it again');
          return { kind: 'outcome_unknown' };
        }
        try {
          const out = await planned.send(executionId);
          return { kind: 'sent', result: out.result, httpStatusCode: out.httpStatusCode };
        } catch (err) {
          if (!(err instanceof AppError)) logger.error({ err, call_id: spec.callId }, 'execution failed unexpectedly');
          // The request may have left: an unexpected error is final, never a blind resend.
          return { kind: 'error', error: errorBody(err) };
        }
      } finally {
        clearInterval(beat);
      }
    },

    /**
     * Step 3. The final state in one transaction, then the webhook (its id is stable, so a retry
     * never delivers twice). `gaveUp`: the send step could not run at all (its retries ran out):
     * the mark tells whether the request may have left.
     */
    async recordExecutionResult(input: StepInput & { sent: SendOutcome | { kind: 'gave_up'; error: ErrorBody } }): Promise<ExecuteCallResult> {
      let sent = input.sent;
      if (sent.kind === 'gave_up') {
        const exec = await calls.getExecution(pool, input.executionId);
        sent = exec?.send_marked_at ? { kind: 'outcome_unknown' } : { kind: 'error', error: sent.error };
      }
      return recordFinal(input, sent, sent.kind === 'sent' ? 'executed' : 'failed');
    },
  };

  function appendAuditFor(db: Parameters<typeof appendAudit>[0], spec: CallSpec, e: CallEvent) {
    return appendAudit(db, entryFor(spec, e));
  }

  async function recordFinal(input: StepInput, sent: SendOutcome, status: ExecutionStatus): Promise<ExecuteCallResult> {
    const { spec, approvalId, executionId } = input;
    const error = sent.kind === 'error' ? sent.error : sent.kind === 'outcome_unknown' ? OUTCOME_UNKNOWN : null;
    const httpStatusCode = sent.kind === 'sent' ? sent.httpStatusCode : null;
    await pool.transaction(async (tx) => {
      const exec = await calls.getExecution(tx, executionId);
      // Already final (a retry whose first attempt committed): keep what was written.
      if (exec && ['executed', 'failed', 'cancelled', 'expired'].includes(exec.status)) return;
      if (sent.kind === 'sent') {
        await calls.updateExecution(tx, executionId, { status, httpStatusCode, result: sent.result, finished: true });
        await calls.finishCall(tx, spec.callId, 'executed', httpStatusCode);
      } else {
        await calls.updateExecution(tx, executionId, { status, error, finished: true });
        await calls.finishCall(tx, spec.callId, `execution_${status}`, null);
      }
      // What ran: the approver's edited request when there was one, else the agent's.
      const call = sent.kind === 'sent' && !spec.edit ? await calls.getCall(tx, spec.callId) : null;
      const approval = sent.kind === 'sent' && spec.edit ? await calls.getApproval(tx, approvalId) : null;
      const request = spec.edit ? approval?.edited_request_redacted : call?.request_redacted;
      await appendAuditFor(tx, spec, {
        event: sent.kind === 'sent' ? 'execution.executed' : status === 'cancelled' ? 'execution.cancelled' : 'execution.failed',
        actorId: sent.kind === 'sent' ? spec.requesterId : null,
        approvalId,
        executionId,
        decision: sent.kind === 'outcome_unknown' ? 'outcome_unknown' : status,
        ...(httpStatusCode !== null ? { httpStatusCode } : {}),
        details:
          sent.kind === 'sent'
            ? { duration_ms: sent.result.duration_ms, request, ...(spec.disclosed?.length ? { disclosed: spec.disclosed } : {}), ...editedMark(spec) }
            : { error, ...editedMark(spec) },
      });
    });
    await deps.emit(spec, sent.kind === 'sent' ? 'approval.executed' : 'approval.execution_failed', await deps.approvalEventData(approvalId));
    if (sent.kind === 'sent') {
      return { outcome: { status: 'called', result: sent.result, action_description: spec.description, ...editedMark(spec) }, httpStatusCode, executionStatus: 'executed' };
    }
    return { outcome: { status: 'error', error: error!, ...editedMark(spec) }, httpStatusCode: null, executionStatus: status };
  }
}
