// The call workflow (DESIGN.md §4). Deterministic: all I/O is in activities; time comes from the
// workflow clock; the only waits are `condition(fn, timeout)`. The first answer to the caller
// is the `outcome` update, which returns as soon as the workflow knows it.
import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  uuid4,
} from '@temporalio/workflow';
import { Mutex } from 'async-mutex';
import { verifyProof, withoutProof, type ProofKind, type Proven } from '../core/decisions/proof.ts';
import { activeContext, inContext, inSpan } from '../core/telemetry/spans.ts';
import type { Context as TraceContext } from '@opentelemetry/api';
import type { createCallActivities } from '../activities/calls.ts';
import type { RecordDecisionInput, SentOnAllow } from '../activities/execution-steps.ts';
import type { createNoticeActivities } from '../activities/notices.ts';
import { reminderTimes } from '../core/notifications/reminders.ts';
import { authorityOver, NOT_IN_CHAIN_MESSAGE, SELF_RESOLVE_MESSAGE } from '../core/permissions/authority.ts';
import { derivedKeys, isSubsetOfTiers, suggestedTiers } from '../core/permissions/tiers.ts';
import {
  CALL_SEARCH_ATTRIBUTES,
  callWorkflowId,
  cancelUpdate,
  firstAnswerOf,
  isApprovalRecord,
  outcomeUpdate,
  replayUpdate,
  resolveUpdate,
  sharedOutcomeSignal,
  stateQuery,
  supersedeSignal,
  UPDATE_ERRORS,
  type UpdateErrorType,
  type ApprovalRecord,
  type ApprovalStatus,
  type ApprovedEdit,
  type CallOutcome,
  type CallResult,
  type CheckResult,
  type ExecuteCallResult,
  type CallWorkflowResult,
  type ErrorBody,
  type CallSpec,
  type ExecutionRecord,
  type PendingApprovalOutcome,
  type CancelInput,
  type ReplayInput,
  type ResolveInput,
  type Tier,
} from './definitions.ts';

type CallActivities = ReturnType<typeof createCallActivities>;

/**
 * The call, as it reads: authenticate and check (a covered call executes at once); otherwise raise
 * an approval and wait on a decision or its timer; after an allow, wait for the replay, re-check,
 * execute, audit; remember the rule only once the call ran. Each step is a function below.
 */
export async function callWorkflow(spec: CallSpec): Promise<CallWorkflowResult> {
  const s = newCallState(spec);
  installHandlers(s);
  const first = await runCall(s);
  // Never complete under a running update handler: its caller must get its answer.
  await condition(allHandlersFinished);
  // The result an operator reads (Temporal UI, `temporal workflow result`) is the final state,
  // not the first answer.
  if (s.joined) return followJoined(s, first);
  const final = finalState(s, first);
  if (s.approval.id && isApprovalRecord(final)) {
    await localUntilLanded.shareOutcome({ approvalId: s.approval.id, callId: spec.callId, record: final });
  }
  return final;
}

/**
 * A call that joined an identical pending approval ends with that approval's final state (sent by
 * the call that raised it), not `pending_approval`. Should the signal never come (the raising
 * call ended before this one joined), the raising call's closed workflow is read once its
 * approval and execution window are surely over.
 */
async function followJoined(s: CallRun, first: CallOutcome): Promise<CallWorkflowResult> {
  const joined = s.joined!;
  const settled = joined.expiresAt + s.spec.clocks.executionWindowMs + JOINED_GRACE_MS;
  const signalled = await condition(() => joined.record !== undefined, Math.max(1, settled - Date.now()));
  const record = signalled ? joined.record! : await retriedBriefly.joinedOutcome({ callId: joined.callId });
  if (!record) return first;
  setStatus(record.execution?.status ?? record.status);
  return record;
}

/** The steps in order; returns the first answer (what the `outcome` update gave the caller). */
async function runCall(s: CallRun): Promise<CallOutcome> {
  const checked = await checkAndRunCovered(s);
  if (checked) return checked;
  const pending = await raiseApproval(s);
  if (!pending) return s.outcome!;
  const allowed = await awaitDecision(s);
  if (!allowed) return s.outcome!;
  const executed = await awaitReplayThenExecute(s);
  if (executed) await rememberIfAsked(s, executed);
  return s.outcome!;
}

// --- how activities run: one proxy per retry policy ----------------------------------------------

/**
 * Error types an activity throws that no retry can fix: the names the SDK records for our typed
 * errors (`AppError`, `PermissionInputError`) and for malformed stored data (`ZodError`).
 */
const NON_RETRYABLE = ['AppError', 'PermissionInputError', 'ZodError'];

/**
 * Regular activities retried briefly (10 attempts; a completion lost with a dead worker, or
 * Temporal, is retried within seconds): the approval's lifecycle — decisions (after the update was
 * accepted, so a crash never leaves a committed decision behind a workflow that did not see it),
 * bubbles, expiry, superseding — and the rules an allow_remember plants.
 */
const retriedBriefly = proxyActivities<CallActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 ms', maximumAttempts: 10, nonRetryableErrorTypes: NON_RETRYABLE },
});
/**
 * The first answer — check, then send or raise — as local activities: inside the same workflow
 * task, with no server round trip per step (a covered call completes in one task). Retried until
 * they land, for up to 10 minutes (a PostgreSQL restart must not fail the call's workflow): safe,
 * because the check's read writes the durable send mark (a re-run never sends a non-idempotent
 * request again) and raising an approval is idempotent by its id.
 */
const firstSteps = proxyLocalActivities<CallActivities>({
  startToCloseTimeout: '2 minutes',
  scheduleToCloseTimeout: '10 minutes',
  retry: { initialInterval: '200 ms', maximumInterval: '5 seconds', nonRetryableErrorTypes: NON_RETRYABLE },
});
/**
 * Local activities retried until they land, for as long as it takes: the re-check that prepares an
 * approved send, and sharing an approval's final state with the calls that joined it.
 */
const localUntilLanded = proxyLocalActivities<CallActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 ms', maximumInterval: '10 seconds', nonRetryableErrorTypes: NON_RETRYABLE },
});
/**
 * The approved call's final record: local, and retried on every error until it lands — an
 * execution must never stay open behind a finished workflow.
 */
const recordedWhatever = proxyLocalActivities<CallActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500 ms', maximumInterval: '10 seconds' },
});
/** The same, as a regular activity: an execution window that passed (recorded from a timer). */
const recordedWhateverRegular = proxyActivities<CallActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500 ms', maximumInterval: '10 seconds' },
});
/**
 * The approved send: a regular activity, so its heartbeats show a dead worker within seconds and
 * its completion is in the history the moment it is known; retried (20 attempts) behind its
 * durable mark, which keeps a request that may have left from being sent again.
 */
const sentWithHeartbeat = proxyActivities<CallActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '5 seconds', maximumAttempts: 20, nonRetryableErrorTypes: NON_RETRYABLE },
});
/**
 * A reminder: the activity only starts the notice workflow (fire-and-forget), so a channel that
 * is down never holds the approval; a few quick attempts, then the reminder is skipped.
 */
const reminded = proxyActivities<ReturnType<typeof createNoticeActivities>>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 ms', maximumAttempts: 3 },
});
/** How long past its approval's expiry and execution window a joined call waits for the signal. */
const JOINED_GRACE_MS = 5 * 60_000;

/** An update refused: its type and details reach the API intact (UPDATE_ERROR_CODES maps them). */
function reject(type: UpdateErrorType, message: string, details: Record<string, unknown> = {}): never {
  throw ApplicationFailure.create({ message, type, nonRetryable: true, details: [details] });
}

// --- the state ---------------------------------------------------------------------------------

/** Everything the workflow knows, in one place; the handlers and the steps read and change it. */
interface CallRun {
  spec: CallSpec;
  tiers: Tier[];
  /** The first answer, once known (the `outcome` update waits for it). */
  outcome?: CallOutcome;
  /** Where the chain's rules fell short (the check's answer when an approval is needed). */
  gap?: Extract<CheckResult, { outcome: 'gap' }>;
  approval: {
    id: string | null;
    status: ApprovalStatus | null;
    resolverId: string | null;
    expiresAt: number;
    /** When the next automatic bubble is due (null: none). */
    bubbleAt: number | null;
    /** Reminders still due (unix ms, ascending) and how many were sent. */
    reminders: number[];
    remindersSent: number;
    supersededBy?: string;
    /** Past the user: where the people's routing last left it (server/teams/routing.ts). */
    beyond?: 'chain' | 'approver' | 'admins';
  };
  execution?: ExecutionRecord;
  executionDeadline: number;
  replay?: { triggeredBy: 'user' | 'agent' | 'auto' };
  executionOutcome?: CallOutcome;
  remember?: { keys: string[]; ttlMs: number; ttl: string; resolverId: string; condition?: string };
  /** The approver allowed an edited request: what runs, is re-checked, audited and remembered. */
  edit?: ApprovedEdit;
  /**
   * Held while the approval's state is being changed and recorded: by a decision (resolve, cancel;
   * an allow's activity records, re-checks and sends under it) and by the timers' own steps
   * (expiry, reminders, bubbling, being superseded). Each waits for the other and judges the
   * approval again once it holds the lock, as in Temporal's safe-message-handler samples.
   */
  decisions: Mutex;
  /** What came of an allow's send, when the allow's own activity sent it. */
  sentOnAllow?: SentOnAllow;
  /** This call joined another call's pending approval: that call, and its final state once sent. */
  joined?: { callId: string; expiresAt: number; record?: ApprovalRecord };
  /** Nonces of the signed messages already taken: each is good once (a history shows them all). */
  usedNonces: Set<string>;
  /**
   * The call's trace (the workflow's span; empty with tracing off). A decision arrives in the
   * approver's request, yet its steps belong to the call's trace: they run in this context.
   */
  trace: TraceContext;
}

function newCallState(spec: CallSpec): CallRun {
  return {
    spec,
    tiers: suggestedTiers(spec.permissionKeys, spec.rememberConditions),
    approval: { id: null, status: null, resolverId: null, expiresAt: 0, bubbleAt: null, reminders: [], remindersSent: 0 },
    executionDeadline: 0,
    decisions: new Mutex(),
    usedNonces: new Set(),
    trace: activeContext(),
  };
}

const setStatus = (status: string) => upsertSearchAttributes([{ key: CALL_SEARCH_ATTRIBUTES.status, value: status }]);

/** Awaiting a decision: raised, or escalated upward and still undecided. */
const isOpen = (s: CallRun) => s.approval.status === 'pending' || s.approval.status === 'bubbled';

/** The next identity above `id` on the chain (the user stays the user). */
function nextResolverAbove(s: CallRun, id: string): string {
  const chain = s.spec.chain;
  const i = chain.findIndex((c) => c.id === id);
  const next = chain[Math.min(i + 1, chain.length - 1)];
  return next ? next.id : id;
}

/** What a refusal tells about the approval's state (`status`, and its execution's). */
function statusDetails(s: CallRun): Record<string, unknown> {
  return { status: s.approval.status ?? 'not_raised', ...(s.execution ? { execution_status: s.execution.status } : {}) };
}

function approvalRecord(s: CallRun, viewerId: string): ApprovalRecord {
  const { spec } = s;
  return {
    id: s.approval.id!,
    status: s.approval.status!,
    relationship: authorityOver({ identityId: viewerId, admin: false }, spec.chain).relationship,
    risk: spec.approvalRisk,
    permission_keys: spec.permissionKeys,
    suggested_tiers: s.tiers,
    derived_keys: derivedKeys(spec.permissionKeys),
    expires_at: new Date(s.execution ? s.executionDeadline : s.approval.expiresAt).toISOString(),
    ...(s.execution ? { execution: { ...s.execution } } : {}),
    ...(s.edit ? { modified_by_approver: true as const, diff: s.edit.diff, edited_permission_keys: s.edit.permissionKeys } : {}),
  };
}

/**
 * The spec the execution steps take: the call's own, or the edited request's
 * keys, description and disclosed values, marked so the send loads the edited request.
 */
function executedSpec(s: CallRun): CallSpec {
  return executedSpecOf(s.spec, s.edit, s.approval.id!);
}

function executedSpecOf(spec: CallSpec, edit: ApprovedEdit | undefined, approvalId: string): CallSpec {
  if (!edit) return spec;
  const { disclosed: _original, ...rest } = spec;
  return {
    ...rest,
    permissionKeys: edit.permissionKeys,
    description: edit.description,
    ...(edit.disclosed?.length ? { disclosed: edit.disclosed } : {}),
    edit: { approvalId, diff: edit.diff },
  };
}

/** The final state: the approval record with its execution summary, or the call's own outcome. */
function finalState(s: CallRun, first: CallOutcome): CallWorkflowResult {
  if (!s.approval.status || first.status !== 'pending_approval') {
    // A covered call's result: its summary, never the upstream's body (GET /v1/calls/{id} has it).
    return first.status === 'called' ? { ...first, result: resultSummary(first.result) as CallResult } : first;
  }
  const record = approvalRecord(s, s.spec.requesterId);
  if (!record.execution) return record;
  const { result, ...rest } = record.execution;
  const summary = resultSummary(result);
  return { ...record, execution: { ...rest, ...(summary ? { result: summary } : {}) } };
}

/**
 * What an operator reads of an upstream's answer in the Temporal UI: its status and time, not the
 * body (the upstream's answer may carry data the UI should not show; PostgreSQL keeps it).
 */
function resultSummary(result: unknown): { status_code: number; duration_ms: number } | undefined {
  if (!result || typeof result !== 'object') return undefined;
  const { status_code, duration_ms } = result as CallResult;
  return { status_code, duration_ms };
}

// --- the handlers: a query, three updates (each with its validator) and a signal ----------------

function installHandlers(s: CallRun): void {
  setHandler(stateQuery, () => ({
    approvalId: s.approval.id,
    approvalStatus: s.approval.status,
    resolverId: s.approval.resolverId,
    executionStatus: s.execution?.status ?? null,
  }));
  setHandler(outcomeUpdate, async () => {
    await condition(() => s.outcome !== undefined);
    return s.outcome!;
  });
  // Each update's validator first verifies the gateway signed it: one sent straight to Temporal
  // (its UI, any SDK client) is refused before it is accepted and changes nothing.
  setHandler(resolveUpdate, (input) => onResolve(s, taken(s, input)), { validator: (input) => validateResolve(s, verified(s, 'resolve', input)) });
  setHandler(replayUpdate, (input) => onReplay(s, taken(s, input)), { validator: (input) => validateReplay(s, verified(s, 'replay', input)) });
  setHandler(cancelUpdate, (input) => onCancel(s, taken(s, input)), { validator: (input) => validateCancel(s, verified(s, 'cancel', input)) });
  // A signal has no validator: one without a valid proof is dropped.
  setHandler(supersedeSignal, (input) => {
    if (!isGenuine(s, 'supersede', input)) return;
    taken(s, input);
    if (isOpen(s)) s.approval.supersededBy = input.byApprovalId;
  });
  setHandler(sharedOutcomeSignal, (input) => {
    if (!isGenuine(s, 'shared-outcome', input)) return;
    taken(s, input);
    if (s.joined) s.joined.record = input.record;
  });
}

/** Whether the gateway signed this message for this workflow, and its nonce is still unused. */
function isGenuine(s: CallRun, kind: ProofKind, input: Proven<object>): boolean {
  // Bound to the call's workflow id as the spec names it (the same id the API addresses).
  return verifyProof(s.spec.messageKeys, kind, callWorkflowId(s.spec.callId), input) && !s.usedNonces.has(input.proof!.nonce);
}

/** A validator's first step: the message's proof, else the refusal (nothing is accepted). */
function verified<T extends object>(s: CallRun, kind: ProofKind, input: Proven<T>): T {
  if (!isGenuine(s, kind, input)) reject(UPDATE_ERRORS.unverified, 'this message was not sent by the gateway: it carries no valid signature');
  return withoutProof(input);
}

/** A handler's first step: the message's nonce is used up (a copy of it is refused from now on). */
function taken<T extends object>(s: CallRun, input: Proven<T>): T {
  if (input.proof) s.usedNonces.add(input.proof.nonce);
  return withoutProof(input);
}

/** Who may decide, and whether the decision holds together; the authority is core/permissions/authority.ts. */
function validateResolve(s: CallRun, input: ResolveInput): void {
  const { approval } = s;
  if (!isOpen(s) || approval.supersededBy) reject(UPDATE_ERRORS.notPending, `the approval is ${approval.status ?? 'not raised'}`, statusDetails(s));
  const authority = authorityOver({ identityId: input.resolverId, admin: input.resolverIsAdmin }, s.spec.chain);
  if (authority.refusal === 'self') reject(UPDATE_ERRORS.selfResolve, SELF_RESOLVE_MESSAGE);
  if (authority.refusal) reject(UPDATE_ERRORS.notInChain, NOT_IN_CHAIN_MESSAGE);
  if (input.decision === 'bubble' && nextResolverAbove(s, approval.resolverId!) === approval.resolverId) {
    reject(UPDATE_ERRORS.cannotBubble, 'the approval already sits with the user: there is no one above to bubble to');
  }
  if (input.edit && input.decision !== 'allow' && input.decision !== 'allow_remember') {
    reject(UPDATE_ERRORS.invalidEdit, 'an edit goes with allow_once or allow_remember only', { field: 'decision' });
  }
  if (input.decision === 'allow_remember') {
    // Remembering after an edit remembers the edited request's tiers, never the original's.
    const tiers = input.edit ? suggestedTiers(input.edit.permissionKeys) : s.tiers;
    if (!input.rememberKeys?.length || !isSubsetOfTiers(input.rememberKeys, tiers)) {
      reject(UPDATE_ERRORS.invalidRemember, 'remember_keys must be a non-empty subset of the suggested tier keys', { field: 'remember_keys' });
    }
    if (!input.rememberTtlMs || !input.rememberTtl) reject(UPDATE_ERRORS.invalidRemember, 'allow_remember needs a ttl', { field: 'ttl' });
  }
}

/**
 * A decision: persisted first, then the state changes (the main loop reacts to state, and its
 * next activity must see what this decision wrote). Under the decisions lock, and judged again
 * once it holds it: a decision recorded meanwhile (or the approval's expiry) refuses this one.
 */
const onResolve = (s: CallRun, input: ResolveInput): Promise<ApprovalRecord> =>
  inContext(s.trace, () =>
    s.decisions.runExclusive(async () => {
      validateResolve(s, input);
      return inSpan('decision', { 'gateway.call_id': s.spec.callId, 'gateway.approval_id': s.approval.id!, 'gateway.decision': input.decision }, () => resolveHeld(s, input));
    }),
  );

async function resolveHeld(s: CallRun, input: ResolveInput): Promise<ApprovalRecord> {
  const { spec, approval } = s;
  const record = retriedBriefly;
  const at = Date.now();
  if (input.decision === 'bubble') {
    const from = approval.resolverId!;
    const next = nextResolverAbove(s, from);
    await record.recordBubble({ spec, approvalId: approval.id!, fromId: from, toId: next, actorId: input.resolverId, automatic: false });
    approval.resolverId = next;
    approval.status = 'bubbled';
    approval.bubbleAt = spec.clocks.autoBubbleMs ? at + spec.clocks.autoBubbleMs : null;
    return approvalRecord(s, input.resolverId);
  }
  if (input.decision === 'deny') {
    await record.recordDecision({ spec, approvalId: approval.id!, status: 'denied', decision: 'deny', resolverId: input.resolverId, reason: input.reason ?? null });
    approval.status = 'denied';
    return approvalRecord(s, input.resolverId);
  }
  const deadline = at + spec.clocks.executionWindowMs;
  const execution: ExecutionRecord = { id: uuid4(), status: 'pending', runtime: spec.runtime };
  const edit = input.edit;
  const remembered =
    input.decision === 'allow_remember'
      ? { keys: input.rememberKeys!, ttlMs: input.rememberTtlMs!, ttl: input.rememberTtl!, resolverId: input.resolverId, ...(input.rememberCondition ? { condition: input.rememberCondition } : {}) }
      : undefined;
  const decision: RecordDecisionInput = {
    spec,
    approvalId: approval.id!,
    status: 'allowed',
    decision: input.decision,
    resolverId: input.resolverId,
    reason: input.reason ?? null,
    rememberKeys: remembered?.keys ?? null,
    rememberTtl: remembered?.ttl ?? null,
    execution: { id: execution.id, expiresAt: new Date(deadline).toISOString() },
    ...(edit ? { edit } : {}),
  };
  // An API process with a worker waits for this allow in-process (answerKey): an auto-call
  // approval's decision, re-check and send then run in one activity.
  if (input.answerKey !== undefined && spec.autoCallOnApprove) {
    const after: CallRun = { ...s, approval: { ...approval, status: 'allowed' }, execution, executionDeadline: deadline, edit };
    const step = { spec: executedSpecOf(spec, edit, approval.id!), approvalId: approval.id!, executionId: execution.id };
    s.sentOnAllow = await allowThenSend({ decision, step, answerKey: input.answerKey, answer: approvalRecord(after, input.resolverId) });
  } else {
    await record.recordDecision(decision);
  }
  s.edit = edit;
  s.executionDeadline = deadline;
  s.execution = execution;
  s.remember = remembered;
  approval.status = 'allowed';
  if (spec.autoCallOnApprove) s.replay = { triggeredBy: 'auto' };
  return approvalRecord(s, input.resolverId);
}

/**
 * The allow and its send in one activity. Should that activity give up (its
 * retries ran out), the decision is recorded on its own (written once: a committed one is kept)
 * and the approved call runs the usual steps; their durable mark still stops a second send.
 */
async function allowThenSend(input: Parameters<CallActivities['allowThenSend']>[0]): Promise<SentOnAllow | undefined> {
  try {
    return await sentWithHeartbeat.allowThenSend(input);
  } catch {
    await retriedBriefly.recordDecision(input.decision);
    return undefined;
  }
}

function validateReplay(s: CallRun, input: ReplayInput): void {
  if (!authorityOver({ identityId: input.callerId, admin: false }, s.spec.chain).replay) reject(UPDATE_ERRORS.notRequester, 'only the requester can resume its call');
  if (s.executionOutcome) return; // already executed: the stored outcome is returned
  if (s.decisions.isLocked()) return; // the handler waits for the decision being recorded, then judges
  if (s.approval.status !== 'allowed' || !s.execution) reject(UPDATE_ERRORS.notReplayable, `the approval is ${s.approval.status ?? 'not raised'}`, statusDetails(s));
  if (s.replay || s.execution.status !== 'pending') reject(UPDATE_ERRORS.replayInFlight, 'this approved call is already being executed', statusDetails(s));
}

/** The requester resumes: the main loop runs the execution; this waits for its outcome. */
async function onReplay(s: CallRun, input: ReplayInput): Promise<CallOutcome> {
  // A decision still being recorded (e.g. run again after a crash): wait for it, then judge.
  await s.decisions.waitForUnlock();
  if (s.executionOutcome) return s.executionOutcome;
  if (s.approval.status !== 'allowed' || !s.execution) reject(UPDATE_ERRORS.notReplayable, `the approval is ${s.approval.status ?? 'not raised'}`, statusDetails(s));
  s.replay ??= { triggeredBy: input.triggeredBy };
  await condition(() => s.executionOutcome !== undefined);
  return s.executionOutcome!;
}

function validateCancel(s: CallRun, input: CancelInput): void {
  if (!isOpen(s)) reject(UPDATE_ERRORS.notPending, `the approval is ${s.approval.status ?? 'not raised'}`, statusDetails(s));
  if (!authorityOver({ identityId: input.callerId, admin: false }, s.spec.chain).replay) reject(UPDATE_ERRORS.notRequester, 'only the requester can cancel its request');
}

/** The requester withdraws its approval: under the decisions lock, judged again once it holds it. */
const onCancel = (s: CallRun, input: CancelInput): Promise<ApprovalRecord> =>
  s.decisions.runExclusive(async () => {
    validateCancel(s, input);
    await retriedBriefly.recordDecision({ spec: s.spec, approvalId: s.approval.id!, status: 'cancelled', decision: 'cancel', resolverId: input.callerId, reason: input.reason ?? null });
    s.approval.status = 'cancelled';
    return approvalRecord(s, input.callerId);
  });

// --- the steps ----------------------------------------------------------------------------------

/**
 * 1. Authenticate and check against the live chain; a covered call executes in the same local
 * activity (no second round). Returns the answer when the call ends here, else null (a gap).
 */
async function checkAndRunCovered(s: CallRun): Promise<CallOutcome | null> {
  const { check, executed } = await firstSteps.checkThenExecute({ spec: s.spec });
  const answer = firstAnswerOf(check, executed);
  if (!answer) {
    s.gap = check as Extract<CheckResult, { outcome: 'gap' }>;
    return null;
  }
  s.outcome = answer;
  setStatus(answer.status === 'denied' ? 'denied' : answer.status === 'called' ? 'called' : 'failed');
  return s.outcome;
}

/** 2. Raise the approval (the caller's answer: pending_approval). False: joined an identical pending one. */
async function raiseApproval(s: CallRun): Promise<boolean> {
  const { spec, tiers } = s;
  const gap = s.gap!;
  // `gapReasons` only changes the activity's input (no new command): replay is unaffected.
  const gapReasons = gap.reasons?.length ? { gapReasons: gap.reasons } : {};
  const raised = await firstSteps.raiseApproval({ spec, gapIdentityId: gap.gapIdentityId, firstResolverId: gap.firstResolverId, tiers, approvalId: uuid4(), ...gapReasons });
  s.approval.id = raised.approvalId;
  s.approval.expiresAt = Date.parse(raised.expiresAt);
  s.approval.resolverId = raised.resolverId;
  const pending: PendingApprovalOutcome = {
    status: 'pending_approval',
    approval_id: raised.approvalId,
    approval_url: `${spec.approvalUrlBase}/approvals/${raised.approvalId}`,
    action_description: spec.description,
    expires_at: raised.expiresAt,
    // The caller's relationship to the requester, as `GET /v1/approvals/{id}` says it to the same
    // caller: the answer goes to the requester itself. An update's result is not
    // replayed against history, so this needs no patch.
    relationship: 'self',
    suggested_tiers: tiers,
    auto_call_on_approve: spec.autoCallOnApprove,
    risk: spec.approvalRisk,
    permission_keys: spec.permissionKeys,
    ...(gap.reasons?.length ? { gap_reasons: gap.reasons } : {}),
  };
  s.outcome = pending;
  if (raised.deduplicatedInto) {
    // An identical request of this agent is already pending: this call answers with that one,
    // and ends with its final state.
    setStatus('deduplicated');
    if (raised.joinedCallId) s.joined = { callId: raised.joinedCallId, expiresAt: s.approval.expiresAt };
    return false;
  }
  s.approval.status = 'pending';
  setStatus('pending_approval');
  s.approval.bubbleAt = spec.clocks.autoBubbleMs ? Date.now() + spec.clocks.autoBubbleMs : null;
  if (raised.reminderMarks?.length) {
    s.approval.reminders = reminderTimes(raised.reminderMarks, s.approval.expiresAt - spec.clocks.approvalTtlMs, s.approval.expiresAt);
  }
  return true;
}

/**
 * 3. Wait on a decision (a signal-like update), the expiry timer, auto-bubbles or being superseded.
 * True when allowed.
 */
async function awaitDecision(s: CallRun): Promise<boolean> {
  const { approval } = s;
  // From when the approval was raised (its expiry less its lifetime: the raising activity's clock).
  const raisedAt = approval.expiresAt - s.spec.clocks.approvalTtlMs;
  const expired = await inSpan('wait', { 'gateway.call_id': s.spec.callId, 'gateway.approval_id': approval.id! }, () => untilDecidedOrExpired(s), raisedAt);
  if (expired) return false;
  // Superseded (an identical call's approval was decided): closed here unless a decision came first.
  const superseded = await s.decisions.runExclusive(async () => {
    if (!approval.supersededBy || !isOpen(s)) return false;
    approval.status = 'superseded';
    await retriedBriefly.recordDecision({ spec: s.spec, approvalId: approval.id!, status: 'superseded', decision: 'supersede', resolverId: null, reason: `superseded by approval ${approval.supersededBy}` });
    setStatus('superseded');
    return true;
  });
  if (superseded) return false;
  if (approval.status !== 'allowed') {
    setStatus(approval.status ?? 'failed');
    return false;
  }
  return true;
}

/** The wait: until the approval is closed or superseded, running the timers' steps; true when it expired. */
async function untilDecidedOrExpired(s: CallRun): Promise<boolean> {
  const { approval } = s;
  while (isOpen(s) && !approval.supersededBy) {
    const wakeAt = Math.min(approval.bubbleAt ?? Infinity, approval.reminders[0] ?? Infinity, approval.expiresAt);
    if (await condition(() => !isOpen(s) || approval.supersededBy !== undefined, Math.max(1, wakeAt - Date.now()))) break;
    // A timer is due. A decision being recorded (an allow still sending) holds the lock: no expiry,
    // bubble or reminder under it, and none once it has closed the approval.
    const expired = await s.decisions.runExclusive(() => (isOpen(s) && !approval.supersededBy ? onTimersDue(s) : Promise.resolve(false)));
    if (expired) return true;
  }
  return false;
}

/** The timers' steps, under the decisions lock: expiry (true: the approval expired), reminders, auto-bubbling. */
async function onTimersDue(s: CallRun): Promise<boolean> {
  const { spec, approval } = s;
  const approvalId = approval.id!;
  if (Date.now() >= approval.expiresAt) {
    approval.status = 'expired';
    await retriedBriefly.recordDecision({ spec, approvalId, status: 'expired', decision: 'expire', resolverId: null, reason: 'no decision before the approval expired' });
    setStatus('expired');
    return true;
  }
  await remindIfDue(s);
  if (approval.bubbleAt === null || Date.now() < approval.bubbleAt) return false;
  const next = nextResolverAbove(s, approval.resolverId!);
  if (next !== approval.resolverId) {
    await retriedBriefly.recordBubble({ spec, approvalId, fromId: approval.resolverId!, toId: next, actorId: null, automatic: true });
    approval.resolverId = next;
    approval.status = 'bubbled';
    approval.bubbleAt = spec.clocks.autoBubbleMs === null ? null : Date.now() + spec.clocks.autoBubbleMs;
    return false;
  }
  // At the user: on to the user's approver, then the org's admins.
  const routed = await retriedBriefly.routeOnward({ approvalId, expected: approval.beyond ?? 'chain' });
  if (routed.stage !== (approval.beyond ?? 'chain')) approval.status = 'bubbled';
  approval.beyond = routed.stage;
  approval.bubbleAt = routed.top || spec.clocks.autoBubbleMs === null ? null : Date.now() + spec.clocks.autoBubbleMs;
  return false;
}

/** A reminder due: the resolver (whoever it is now) is reminded; a failure to start it is skipped. */
async function remindIfDue(s: CallRun): Promise<void> {
  const { approval } = s;
  while (approval.reminders.length > 0 && Date.now() >= approval.reminders[0]!) {
    approval.reminders.shift();
    approval.remindersSent++;
    try {
      await reminded.remindResolver({ approvalId: approval.id!, n: approval.remindersSent });
    } catch {
      // Never let a reminder end the approval's wait.
    }
  }
}

/**
 * 4. After allow: wait for the replay (auto, or the requester with approval_id) within the
 * execution window, then re-check, execute and audit (executeApproved). Null: the window passed.
 */
async function awaitReplayThenExecute(s: CallRun): Promise<ExecuteCallResult | null> {
  const { spec } = s;
  const approvalId = s.approval.id!;
  const execution = s.execution!;
  setStatus('allowed');
  const started = await condition(() => s.replay !== undefined, Math.max(1, s.executionDeadline - Date.now()));
  if (!started) {
    execution.status = 'expired';
    // Retried until it lands: an execution must never stay open behind a finished workflow.
    await recordedWhateverRegular.recordExecution({ spec, approvalId, executionId: execution.id, status: 'expired', triggeredBy: null });
    s.executionOutcome = { status: 'error', error: { code: 'conflict', message: 'the approved call was not resumed within its execution window' } };
    setStatus('expired');
    return null;
  }
  const { triggeredBy } = s.replay!;
  execution.status = 'executing';
  execution.triggered_by = triggeredBy;
  const executed = await executeApproved({ spec: executedSpec(s), approvalId, executionId: execution.id }, triggeredBy, s.sentOnAllow);
  execution.status = executed.executionStatus ?? (executed.outcome.status === 'called' ? 'executed' : 'failed');
  if (executed.httpStatusCode !== null) execution.http_status_code = executed.httpStatusCode;
  if (executed.outcome.status === 'called') execution.result = executed.outcome.result;
  if (executed.outcome.status === 'error') execution.error = executed.outcome.error;
  s.executionOutcome = executed.outcome;
  setStatus(execution.status);
  return executed;
}

/** 5. allow_remember: the rules are planted only after the replay succeeded. */
async function rememberIfAsked(s: CallRun, executed: ExecuteCallResult): Promise<void> {
  if (!s.remember || executed.outcome.status !== 'called') return;
  await retriedBriefly.plantRules({ spec: executedSpec(s), approvalId: s.approval.id!, patterns: s.remember.keys, ttlMs: s.remember.ttlMs, resolverId: s.remember.resolverId, ...(s.remember.condition ? { condition: s.remember.condition } : {}) });
}

/**
 * After allow: prepare (re-check, mark executing), send (behind its durable mark), record (until it
 * lands). Whatever fails on the way, the execution ends in a final state, written and returned.
 */
async function executeApproved(
  step: { spec: CallSpec; approvalId: string; executionId: string },
  triggeredBy: 'user' | 'agent' | 'auto',
  sentOnAllow?: SentOnAllow,
): Promise<ExecuteCallResult> {
  const prepare = localUntilLanded;
  const record = recordedWhatever;
  if (sentOnAllow) {
    // Re-checked and sent with the decision: only the final record is left,
    // after the decision's events if they did not go out with it.
    if (!sentOnAllow.announced) await retriedBriefly.announceDecision({ spec: step.spec, approvalId: step.approvalId });
    if (sentOnAllow.kind === 'stopped') return sentOnAllow.result;
    return record.recordExecutionResult({ ...step, sent: sentOnAllow.sent });
  }
  try {
    const prepared = await prepare.prepareExecution({ ...step, triggeredBy });
    if (!prepared.proceed) return prepared.result;
  } catch (err) {
    return record.recordExecutionResult({ ...step, sent: { kind: 'error', error: failureBody(err) } });
  }
  let sent: Parameters<CallActivities['recordExecutionResult']>[0]['sent'];
  try {
    sent = await sentWithHeartbeat.sendExecution(step);
  } catch (err) {
    // Retries ran out (a dependency stayed down): the record step reads the mark to tell whether
    // the request may have left.
    sent = { kind: 'gave_up', error: failureBody(err) };
  }
  return record.recordExecutionResult({ ...step, sent });
}

/** A failed activity as the error the requester sees (typed errors keep their code). */
function failureBody(err: unknown): ErrorBody {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type === 'AppError') return { code: 'unavailable', message: cause.message };
  return { code: 'unavailable', message: 'the gateway could not run the approved call: a dependency stayed unreachable' };
}
