// Resuming an approved call: the workflow's replay update, signed for the requester. The workflow
// may have closed between the approval's read and the update; the rows, read again, then hold the
// answer, and only a workflow that is really gone is settled as such (workflow-gone.ts).
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { callWorkflowId, replayUpdate, type CallOutcome } from '../../workflows/definitions.ts';
import type { Principal } from '../auth/principal.ts';
import { notFound } from '../errors.ts';
import { viaTemporal as guardedBy, type TemporalHealth } from '../temporal/health.ts';
import type { MessageSigner } from '../temporal/message-signer.ts';
import { updateError, workflowNotRunning } from '../temporal/update-errors.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import { approvalAnswer } from './call-answers.ts';
import { openOutcome } from './sealed-results.ts';
import * as store from './store.ts';

/** A replay update that found no workflow, while Temporal still shows it running, is sent this many times in all. */
const REPLAY_ATTEMPTS = 3;

export interface CallReplayDeps {
  pool: DatabasePool;
  temporal: Client;
  keyring: VaultKeyring;
  signer: MessageSigner;
  temporalHealth?: TemporalHealth | undefined;
  /** Closes an approval whose workflow is gone, and throws the error that says so. */
  settleWithoutWorkflow: (approvalId: string) => Promise<never>;
}

export function createCallReplay(deps: CallReplayDeps) {
  const { pool, temporal } = deps;
  const viaTemporal = guardedBy(temporal, deps.temporalHealth);
  const settleWithoutWorkflow = deps.settleWithoutWorkflow;

  /**
   * The resume's replay update. The workflow may have closed between the approval's read and the
   * update (a restart finished the execution meanwhile, e.g. as `outcome_unknown`): the rows, read
   * again, then hold the answer. A workflow Temporal still runs was not gone: the update is sent
   * again. Only one that no longer exists, with the rows still open, is settled as gone.
   */
  async function replay(p: Principal, approvalId: string, callId: string): Promise<CallOutcome> {
    const handle = temporal.workflow.getHandle(callWorkflowId(callId));
    for (let attempt = 1; ; attempt++) {
      try {
        const input = await deps.signer.sign('replay', handle.workflowId, { callerId: p.identityId, triggeredBy: p.type === 'user' ? ('user' as const) : ('agent' as const) });
        const outcome = await viaTemporal('the resume', () => handle.executeUpdate(replayUpdate, { args: [input] }));
        return openOutcome(deps.keyring, callId, outcome);
      } catch (err) {
        if (!workflowNotRunning(err)) throw updateError(err);
      }
      const known = await rowsAnswer(approvalId, callId);
      if (known) return known;
      if (attempt < REPLAY_ATTEMPTS && (await workflowRunning(callId))) continue;
      try {
        return await settleWithoutWorkflow(approvalId);
      } catch (err) {
        // Closed by its workflow (or a concurrent request) since the read above: that is the answer.
        const closed = await rowsAnswer(approvalId, callId);
        if (closed) return closed;
        throw err;
      }
    }
  }

  /** What an approved call's rows answer now (null: still open), read from one snapshot. */
  async function rowsAnswer(approvalId: string, callId: string): Promise<CallOutcome | null> {
    const now = await store.callAsOfNow(pool, callId);
    if (!now?.approval || now.approval.id !== approvalId) throw notFound('approval');
    return approvalAnswer(now.approval, now.execution, now.call.description);
  }

  /** Whether Temporal runs the call's workflow now (false: closed, or no such workflow). */
  async function workflowRunning(callId: string): Promise<boolean> {
    try {
      return (await viaTemporal('the resume', () => temporal.workflow.getHandle(callWorkflowId(callId)).describe())).status.name === 'RUNNING';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  return replay;
}
