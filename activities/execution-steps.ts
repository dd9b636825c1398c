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
import { AppError } from '../server/errors.ts';
import type { ExecutorDeps, PlannedUpstream } from '../server/execution/execute.ts';
import { loadStoredCall, type StoredCall } from '../server/calls/stored-call.ts';
import { readAhead } from './read-ahead.ts';
import { chargeApprovedSend, judgeChain, recheckRefusal, type LiveCheck } from '../server/identities/chain-check.ts';
import { getChainWithRules } from '../server/identities/store.ts';
import { storedConditionRequest, type ConditionRequest } from '../core/permissions/conditions.ts';
import { instanceLookupAlong } from '../server/registry/request-lookup.ts';
import type { AuditEntry } from '../server/audit/entry.ts';
import type { Logger } from '../server/logger.ts';
import type { RegistryService } from '../server/registry/service.ts';
import type { VaultKeyring } from '../server/vault/keyring.ts';
import type { ApprovalRecord, ApprovedEdit, CallResult, CallSpec, EditedMark, ErrorBody, ExecuteCallResult, ExecutionStatus } from '../workflows/definitions.ts';
import type { LocalExchange } from '../server/temporal/local-exchange.ts';
import type { WebhookEventType } from '../workflows/webhook-definitions.ts';
import { entryFor, untilLanded, type CallEvent, type CallMetrics } from './covered-call.ts';
import { approvalPath } from './approval-path.ts';
import { templateSecretOf, withPrefetchedSecret } from './secret-prefetch.ts';
import { planSend, sendOnce, typedError, type TypedError } from './send-once.ts';
import { inSpan } from '../core/telemetry/spans.ts';
import { OUTCOME_UNKNOWN } from './outcome-unknown.ts';
import { openResult, sealOutcome, sealResult, type SealedResult } from '../server/calls/sealed-results.ts';

/**
 * What the send step knows: the upstream answered, a typed error, or it cannot know. The result
 * is sealed before it goes back to the workflow (server/calls/sealed-results.ts).
 */
export type SendOutcome =
  | { kind: 'sent'; result: CallResult | SealedResult; httpStatusCode: number }
  | { kind: 'error'; error: ErrorBody }
  /** An earlier attempt may have sent this non-idempotent request: it is not sent again. */
  | { kind: 'outcome_unknown' };

export type PrepareOutcome = { proceed: true } | { proceed: false; result: ExecuteCallResult };

export { OUTCOME_UNKNOWN };

/** A decision as the workflow hands it to be recorded. */
export interface RecordDecisionInput {
  spec: CallSpec;
  approvalId: string;
  status: 'allowed' | 'denied' | 'expired' | 'superseded' | 'cancelled';
  decision: string;
  resolverId: string | null;
  reason: string | null;
  rememberKeys?: string[] | null;
  rememberTtl?: string | null;
  execution?: { id: string; expiresAt: string };
  /** Allowed with changes. */
  edit?: ApprovedEdit;
}

/**
 * An allow of an auto-call approval, recorded and sent in one activity: what
 * came of the send, and whether the decision's events went out (if not, the workflow sends them).
 */
type AllowSend = { kind: 'stopped'; result: ExecuteCallResult } | { kind: 'sent'; sent: SendOutcome };
export type SentOnAllow = AllowSend & { announced: boolean };

export interface AllowThenSendInput {
  decision: RecordDecisionInput;
  step: StepInput;
  /** The API waiting in this process for the approver's answer (the local exchange). */
  answerKey: string;
  answer: ApprovalRecord;
}

export interface ExecutionStepDeps {
  /** The approver waiting in this process for an allow's record (the local exchange). */
  decisions: LocalExchange['decisions'];
  /** A decision as its statement writes it, with its audit row (written once: see calls.recordDecision). */
  decisionWrite: (d: RecordDecisionInput) => [calls.DecisionWrite, AuditEntry];
  /** The decision's events: agent streams, the people's log, webhooks, Slack messages. */
  announceDecision: (d: { spec: CallSpec; approvalId: string }) => Promise<void>;
  pool: DatabasePool;
  logger: Logger;
  keyring: VaultKeyring;
  registry: RegistryService;
  executor: ExecutorDeps;
  emit: (spec: CallSpec, type: WebhookEventType, data: Record<string, unknown>) => Promise<void>;
  approvalEventData: (approvalId: string) => Promise<Record<string, unknown>>;
  metrics: CallMetrics;
  /** The moment whose budget windows an approved call is charged to when it is sent. */
  budgetClock: () => Date;
}

/** An edited request's outcome and audit rows say so, with the diff. */
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
      const [exec, { read, request }] = await Promise.all([
        calls.getExecution(pool, executionId),
        // A deny with a condition is judged on what will be sent (the approver's edit, else the request).
        Promise.all([calls.requestToSend(pool, approvalId), getChainWithRules(pool, spec.requesterId, spec.permissionKeys)]).then(([stored, chainRead]) => ({ read: chainRead, request: storedConditionRequest(stored) })),
      ]);
      if (!exec) throw new Error(`execution ${executionId} not found`);
      // A retry after the row went final (a crash after the write): the recorded verdict stands.
      if (exec.status === 'cancelled') return { proceed: false, result: { outcome: { status: 'error', error: exec.error as ErrorBody }, httpStatusCode: null, executionStatus: 'cancelled' } };
      const refusal = recheckRefusal(judgeChain(read, spec.permissionKeys, { request }));
      if (refusal) return { proceed: false, result: await recordFinal(input, { kind: 'error', error: refusal }, 'cancelled') };
      await chargeSend(spec, read, request);
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
      return withHeartbeats(async () => {
        const planned = await plan(input.spec, await loadStoredCall(deps, input.spec).catch(typedError));
        if ('kind' in planned) return planned;
        return sealed(input.spec, await sendMarked(input, planned, await calls.markExecutionSend(pool, input.executionId)));
      });
    },

    /**
     * An allow of an auto-call approval and its execution in one regular activity, without a
     * workflow task between them. The decision is written in the
     * statement that reads the chain for the re-check (as it is at the decision) and the stored
     * request; then the execution's start with its send mark in one statement, the
     * credential, and the request. The approver's answer (to the API waiting in this process) and
     * the decision's events follow the request out, so their work never delays it. A retry is safe at
     * every point: the decision is written once, the execution's state says where it stands, and
     * the mark stops a second send of a request that is not idempotent.
     */
    async allowThenSend(input: AllowThenSendInput): Promise<SentOnAllow> {
      const { approvalId } = input.step;
      return withHeartbeats(async () => {
        const { written, chain, charge, stored } = await decideAndRead(input.decision, input.step.spec);
        // The decision is committed: the approver's answer and the decision's events are due. They
        // wait until the request has left (or the call stopped, or must wait for a dependency), so
        // their work does not hold it up; an attempt that fails gives them on its way out.
        let announcing: Promise<boolean> | undefined;
        const announce = (): Promise<boolean> => {
          if (announcing) return announcing;
          deps.decisions.deliver(input.answerKey, input.answer);
          announcing = deps.announceDecision(input.decision).then(
            () => true,
            (err: unknown) => (logger.warn({ err, approval_id: approvalId }, 'the decision’s events did not go out with the send: the workflow sends them'), false),
          );
          return announcing;
        };
        try {
          const sent = await sendAllowed(input.step, written, { chain, charge }, stored, announce);
          const out: AllowSend = sent.kind === 'sent' ? { kind: 'sent', sent: sealed(input.step.spec, sent.sent) } : sent;
          return { ...out, announced: await announce() };
        } finally {
          void announce();
        }
      });
    },

    /** The decision's events, when they did not go out with its send. */
    async announceDecision(input: { spec: CallSpec; approvalId: string }): Promise<void> {
      await deps.announceDecision(input);
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

  /** A send's outcome as it goes back to the workflow: the upstream's answer sealed. */
  function sealed(spec: CallSpec, sent: SendOutcome): SendOutcome {
    return sent.kind === 'sent' ? { ...sent, result: sealResult(deps.keyring, spec.callId, sent.result) } : sent;
  }

  /** Heartbeats every second while `work` runs: Temporal sees a dead worker within seconds. */
  async function withHeartbeats<T>(work: () => Promise<T>): Promise<T> {
    heartbeat();
    const beat = setInterval(() => heartbeat(), 1_000);
    try {
      return await work();
    } finally {
      clearInterval(beat);
    }
  }

  /**
   * An approved call passed its re-check and is about to be sent: the budgets it falls under count
   * it (never refuse it). Before the send, as a covered call's charge; a retry is charged once.
   */
  function chargeSend(spec: CallSpec, read: Parameters<typeof chargeApprovedSend>[1], request: ConditionRequest | null): Promise<void> {
    return chargeApprovedSend(pool, read, spec.permissionKeys, { callId: spec.callId, request, at: deps.budgetClock() });
  }

  /**
   * An allow written, with what its send reads: one statement writes the decision and reads the
   * requester's chain, the call's stored request and its service's instance lookup; an approver's
   * edited request is the one the decision carries. `spec`: the call as it runs (the edit applied:
   * its keys are re-checked). The stored request is handed on as a promise its reader may never
   * await (the re-check can refuse first).
   */
  async function decideAndRead(d: RecordDecisionInput, spec: CallSpec): Promise<{ written: boolean; chain: LiveCheck; charge: () => Promise<void>; stored: Promise<StoredCall | TypedError> }> {
    const lookup = instanceLookupAlong(spec.service);
    const read = await calls.recordDecisionForSend(pool, ...deps.decisionWrite(d), { requesterId: spec.requesterId, keys: spec.permissionKeys, alongside: lookup?.sql });
    const stored = loadStoredCall(deps, spec, { row: read.call, lookup: lookup?.read(read.also), edited: d.edit });
    // Conditions read what will be sent: the approver's edit, else the stored request.
    const request = storedConditionRequest(d.edit ? d.edit.redacted : read.call?.request_redacted);
    return { written: read.written, chain: judgeChain(read, spec.permissionKeys, { request }), charge: () => chargeSend(spec, read, request), stored: readAhead(stored.catch(typedError)) };
  }

  /**
   * An allowed call after its decision was committed: the re-check's verdict,
   * then the start with its send mark and the template secret's envelope in one statement, the
   * plan and the request. `left` runs once the request has left, or before the plan waits for a
   * dependency; every other way out, the caller gives the answer on return.
   */
  async function sendAllowed(step: StepInput, written: boolean, recheck: { chain: LiveCheck; charge: () => Promise<void> }, stored: Promise<StoredCall | TypedError>, left: () => void): Promise<AllowSend> {
    const { spec, approvalId, executionId } = step;
    // Fresh (this attempt wrote the decision): the execution is `pending`; a retry reads it.
    const exec = written ? null : await calls.getExecution(pool, executionId);
    if (!written && !exec) throw new Error(`execution ${executionId} not found`);
    const status = exec?.status ?? 'pending';
    // A retry after the re-check refused it: the recorded verdict stands.
    if (status === 'cancelled') return { kind: 'stopped', result: { outcome: { status: 'error', error: exec!.error as ErrorBody }, httpStatusCode: null, executionStatus: 'cancelled' } };
    const refusal = recheckRefusal(recheck.chain);
    if (refusal) return { kind: 'stopped', result: await recordFinal(step, { kind: 'error', error: refusal }, 'cancelled') };
    await recheck.charge();
    const started = () => entryFor(spec, { event: 'execution.started', actorId: null, approvalId, executionId, details: { triggered_by: 'auto' } });
    const loaded = await stored;
    if ('kind' in loaded) {
      // Nothing can be sent (the instance is gone, the action disabled): it starts and fails, as on resume.
      if (status === 'pending') await calls.startExecution(pool, executionId, 'auto', started());
      return { kind: 'sent', sent: loaded };
    }
    // The request is planned after its mark: a dependency briefly away is waited for in this
    // attempt, so the mark does not turn a request that never left into outcome_unknown.
    const secret = status === 'pending' ? templateSecretOf(spec.orgId, loaded.instance, loaded.request, spec.action) : null;
    const claimed = status === 'pending' ? await calls.startExecutionMarked(pool, executionId, 'auto', started(), secret ? { secret: secret.read } : undefined) : null;
    const marks = claimed?.attempts ?? (await calls.markExecutionSend(pool, executionId));
    // The prefetched envelope is served once: a retry of the plan reads the secret afresh.
    const executor = secret && claimed ? withPrefetchedSecret(deps.executor, spec.orgId, secret.name, claimed.secret) : deps.executor;
    const waitingPlan = (err: unknown): never => {
      left(); // the plan must wait for a dependency: the approver does not wait with it
      throw err;
    };
    const planned = await untilLanded(() => plan(spec, loaded, executor).catch(waitingPlan), 30_000, (err) => !(err instanceof AppError));
    if ('kind' in planned) return { kind: 'sent', sent: planned };
    return { kind: 'sent', sent: await sendMarked(step, planned, marks, left) };
  }

  /** The request planned with its credential (send-once.ts): an approved call's result is stored as usual, never verbose. */
  function plan(spec: CallSpec, stored: StoredCall | TypedError, executor = deps.executor): Promise<PlannedUpstream | TypedError> {
    return planSend(executor, spec, stored, false);
  }

  /** One attempt at the upstream per mark: `marks` above 1 means an earlier one may have left. `left`: see PlannedUpstream.send. */
  function sendMarked(input: StepInput, planned: PlannedUpstream, marks: number, left?: () => void): Promise<SendOutcome> {
    const metrics = { path: approvalPath(input.spec), count: deps.metrics };
    return sendOnce(planned, { mayHaveLeft: marks > 1, key: input.executionId, logger, ids: { call_id: input.spec.callId, execution_id: input.executionId }, left, metrics });
  }

  function countFinal(spec: CallSpec, sent: SendOutcome, status: ExecutionStatus): void {
    const path = approvalPath(spec);
    const outcome = sent.kind === 'sent' ? 'called' : sent.kind === 'outcome_unknown' ? 'outcome_unknown' : status === 'cancelled' ? 'cancelled' : 'failed';
    deps.metrics.callFinished({ service: spec.template, action: spec.action, outcome, path });
    if (outcome === 'outcome_unknown') deps.metrics.outcomeUnknown(path);
  }

  function appendAuditFor(db: Parameters<typeof appendAudit>[0], spec: CallSpec, e: CallEvent) {
    return appendAudit(db, entryFor(spec, e));
  }

  /** The final state written; the outcome returned to the workflow with its result sealed. */
  async function recordFinal(input: StepInput, sent: SendOutcome, status: ExecutionStatus): Promise<ExecuteCallResult> {
    const { spec, approvalId, executionId } = input;
    // PostgreSQL keeps the upstream's answer open (GET /v1/calls/{id} reads it there).
    if (sent.kind === 'sent') sent = { ...sent, result: openResult(deps.keyring, spec.callId, sent.result) };
    const error = sent.kind === 'error' ? sent.error : sent.kind === 'outcome_unknown' ? OUTCOME_UNKNOWN : null;
    const httpStatusCode = sent.kind === 'sent' ? sent.httpStatusCode : null;
    const wrote = await inSpan('audit', { 'gateway.call_id': spec.callId, 'gateway.execution_id': executionId }, () => pool.transaction(async (tx) => {
      const exec = await calls.getExecution(tx, executionId);
      // Already final (a retry whose first attempt committed): keep what was written.
      if (exec && ['executed', 'failed', 'cancelled', 'expired'].includes(exec.status)) return false;
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
      return true;
    }));
    // Counted once, by the attempt whose transaction wrote the final state.
    if (wrote) countFinal(spec, sent, status);
    await deps.emit(spec, sent.kind === 'sent' ? 'approval.executed' : 'approval.execution_failed', await deps.approvalEventData(approvalId));
    if (sent.kind === 'sent') {
      const outcome = { status: 'called' as const, result: sent.result as CallResult, action_description: spec.description, ...editedMark(spec) };
      return { outcome: sealOutcome(deps.keyring, spec.callId, outcome), httpStatusCode, executionStatus: 'executed' };
    }
    return { outcome: { status: 'error', error: error!, ...editedMark(spec) }, httpStatusCode: null, executionStatus: status };
  }
}
