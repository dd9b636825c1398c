// The call workflow (DESIGN.md §4). Deterministic: all I/O is in activities; time comes from the
// workflow clock; the only waits are `condition(fn, timeout)`. The first answer to the caller
// is the `outcome` update, which returns as soon as the workflow knows it.
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  uuid4,
} from '@temporalio/workflow';
import type { createCallActivities, ExecuteCallResult } from '../activities/calls.ts';
import { authorityOver, NOT_IN_CHAIN_MESSAGE, SELF_RESOLVE_MESSAGE } from '../core/permissions/authority.ts';
import { derivedKeys, isSubsetOfTiers, suggestedTiers } from '../core/permissions/tiers.ts';
import {
  CALL_SEARCH_ATTRIBUTES,
  cancelUpdate,
  outcomeUpdate,
  replayUpdate,
  resolveUpdate,
  stateQuery,
  supersedeSignal,
  UPDATE_ERRORS,
  type UpdateErrorType,
  type ApprovalRecord,
  type ApprovalStatus,
  type CallOutcome,
  type CallResult,
  type CallWorkflowResult,
  type ErrorBody,
  type CallSpec,
  type ExecutionRecord,
  type PendingApprovalOutcome,
  type ResolveInput,
} from './definitions.ts';

type CallActivities = ReturnType<typeof createCallActivities>;

/**
 * Error types an activity throws that no retry can fix: the names the SDK records for our typed
 * errors (`AppError`, `PermissionInputError`) and for malformed stored data (`ZodError`).
 */
const NON_RETRYABLE = ['AppError', 'PermissionInputError', 'ZodError'];

const acts = proxyActivities<CallActivities>({
  // Short: a completion lost with a dead worker (or Temporal) is retried within seconds.
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 ms', maximumAttempts: 10, nonRetryableErrorTypes: NON_RETRYABLE },
});
// The upstream call itself is not retried blindly: a POST that reached the server must not run twice.
const execActs = proxyActivities<CallActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 1 },
});
// The first answer (check, then execute or raise) runs as local activities: inside the same
// workflow task, with no server round trip per step. A covered call thus completes in one task.
const firstActs = proxyLocalActivities<CallActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 ms', maximumAttempts: 5, nonRetryableErrorTypes: NON_RETRYABLE },
});
const firstExec = proxyLocalActivities<CallActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 1 },
});

// The approved call's execution steps (issue 11; activities/execution-steps.ts). Short timeouts
// and heartbeats: a dead worker is noticed within seconds and the step runs again elsewhere.
// Prepare and record are idempotent and retried until they land; send is guarded by its mark.
const prepareStep = proxyActivities<CallActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500 ms', maximumInterval: '10 seconds', nonRetryableErrorTypes: NON_RETRYABLE },
});
const sendStep = proxyActivities<CallActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '5 seconds', maximumAttempts: 20, nonRetryableErrorTypes: NON_RETRYABLE },
});
const recordStep = proxyActivities<CallActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500 ms', maximumInterval: '10 seconds' },
});

/** Patch ids (workflow versioning): histories recorded before a change replay the old path. */
const PATCHES = {
  executionSteps: 'execution-steps-v1',
  finalResult: 'final-result-v1',
} as const;


/** An update refused: its type and details reach the API intact (UPDATE_ERROR_CODES maps them). */
function reject(type: UpdateErrorType, message: string, details: Record<string, unknown> = {}): never {
  throw ApplicationFailure.create({ message, type, nonRetryable: true, details: [details] });
}

export async function callWorkflow(spec: CallSpec): Promise<CallWorkflowResult> {
  const { outcome, final } = await runCall(spec);
  // Never complete under a running update handler: its caller must get its answer.
  await condition(allHandlersFinished);
  // The result an operator reads (Temporal UI, `temporal workflow result`) is the final state,
  // not the first answer; histories from before this change keep their old result.
  return patched(PATCHES.finalResult) ? final() : outcome;
}

interface RunResult {
  /** The first answer (the `outcome` update): the old workflow result. */
  outcome: CallOutcome;
  /** The final state, read once the workflow is done. */
  final: () => CallWorkflowResult;
}

async function runCall(spec: CallSpec): Promise<RunResult> {
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

  const setStatus = (status: string) => upsertSearchAttributes([{ key: CALL_SEARCH_ATTRIBUTES.status, value: status }]);

  const approvalRecord = (viewerId: string): ApprovalRecord => ({
    id: approvalId!,
    status: approvalStatus!,
    relationship: authorityOver({ identityId: viewerId, admin: false }, chainIdentities).relationship,
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
        if (!isOpen() || supersededBy) reject(UPDATE_ERRORS.notPending, `the approval is ${approvalStatus ?? 'not raised'}`, statusDetails());
        if (resolving) reject(UPDATE_ERRORS.notPending, 'another decision on this approval is being recorded', statusDetails());
        const authority = authorityOver({ identityId: input.resolverId, admin: input.resolverIsAdmin }, chainIdentities);
        if (authority.refusal === 'self') reject(UPDATE_ERRORS.selfResolve, SELF_RESOLVE_MESSAGE);
        if (authority.refusal) reject(UPDATE_ERRORS.notInChain, NOT_IN_CHAIN_MESSAGE);
        if (input.decision === 'bubble' && nextResolverAbove(resolverId!) === resolverId) {
          reject(UPDATE_ERRORS.cannotBubble, 'the approval already sits with the user: there is no one above to bubble to');
        }
        if (input.decision === 'allow_remember') {
          if (!input.rememberKeys?.length || !isSubsetOfTiers(input.rememberKeys, tiers)) {
            reject(UPDATE_ERRORS.invalidRemember, 'remember_keys must be a non-empty subset of the suggested tier keys', { field: 'remember_keys' });
          }
          if (!input.rememberTtlMs || !input.rememberTtl) reject(UPDATE_ERRORS.invalidRemember, 'allow_remember needs a ttl', { field: 'ttl' });
        }
      },
    },
  );

  setHandler(
    replayUpdate,
    async (input): Promise<CallOutcome> => {
      // A decision still being recorded (e.g. run again after a crash): wait for it, then judge.
      await condition(() => !resolving);
      if (executionOutcome) return executionOutcome;
      if (approvalStatus !== 'allowed' || !execution) reject(UPDATE_ERRORS.notReplayable, `the approval is ${approvalStatus ?? 'not raised'}`, statusDetails());
      replay ??= { triggeredBy: input.triggeredBy };
      await condition(() => executionOutcome !== undefined);
      return executionOutcome!;
    },
    {
      validator: (input) => {
        if (!authorityOver({ identityId: input.callerId, admin: false }, chainIdentities).replay) reject(UPDATE_ERRORS.notRequester, 'only the requester can resume its call');
        if (executionOutcome) return; // already executed: the stored outcome is returned
        if (resolving) return; // the handler waits for the decision being recorded
        if (approvalStatus !== 'allowed' || !execution) reject(UPDATE_ERRORS.notReplayable, `the approval is ${approvalStatus ?? 'not raised'}`, statusDetails());
        if (replay || execution.status !== 'pending') reject(UPDATE_ERRORS.replayInFlight, 'this approved call is already being executed', statusDetails());
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
        if (!isOpen() || resolving) reject(UPDATE_ERRORS.notPending, `the approval is ${approvalStatus ?? 'not raised'}`, statusDetails());
        if (!authorityOver({ identityId: input.callerId, admin: false }, chainIdentities).replay) reject(UPDATE_ERRORS.notRequester, 'only the requester can cancel its request');
      },
    },
  );

  setHandler(supersedeSignal, ({ byApprovalId }) => {
    if (isOpen()) supersededBy = byApprovalId;
  });

  /** What a refusal tells about the approval's state (`status`, and its execution's). */
  function statusDetails(): Record<string, unknown> {
    return { status: approvalStatus ?? 'not_raised', ...(execution ? { execution_status: execution.status } : {}) };
  }

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

  const done = (first: CallOutcome): RunResult => ({ outcome: first, final: () => finalState(first) });
  /** The final state: the approval record with its execution summary, or the call's own outcome. */
  function finalState(first: CallOutcome): CallWorkflowResult {
    if (!approvalStatus || first.status !== 'pending_approval') return first;
    const record = approvalRecord(spec.requesterId);
    if (!record.execution) return record;
    const { result, ...rest } = record.execution;
    // A summary, not the body: the upstream's answer may carry data the Temporal UI should not show.
    const summary = result && typeof result === 'object' ? { status_code: (result as CallResult).status_code, duration_ms: (result as CallResult).duration_ms } : undefined;
    return { ...record, execution: { ...rest, ...(summary ? { result: summary } : {}) } };
  }

  // 1. Check -------------------------------------------------------------------------------------
  // Check and (when covered) execute in one local activity: a covered call needs no second round.
  const { check, executed: coveredResult } = await firstExec.checkThenExecute({ spec });
  if (check.outcome === 'error') {
    outcome = { status: 'error', error: check.error };
    setStatus('failed');
    return done(outcome);
  }
  if (check.outcome === 'denied') {
    outcome = { status: 'denied', reason: check.reason };
    setStatus('denied');
    return done(outcome);
  }
  if (check.outcome === 'covered') {
    const executed = coveredResult!;
    outcome = executed.outcome;
    setStatus(executed.outcome.status === 'called' ? 'called' : 'failed');
    return done(executed.outcome);
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
    return done(outcome);
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
      return done(outcome);
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
    return done(outcome);
  }
  // Handlers changed it while we waited; TypeScript cannot see that.
  const decided = approvalStatus as ApprovalStatus | null;
  if (decided !== 'allowed') {
    setStatus(decided ?? 'failed');
    return done(outcome);
  }

  // 4. After allow: wait for the replay (auto, or the requester with approval_id) ------------------
  setStatus('allowed');
  const started = await condition(() => replay !== undefined, Math.max(1, executionDeadline - Date.now()));
  if (!started) {
    execution!.status = 'expired';
    // Retried until it lands: an execution must never stay open behind a finished workflow.
    await recordStep.recordExecution({ spec, approvalId, executionId: execution!.id, status: 'expired', triggeredBy: null });
    executionOutcome = { status: 'error', error: { code: 'conflict', message: 'the approved call was not resumed within its execution window' } };
    setStatus('expired');
    return done(outcome);
  }
  execution!.status = 'executing';
  execution!.triggered_by = replay!.triggeredBy;
  const step = { spec, approvalId, executionId: execution!.id };
  const executed = patched(PATCHES.executionSteps)
    ? await executeApproved(step, replay!.triggeredBy)
    : await execActs.executeCall({ spec, executionId: execution!.id, triggeredBy: replay!.triggeredBy, recheck: true, approvalId });
  execution!.status = executed.executionStatus ?? (executed.outcome.status === 'called' ? 'executed' : 'failed');
  if (executed.httpStatusCode !== null) execution!.http_status_code = executed.httpStatusCode;
  if (executed.outcome.status === 'called') execution!.result = executed.outcome.result;
  if (executed.outcome.status === 'error') execution!.error = executed.outcome.error;
  executionOutcome = executed.outcome;
  setStatus(execution!.status);

  // 5. Remember: only after the replay succeeded ---------------------------------------------------
  if (remember && executed.outcome.status === 'called') {
    await acts.plantRules({ spec, approvalId, patterns: remember.keys, ttlMs: remember.ttlMs, resolverId: remember.resolverId });
  }
  return done(outcome);
}

/**
 * After allow: prepare (re-check, mark executing), send (behind its durable mark), record (until it
 * lands). Whatever fails on the way, the execution ends in a final state, written and returned.
 */
async function executeApproved(step: { spec: CallSpec; approvalId: string; executionId: string }, triggeredBy: 'user' | 'agent' | 'auto'): Promise<ExecuteCallResult> {
  try {
    const prepared = await prepareStep.prepareExecution({ ...step, triggeredBy });
    if (!prepared.proceed) return prepared.result;
  } catch (err) {
    return recordStep.recordExecutionResult({ ...step, sent: { kind: 'error', error: failureBody(err) } });
  }
  let sent: Parameters<CallActivities['recordExecutionResult']>[0]['sent'];
  try {
    sent = await sendStep.sendExecution(step);
  } catch (err) {
    // Retries ran out (a dependency stayed down): the record step reads the mark to tell whether
    // the request may have left.
    sent = { kind: 'gave_up', error: failureBody(err) };
  }
  return recordStep.recordExecutionResult({ ...step, sent });
}

/** A failed activity as the error the requester sees (typed errors keep their code). */
function failureBody(err: unknown): ErrorBody {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type === 'AppError') return { code: 'unavailable', message: cause.message };
  return { code: 'unavailable', message: 'the gateway could not run the approved call: a dependency stayed unreachable' };
}
