// The call workflow (DESIGN.md §4). Deterministic: all I/O is in activities; time comes from the
// workflow clock; the only waits are `condition(fn, timeout)`. The first answer to the caller
// is the `outcome` update, which returns as soon as the workflow knows it.
import { defineSearchAttributeKey } from '@temporalio/common';
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  uuid4,
} from '@temporalio/workflow';
import type { createCallActivities } from '../activities/calls.ts';
import { isAncestor } from '../core/permissions/chain.ts';
import { derivedKeys, isSubsetOfTiers, suggestedTiers } from '../core/permissions/tiers.ts';
import {
  cancelUpdate,
  outcomeUpdate,
  replayUpdate,
  resolveUpdate,
  stateQuery,
  supersedeSignal,
  UPDATE_ERRORS,
  type ApprovalRecord,
  type ApprovalStatus,
  type CallOutcome,
  type CallSpec,
  type ExecutionRecord,
  type PendingApprovalOutcome,
  type ResolveInput,
} from './definitions.ts';

type CallActivities = ReturnType<typeof createCallActivities>;

const acts = proxyActivities<CallActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 ms', maximumAttempts: 10, nonRetryableErrorTypes: ['GatewayError'] },
});
// The upstream call itself is not retried blindly: a POST that reached the server must not run twice.
// It heartbeats, so a dead worker is noticed in seconds; the next attempt (another worker) sends
// only when no earlier attempt got as far as sending (activities/execution-guard.ts).
const execActs = proxyActivities<CallActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { maximumAttempts: 3, initialInterval: '200 ms' },
});
// The first answer (check, then execute or raise) runs as local activities: inside the same
// workflow task, with no server round trip per step. A covered call thus completes in one task.
const firstActs = proxyLocalActivities<CallActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 ms', maximumAttempts: 5, nonRetryableErrorTypes: ['GatewayError'] },
});
const firstExec = proxyLocalActivities<CallActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 1 },
});

const statusKey = defineSearchAttributeKey('GatewayStatus', 'KEYWORD');

function reject(type: string, message: string): never {
  throw ApplicationFailure.nonRetryable(message, type);
}

export async function callWorkflow(spec: CallSpec): Promise<CallOutcome> {
  const result = await runCall(spec);
  // Never complete under a running update handler: its caller must get its answer.
  await condition(allHandlersFinished);
  return result;
}

async function runCall(spec: CallSpec): Promise<CallOutcome> {
  let outcome: CallOutcome | undefined;
  let approvalId: string | null = null;
  let approvalStatus: ApprovalStatus | null = null;
  let resolverId: string | null = null;
  let expiresAt = 0;
  let bubbleAt: number | null;
  let execution: ExecutionRecord | undefined;
  let executionDeadline = 0;
  let replay: { triggeredBy: 'user' | 'agent' | 'auto' } | undefined;
  let executionOutcome: CallOutcome | undefined;
  let remember: { keys: string[]; ttlMs: number; ttl: string; resolverId: string } | undefined;
  let supersededBy: string | undefined;
  /** A resolve is being persisted: a second one must not pass its validator meanwhile. */
  let resolving = false;
  const tiers = suggestedTiers(spec.permissionKeys);
  const chainIdentities = spec.chain;

  const setStatus = (status: string) => upsertSearchAttributes([{ key: statusKey, value: status }]);

  const approvalRecord = (viewerId: string): ApprovalRecord => ({
    id: approvalId!,
    status: approvalStatus!,
    relationship: viewerId === spec.requesterId ? 'self' : isAncestor(chainIdentities, viewerId, spec.requesterId) ? 'downstream' : 'not_in_your_chain',
    risk: spec.approvalRisk,
    permission_keys: spec.permissionKeys,
    suggested_tiers: tiers,
    derived_keys: derivedKeys(spec.permissionKeys),
    expires_at: new Date(execution ? executionDeadline : expiresAt).toISOString(),
    ...(execution ? { execution: { ...execution } } : {}),
  });

  setHandler(stateQuery, () => ({ approvalId, approvalStatus, resolverId, executionStatus: execution?.status ?? null }));
  setHandler(outcomeUpdate, async () => {
    await condition(() => outcome !== undefined);
    return outcome!;
  });

  setHandler(
    resolveUpdate,
    async (input: ResolveInput): Promise<ApprovalRecord> => {
      // Persist first, then change state: the main loop reacts to state, and its next activity
      // must see what this decision wrote.
      resolving = true;
      try {
        const at = Date.now();
        if (input.decision === 'bubble') {
          const from = resolverId!;
          const next = nextResolverAbove(from);
          await acts.recordBubble({ spec, approvalId: approvalId!, fromId: from, toId: next, actorId: input.resolverId, automatic: false });
          resolverId = next;
          approvalStatus = 'bubbled';
          bubbleAt = spec.clocks.autoBubbleMs && next !== spec.userId ? at + spec.clocks.autoBubbleMs : null;
          return approvalRecord(input.resolverId);
        }
        if (input.decision === 'deny') {
          await acts.recordDecision({ spec, approvalId: approvalId!, status: 'denied', decision: 'deny', resolverId: input.resolverId, reason: input.reason ?? null });
          approvalStatus = 'denied';
          return approvalRecord(input.resolverId);
        }
        const deadline = at + spec.clocks.executionWindowMs;
        const newExecution: ExecutionRecord = { id: uuid4(), status: 'pending', runtime: spec.runtime };
        const remembered =
          input.decision === 'allow_remember'
            ? { keys: input.rememberKeys!, ttlMs: input.rememberTtlMs!, ttl: input.rememberTtl!, resolverId: input.resolverId }
            : undefined;
        await acts.recordDecision({
          spec,
          approvalId: approvalId!,
          status: 'allowed',
          decision: input.decision,
          resolverId: input.resolverId,
          reason: input.reason ?? null,
          rememberKeys: remembered?.keys ?? null,
          rememberTtl: remembered?.ttl ?? null,
          execution: { id: newExecution.id, expiresAt: new Date(deadline).toISOString() },
        });
        executionDeadline = deadline;
        execution = newExecution;
        remember = remembered;
        approvalStatus = 'allowed';
        if (spec.autoCallOnApprove) replay = { triggeredBy: 'auto' };
        return approvalRecord(input.resolverId);
      } finally {
        resolving = false;
      }
    },
    {
      validator: (input: ResolveInput) => {
        if (!isOpen() || supersededBy) reject(UPDATE_ERRORS.notPending, `the approval is ${approvalStatus ?? 'not raised'}`);
        if (resolving) reject(UPDATE_ERRORS.notPending, 'another decision on this approval is being recorded');
        if (input.resolverId === spec.requesterId) reject(UPDATE_ERRORS.selfResolve, 'the requester cannot resolve its own approval');
        if (!input.resolverIsAdmin && !isAncestor(chainIdentities, input.resolverId, spec.requesterId)) {
          reject(UPDATE_ERRORS.notInChain, 'only an ancestor of the requester (or an org admin) may resolve this approval');
        }
        if (input.decision === 'bubble' && nextResolverAbove(resolverId!) === resolverId) {
          reject(UPDATE_ERRORS.cannotBubble, 'the approval already sits with the user: there is no one above to bubble to');
        }
        if (input.decision === 'allow_remember') {
          if (!input.rememberKeys?.length || !isSubsetOfTiers(input.rememberKeys, tiers)) {
            reject(UPDATE_ERRORS.invalidRemember, 'remember_keys must be a non-empty subset of the suggested tier keys');
          }
          if (!input.rememberTtlMs || !input.rememberTtl) reject(UPDATE_ERRORS.invalidRemember, 'allow_remember needs a ttl');
        }
      },
    },
  );

  setHandler(
    replayUpdate,
    async (input): Promise<CallOutcome> => {
      if (executionOutcome) return executionOutcome;
      replay = { triggeredBy: input.triggeredBy };
      await condition(() => executionOutcome !== undefined);
      return executionOutcome!;
    },
    {
      validator: (input) => {
        if (input.callerId !== spec.requesterId) reject(UPDATE_ERRORS.notRequester, 'only the requester can resume its call');
        if (executionOutcome) return; // already executed: the stored outcome is returned
        if (approvalStatus !== 'allowed' || !execution) reject(UPDATE_ERRORS.notReplayable, `the approval is ${approvalStatus ?? 'not raised'}`);
        if (replay || execution.status !== 'pending') reject(UPDATE_ERRORS.replayInFlight, 'this approved call is already being executed');
      },
    },
  );

  setHandler(
    cancelUpdate,
    async (input): Promise<ApprovalRecord> => {
      resolving = true;
      try {
        await acts.recordDecision({ spec, approvalId: approvalId!, status: 'cancelled', decision: 'cancel', resolverId: input.callerId, reason: input.reason ?? null });
        approvalStatus = 'cancelled';
        return approvalRecord(input.callerId);
      } finally {
        resolving = false;
      }
    },
    {
      validator: (input) => {
        if (!isOpen() || resolving) reject(UPDATE_ERRORS.notPending, `the approval is ${approvalStatus ?? 'not raised'}`);
        if (input.callerId !== spec.requesterId) reject(UPDATE_ERRORS.notRequester, 'only the requester can cancel its request');
      },
    },
  );

  setHandler(supersedeSignal, ({ byApprovalId }) => {
    if (isOpen()) supersededBy = byApprovalId;
  });

  /** Awaiting a decision: raised, or escalated upward and still undecided. */
  function isOpen(): boolean {
    return approvalStatus === 'pending' || approvalStatus === 'bubbled';
  }

  /** The next identity above `id` on the chain (the user stays the user). */
  function nextResolverAbove(id: string): string {
    const i = chainIdentities.findIndex((c) => c.id === id);
    const next = chainIdentities[Math.min(i + 1, chainIdentities.length - 1)];
    return next ? next.id : id;
  }

  // 1. Check -------------------------------------------------------------------------------------
  // Check and (when covered) execute in one local activity: a covered call needs no second round.
  const { check, executed: coveredResult } = await firstExec.checkThenExecute({ spec });
  if (check.outcome === 'error') {
    outcome = { status: 'error', error: check.error };
    setStatus('failed');
    return outcome;
  }
  if (check.outcome === 'denied') {
    outcome = { status: 'denied', reason: check.reason };
    setStatus('denied');
    return outcome;
  }
  if (check.outcome === 'covered') {
    const executed = coveredResult!;
    outcome = executed.outcome;
    setStatus(executed.outcome.status === 'called' ? 'called' : 'failed');
    return executed.outcome;
  }

  // 2. Raise --------------------------------------------------------------------------------------
  const raised = await firstActs.raiseApproval({ spec, gapIdentityId: check.gapIdentityId, firstResolverId: check.firstResolverId, tiers, approvalId: uuid4() });
  approvalId = raised.approvalId;
  expiresAt = Date.parse(raised.expiresAt);
  resolverId = raised.resolverId;
  const pending: PendingApprovalOutcome = {
    status: 'pending_approval',
    approval_id: raised.approvalId,
    approval_url: `${spec.approvalUrlBase}/approvals/${raised.approvalId}`,
    action_description: spec.description,
    expires_at: raised.expiresAt,
    relationship: raised.resolverId === spec.userId ? 'self' : 'downstream',
    suggested_tiers: tiers,
    auto_call_on_approve: spec.autoCallOnApprove,
    risk: spec.approvalRisk,
    permission_keys: spec.permissionKeys,
  };
  outcome = pending;
  if (raised.deduplicatedInto) {
    // An identical request of this agent is already pending: this call answers with that one.
    setStatus('deduplicated');
    return outcome;
  }
  approvalStatus = 'pending';
  setStatus('pending_approval');
  bubbleAt = spec.clocks.autoBubbleMs ? Date.now() + spec.clocks.autoBubbleMs : null;

  // 3. Wait for a decision, the expiry timer, auto-bubbles or being superseded ---------------------
  while (isOpen() && !supersededBy) {
    const now = Date.now();
    const wakeAt = bubbleAt !== null ? Math.min(bubbleAt, expiresAt) : expiresAt;
    const decided = await condition(() => !isOpen() || supersededBy !== undefined, Math.max(1, wakeAt - now));
    if (decided) break;
    if (Date.now() >= expiresAt) {
      approvalStatus = 'expired';
      await acts.recordDecision({ spec, approvalId, status: 'expired', decision: 'expire', resolverId: null, reason: 'no decision before the approval expired' });
      setStatus('expired');
      return outcome;
    }
    if (bubbleAt !== null && Date.now() >= bubbleAt) {
      const next = nextResolverAbove(resolverId!);
      if (next !== resolverId) {
        await acts.recordBubble({ spec, approvalId, fromId: resolverId!, toId: next, actorId: null, automatic: true });
        resolverId = next;
        approvalStatus = 'bubbled';
      }
      bubbleAt = resolverId === spec.userId || spec.clocks.autoBubbleMs === null ? null : Date.now() + spec.clocks.autoBubbleMs;
    }
  }
  if (supersededBy && isOpen()) {
    approvalStatus = 'superseded';
    await acts.recordDecision({ spec, approvalId, status: 'superseded', decision: 'supersede', resolverId: null, reason: `superseded by approval ${supersededBy}` });
    setStatus('superseded');
    return outcome;
  }
  // Handlers changed it while we waited; TypeScript cannot see that.
  const decided = approvalStatus as ApprovalStatus | null;
  if (decided !== 'allowed') {
    setStatus(decided ?? 'failed');
    return outcome;
  }

  // 4. After allow: wait for the replay (auto, or the requester with approval_id) ------------------
  setStatus('allowed');
  const started = await condition(() => replay !== undefined, Math.max(1, executionDeadline - Date.now()));
  if (!started) {
    execution!.status = 'expired';
    await acts.recordExecution({ spec, approvalId, executionId: execution!.id, status: 'expired', triggeredBy: null });
    executionOutcome = { status: 'error', error: { code: 'conflict', message: 'the approved call was not resumed within its execution window' } };
    setStatus('expired');
    return outcome;
  }
  execution!.status = 'executing';
  execution!.triggered_by = replay!.triggeredBy;
  const executed = await execActs.executeCall({ spec, executionId: execution!.id, triggeredBy: replay!.triggeredBy, recheck: true, approvalId });
  execution!.status = executed.executionStatus ?? (executed.outcome.status === 'called' ? 'executed' : 'failed');
  if (executed.httpStatusCode !== null) execution!.http_status_code = executed.httpStatusCode;
  if (executed.outcome.status === 'called') execution!.result = executed.outcome.result;
  executionOutcome = executed.outcome;
  setStatus(execution!.status);

  // 5. Remember: only after the replay succeeded ---------------------------------------------------
  if (remember && executed.outcome.status === 'called') {
    await acts.plantRules({ spec, approvalId, patterns: remember.keys, ttlMs: remember.ttlMs, resolverId: remember.resolverId });
  }
  return outcome;
}
