// What the approval and call services ask of a call's workflow — a decision, a cancellation — as
// one small port over Temporal: messages signed (the workflow acts on nothing unsigned), refused at
// once with 503 while Temporal is down, and an allow's answer taken in-process when this process's
// worker sends it. The services take the port as an argument, so their own logic is tested with a
// fake (test/unit/approvals/approval-service.test.ts) and against Temporal in the integration suite.
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateStage, type Client } from '@temporalio/client';
import { callWorkflowId, cancelUpdate, resolveUpdate, type ApprovalRecord, type ResolveInput } from '../../workflows/definitions.ts';
import { viaTemporal, type TemporalHealth } from '../temporal/health.ts';
import type { LocalExchange } from '../temporal/local-exchange.ts';
import type { MessageSigner } from '../temporal/message-signer.ts';

export interface CallWorkflows {
  /** The `resolve` update, its authority already checked; `autoCall`: the allow sends the call. */
  decide(callId: string, args: ResolveInput, autoCall: boolean): Promise<ApprovalRecord>;
  /** The `cancel` update on behalf of `callerId` (the requester; the workflow re-checks). */
  cancel(callId: string, callerId: string, reason: string): Promise<ApprovalRecord>;
}

export interface CallWorkflowsDeps {
  temporal: Client;
  signer: MessageSigner;
  temporalHealth?: TemporalHealth | undefined;
  /** Where an allow's record is waited for when this process's worker sends it. */
  exchange: Pick<LocalExchange, 'decisions'>;
  /**
   * This process runs a worker (role `all`): an allow's answer is taken in-process once the
   * decision is committed, while its auto-call goes on to the send.
   */
  answersInProcess?: boolean | undefined;
  /** How long an allow's in-process answer is waited for before the update's result is asked for. */
  answerPatienceMs?: number | undefined;
}

export function createCallWorkflows(deps: CallWorkflowsDeps): CallWorkflows {
  const { temporal } = deps;
  const guarded = viaTemporal(temporal, deps.temporalHealth);

  /**
   * With a worker in this process, an auto-call allow is sent in the activity that records it:
   * the approver is answered from here once the decision is committed (the local exchange). The
   * update is sent to be accepted only (a refusal still comes back at once); its result — which
   * comes after the send — is asked for only when no answer came here in time (the activity ran
   * in another process), so no poll is left behind.
   */
  async function decide(callId: string, args: ResolveInput, autoCall: boolean): Promise<ApprovalRecord> {
    const workflowId = callWorkflowId(callId);
    const handle = temporal.workflow.getHandle(workflowId);
    const sentWithDecision = deps.answersInProcess && autoCall && (args.decision === 'allow' || args.decision === 'allow_remember');
    if (!sentWithDecision) return handle.executeUpdate(resolveUpdate, { args: [await deps.signer.sign('resolve', workflowId, args)] });
    const answerKey = randomUUID();
    const expected = deps.exchange.decisions.expect(answerKey);
    let timer: NodeJS.Timeout | undefined;
    try {
      const signed = await deps.signer.sign('resolve', workflowId, { ...args, answerKey });
      const accepted = await handle.startUpdate(resolveUpdate, { args: [signed], waitForStage: WorkflowUpdateStage.ACCEPTED });
      const patience = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), deps.answerPatienceMs ?? 2_000)));
      const first = await Promise.race([expected.answer, patience]);
      return first === 'late' ? await Promise.race([expected.answer, accepted.result()]) : first;
    } finally {
      clearTimeout(timer);
      expected.cancel();
    }
  }

  return {
    decide: (callId, args, autoCall) => guarded('the decision', () => decide(callId, args, autoCall)),
    cancel: (callId, callerId, reason) =>
      guarded('the cancellation', async () => {
        const workflowId = callWorkflowId(callId);
        const input = await deps.signer.sign('cancel', workflowId, { callerId, reason });
        return temporal.workflow.getHandle(workflowId).executeUpdate(cancelUpdate, { args: [input] });
      }),
  };
}
