// Activities of the call workflow: every read and write of the call's read model, the permission
// check against current rules, the upstream execution, audit rows and webhook events. Each is
// idempotent under retry (ids come from the workflow; inserts tolerate replays).
import type { CallOutcomeLabel, GatewayMetrics } from '../server/metrics/metrics.ts';
import { approvalPath } from './approval-path.ts';
import type { CallMetrics } from './covered-call.ts';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { closestNonInheritingAncestor, rememberTargets, PermissionInputError } from '../core/permissions/chain.ts';
import { judgeWithBudgets, type LiveCheck } from '../server/identities/chain-check.ts';
import { derivedKeys } from '../core/permissions/tiers.ts';
import { storedConditionRequest } from '../core/permissions/conditions.ts';
import { coveringRule, createCoveredCall, entryFor, prefetchCovered, recordedCoveredOutcome, type CallEvent } from './covered-call.ts';
import type { AuditEntry } from '../server/audit/entry.ts';
import { appendAudit } from '../server/audit/store.ts';
import { approvalEventData as approvalData } from '../server/calls/approval-event-data.ts';
import { publishApprovalEvent, publishBubble } from '../server/events/approval-events.ts';
import { createApprovalRouting } from '../server/teams/routing.ts';
import { createAuditWriter } from '../server/audit/writer.ts';
import type { LocalExchange } from '../server/temporal/local-exchange.ts';
import { sealOutcome } from '../server/calls/sealed-results.ts';
import * as calls from '../server/calls/store.ts';
import type { ExecutorDeps } from '../server/execution/execute.ts';
import { createExecutionStepActivities, type RecordDecisionInput } from './execution-steps.ts';
import * as identities from '../server/identities/store.ts';
import * as notices from '../server/notifications/store.ts';
import { DEFAULT_REMINDERS } from '../core/notifications/reminders.ts';
import type { Logger } from '../server/logger.ts';
import type { RegistryService } from '../server/registry/service.ts';
import type { VaultKeyring } from '../server/vault/keyring.ts';
import type { MessageSigner } from '../server/temporal/message-signer.ts';
import { inSpan } from '../core/telemetry/spans.ts';
import {
  callWorkflowId,
  firstAnswerOf,
  isApprovalRecord,
  sharedOutcomeSignal,
  supersedeSignal,
  type ApprovalRecord,
  type ApprovedEdit,
  type CheckResult,
  type ExecuteCallResult,
  type CallWorkflowResult,
  type CallSpec,
  type Tier,
} from '../workflows/definitions.ts';
import type { WebhookEventType } from '../workflows/webhook-definitions.ts';

export interface CallActivityDeps {
  pool: DatabasePool;
  logger: Logger;
  keyring: VaultKeyring;
  temporal: Client;
  /** Signs the signals these activities send other call workflows (supersede, shared outcome). */
  signer: MessageSigner;
  registry: RegistryService;
  executor: ExecutorDeps;
  /** What the API of this process prepared and waits for (the eager start's shortcuts). */
  exchange: LocalExchange;
  /** Fire-and-forget webhook fan-out (never throws into the caller's path). */
  emitEvent: (event: { orgId: string; type: WebhookEventType; data: Record<string, unknown>; id: string }) => Promise<void>;
  /** Starts an approval's notices (Slack, email) for an occasion, fire-and-forget (never throws). */
  startNotices: (approvalId: string, purpose: string, occasion?: string) => Promise<void>;
  /** Final states and approvals, counted where they are written. */
  metrics: CallMetrics & Pick<GatewayMetrics, 'approvalRaised' | 'approvalExpired'>;
  /** The moment whose budget windows a call is charged to (tests pin it; see server/services.ts). */
  budgetClock: () => Date;
}

/** A decision that ends the call without a send, as counted (an allow is counted when its execution ends). */
const ENDING_DECISIONS: Partial<Record<RecordDecisionInput['status'], CallOutcomeLabel>> = { denied: 'denied', expired: 'expired', cancelled: 'cancelled', superseded: 'superseded' };

/** An allow with changes, as its audit row tells it: the diff and what the edited request asks for (never the envelope). */
function editedDetails(edit: ApprovedEdit) {
  return { outcome: 'allowed with changes', modified_by_approver: true, diff: edit.diff, edited_permission_keys: edit.permissionKeys, edited_description: edit.description };
}

/** The call's `disclose` values for audit details (computed over the redacted request). */
function disclosedDetails(spec: CallSpec): { disclosed?: CallSpec['disclosed'] } {
  return spec.disclosed?.length ? { disclosed: spec.disclosed } : {};
}

export function createCallActivities(deps: CallActivityDeps) {
  const { pool, logger } = deps;
  const executeCovered = createCoveredCall(deps);
  const routing = createApprovalRouting({ pool, audit: createAuditWriter(pool), logger, announce: async (orgId, approvalId, occasion) => void (await announce(orgId, approvalId, 'bubbled', occasion)) });

  // Every row of a call that injects a vault secret names it (never its value).
  const audit = (spec: CallSpec, e: CallEvent) => appendAudit(pool, entryFor(spec, e));

  const eventDeps = { db: pool, logger, emitWebhook: deps.emitEvent };
  const emit = (spec: CallSpec, type: WebhookEventType, data: Record<string, unknown>) => publishApprovalEvent(eventDeps, spec, type, data);
  const approvalEventData = (approvalId: string) => approvalData(pool, approvalId);

  /** The check's verdict, with the call row closed where the call ends here (denied, inactive chain). */
  async function verdict(spec: CallSpec, read: () => Promise<LiveCheck>): Promise<CheckResult> {
    try {
      const { inactive, decision } = await read();
      if (inactive) {
        const error = { code: 'forbidden', message: `identity ${inactive.id} is ${inactive.status}` };
        await calls.finishCall(pool, spec.callId, 'failed', null, { error });
        return { outcome: 'error', error };
      }
      if (decision.outcome === 'denied') {
        const when = decision.rule.condition ? ` when ${decision.rule.condition}` : '';
        const reason = `denied by rule "${decision.rule.pattern}"${when} for ${decision.key}`;
        await calls.finishCall(pool, spec.callId, 'denied', null, { error: { code: 'denied', message: reason } });
        await audit(spec, { event: 'call.denied', actorId: spec.requesterId, decision: 'denied', details: { rule_id: decision.rule.id, reason } });
        return { outcome: 'denied', reason };
      }
      if (decision.outcome === 'covered') return { outcome: 'covered' };
      const reasons = [...decision.failedConditions.map((f) => f.explanation), ...decision.exhaustedBudgets.map((b) => b.explanation)];
      return { outcome: 'gap', gapIdentityId: decision.gapIdentityId, firstResolverId: decision.firstResolverId, ...(reasons.length ? { reasons } : {}) };
    } catch (err) {
      if (err instanceof PermissionInputError) return { outcome: 'error', error: { code: 'invalid_request', message: err.message } };
      throw err;
    }
  }

  async function checkThenExecuteOnce(spec: CallSpec): Promise<{ check: CheckResult; executed: ExecuteCallResult | null }> {
    // The request this process prepared, and the secret its send will read: read by this statement.
    const prefetch = prefetchCovered(deps.exchange, spec);
    const checked = await inSpan('check', { 'gateway.call_id': spec.callId }, async (span) => {
      const read = await calls.chainWithSendClaim(pool, spec.requesterId, spec.permissionKeys, spec.callId, prefetch?.secret ? { secret: prefetch.secret.read } : undefined);
      const found = read.call;
      if (!found) throw new Error(`call ${spec.callId} not found`);
      // A re-run after the first run committed the call's final state: that state is the answer.
      const recorded = recordedCoveredOutcome(spec, found);
      if (recorded) return { recorded };
      const request = storedConditionRequest(found.request_redacted);
      let coveredBy: ReturnType<typeof coveringRule>[] = [];
      const check = await verdict(spec, async () => {
        const live = await judgeWithBudgets(pool, read, spec.permissionKeys, { callId: spec.callId, request, at: deps.budgetClock() });
        if (live.decision?.outcome === 'covered') coveredBy = live.decision.coveredBy.map(coveringRule);
        return live;
      });
      span.setAttribute('gateway.check_outcome', check.outcome);
      return { check, read, found, coveredBy };
    });
    if ('recorded' in checked && checked.recorded) return { check: { outcome: 'covered' }, executed: checked.recorded };
    const { check, read, found, coveredBy } = checked;
    if (check.outcome !== 'covered') {
      deps.exchange.preparedCalls.withdraw(spec.callId); // an approval executes later, from the call row
      return { check, executed: null };
    }
    return { check, executed: await executeCovered(spec, { previouslyMarked: found.previously_marked, coveredBy }, prefetch, read.secretEnvelope) };
  }

  /**
   * An approval's notices: started (fire-and-forget) only when the org announces approvals
   * somewhere; the reminder points come back for the workflow's timers (none without a channel).
   */
  async function announce(orgId: string, approvalId: string, purpose: string, occasion?: string): Promise<string[]> {
    if (!(await notices.orgHasChannels(pool, orgId))) return [];
    await deps.startNotices(approvalId, purpose, occasion);
    return (await notices.getReminderMarks(pool, orgId)) ?? [...DEFAULT_REMINDERS];
  }

  /** A decision as its statement writes it, with its audit row. */
  function decisionWrite(input: RecordDecisionInput): [calls.DecisionWrite, AuditEntry] {
    const { spec } = input;
    const event = input.status === 'expired' ? 'approval.expired' : input.status === 'superseded' ? 'approval.superseded' : 'approval.resolved';
    return [
      {
        approvalId: input.approvalId,
        update: {
          status: input.status,
          decision: input.decision,
          reason: input.reason,
          resolvedBy: input.resolverId,
          resolved: true,
          ...(input.rememberKeys !== undefined ? { rememberKeys: input.rememberKeys } : {}),
          ...(input.rememberTtl !== undefined ? { rememberTtl: input.rememberTtl } : {}),
          ...(input.edit ? { edit: input.edit } : {}),
        },
        ...(input.execution ? { execution: { id: input.execution.id, runtime: spec.runtime, expiresAt: new Date(input.execution.expiresAt) } } : {}),
        call: { id: spec.callId, status: input.status, open: input.status === 'allowed' },
      },
      entryFor(spec, {
        event,
        actorId: input.resolverId,
        approvalId: input.approvalId,
        executionId: input.execution?.id ?? null,
        decision: input.decision,
        details: {
          status: input.status,
          ...(input.reason ? { reason: input.reason } : {}),
          ...(input.rememberKeys ? { remember_keys: input.rememberKeys, ttl: input.rememberTtl } : {}),
          ...(input.edit ? editedDetails(input.edit) : {}),
        },
      }),
    ];
  }

  /** A decision written once (an allow's retry finds its execution): true when this call wrote it. */
  async function writeDecision(input: RecordDecisionInput): Promise<boolean> {
    const written = await calls.recordDecision(pool, ...decisionWrite(input));
    // Counted by the attempt that wrote it: a retry finds it written and counts nothing.
    const outcome = ENDING_DECISIONS[input.status];
    if (written && outcome) {
      deps.metrics.callFinished({ service: input.spec.template, action: input.spec.action, outcome, path: approvalPath(input.spec) });
      if (input.status === 'expired') deps.metrics.approvalExpired();
    }
    return written;
  }

  /** A decision's events (keyed by the approval and its status: sent again, delivered once). */
  async function announceDecision(input: { spec: CallSpec; approvalId: string }): Promise<void> {
    await emit(input.spec, 'approval.resolved', await approvalEventData(input.approvalId));
  }

  const steps = createExecutionStepActivities({ decisions: deps.exchange.decisions, decisionWrite, announceDecision, pool, logger, keyring: deps.keyring, registry: deps.registry, executor: deps.executor, emit, approvalEventData, metrics: deps.metrics, budgetClock: deps.budgetClock });

  const acts = {
    async raiseApproval(input: { spec: CallSpec; gapIdentityId: string; firstResolverId: string; tiers: Tier[]; approvalId: string; gapReasons?: string[] }) {
      const { spec } = input;
      const expiresAt = new Date(Date.now() + spec.clocks.approvalTtlMs);
      const dedupeKey = `${spec.service}:${spec.action}:${spec.callDigest}`;
      const inserted = await calls.insertApproval(pool, {
        id: input.approvalId,
        callId: spec.callId,
        orgId: spec.orgId,
        requesterId: spec.requesterId,
        userId: spec.userId,
        gapIdentityId: input.gapIdentityId,
        resolverId: input.firstResolverId,
        risk: spec.approvalRisk,
        permissionKeys: spec.permissionKeys,
        derivedKeys: derivedKeys(spec.permissionKeys),
        suggestedTiers: input.tiers,
        actionDescription: spec.description,
        autoCallOnApprove: spec.autoCallOnApprove,
        dedupeKey,
        expiresAt,
        gapReasons: input.gapReasons ?? [],
      });
      const row = inserted ?? (await calls.findPendingDuplicate(pool, spec.requesterId, dedupeKey)) ?? (await calls.getApproval(pool, input.approvalId));
      if (!row) throw new Error('approval neither inserted nor found');
      if (row.id !== input.approvalId) {
        await calls.finishCall(pool, spec.callId, 'deduplicated', null, { approvalId: row.id });
        await audit(spec, { event: 'approval.deduplicated', actorId: spec.requesterId, approvalId: row.id });
        return { approvalId: row.id, expiresAt: row.expires_at.toISOString(), resolverId: row.resolver_id, deduplicatedInto: row.id, joinedCallId: row.call_id };
      }
      if (inserted) {
        await calls.setCallStatus(pool, spec.callId, 'pending_approval', row.id);
        deps.metrics.approvalRaised();
        await audit(spec, { event: 'approval.raised', actorId: spec.requesterId, approvalId: row.id, decision: 'pending', details: { resolver_id: row.resolver_id, gap_identity_id: row.gap_identity_id, ...(row.gap_reasons.length ? { gap_reasons: row.gap_reasons } : {}), ...disclosedDetails(spec) } });
        await emit(spec, 'approval.raised', await approvalEventData(row.id));
        // Over the per-agent cap: the oldest pending approvals are superseded by their workflows.
        for (const old of await calls.pendingBeyondCap(pool, spec.requesterId, spec.maxPendingPerAgent)) {
          try {
            const workflowId = callWorkflowId(old.call_id);
            await deps.temporal.workflow.getHandle(workflowId).signal(supersedeSignal, await deps.signer.sign('supersede', workflowId, { byApprovalId: row.id }));
          } catch (err) {
            logger.warn({ approval_id: old.id, err: (err as Error).message }, 'could not supersede an old approval');
          }
        }
      }
      // Also on a retry that found its own row: the notices' workflow id makes this once per approval.
      const reminderMarks = await announce(spec.orgId, row.id, 'raised');
      return { approvalId: row.id, expiresAt: row.expires_at.toISOString(), resolverId: row.resolver_id, deduplicatedInto: null, reminderMarks };
    },

    /** The approval's final state, sent to every call that joined it (a closed one is skipped). */
    async shareOutcome(input: { approvalId: string; callId: string; record: ApprovalRecord }) {
      for (const id of await calls.callsJoinedTo(pool, input.approvalId, input.callId)) {
        try {
          const workflowId = callWorkflowId(id);
          await deps.temporal.workflow.getHandle(workflowId).signal(sharedOutcomeSignal, await deps.signer.sign('shared-outcome', workflowId, { record: input.record }));
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
        }
      }
    },

    /**
     * The final state of the call a deduplicated call joined, read from its closed workflow (the
     * fallback when its signal never came); null while it still runs or if it ended without one.
     */
    async joinedOutcome(input: { callId: string }): Promise<ApprovalRecord | null> {
      const handle = deps.temporal.workflow.getHandle(callWorkflowId(input.callId));
      const described = await handle.describe();
      if (described.status.name !== 'COMPLETED') return null;
      const result = (await handle.result()) as CallWorkflowResult;
      return isApprovalRecord(result) ? result : null;
    },

    async recordDecision(input: RecordDecisionInput) {
      await writeDecision(input);
      await announceDecision(input);
    },

    async recordBubble(input: { spec: CallSpec; approvalId: string; fromId: string; toId: string; actorId: string | null; automatic: boolean }) {
      await calls.updateApproval(pool, input.approvalId, { status: 'bubbled', resolverId: input.toId, bubbled: true });
      await audit(input.spec, {
        event: 'approval.bubbled',
        actorId: input.actorId,
        approvalId: input.approvalId,
        decision: 'bubble',
        details: { from: input.fromId, to: input.toId, automatic: input.automatic },
      });
      // The dashboard's inboxes change hands.
      await publishBubble(eventDeps, input.spec, input.approvalId, input.toId, await approvalEventData(input.approvalId));
      // The new resolver is told where they are (the routing rules are evaluated again).
      await announce(input.spec.orgId, input.approvalId, 'bubbled', `bubbled-${input.toId}`);
    },

    /**
     * The org's auto-bubble past the user: to the user's approver, then
     * to the org's admins (server/teams/routing.ts; audit row and events included). Answers where
     * the approval now sits and whether anyone is above it.
     */
    async routeOnward(input: { approvalId: string; expected: 'chain' | 'approver' | 'admins' }) {
      return routing.autoStep(input.approvalId, input.expected);
    },

    async recordExecution(input: { spec: CallSpec; approvalId: string; executionId: string; status: 'expired' | 'cancelled'; triggeredBy: string | null }) {
      await calls.updateExecution(pool, input.executionId, { status: input.status, finished: true });
      await calls.finishCall(pool, input.spec.callId, `execution_${input.status}`, null);
      await audit(input.spec, { event: `execution.${input.status}`, approvalId: input.approvalId, executionId: input.executionId, decision: input.status });
      const outcome = input.status === 'expired' ? 'execution_expired' : 'cancelled';
      deps.metrics.callFinished({ service: input.spec.template, action: input.spec.action, outcome, path: approvalPath(input.spec) });
    },

    /** allow_remember: rules on the closest non-inheriting ancestor, and on any other identity below the resolver still uncovered. */
    async plantRules(input: { spec: CallSpec; approvalId: string; patterns: string[]; ttlMs: number; resolverId: string; condition?: string }) {
      const { spec } = input;
      const chain = await identities.getChain(pool, spec.requesterId);
      const chainIds = chain.map(identities.toChainIdentity);
      const rules = await identities.rulesForChain(pool, chain.map((c) => c.id), spec.permissionKeys);
      const targets = new Set([closestNonInheritingAncestor(chainIds, spec.requesterId).id]);
      const resolverOnChain = chain.some((c) => c.id === input.resolverId) ? input.resolverId : spec.userId;
      for (const t of rememberTargets({ chain: chainIds, rules, keys: spec.permissionKeys, now: new Date() }, resolverOnChain)) targets.add(t.id);
      const expiresAt = new Date(Date.now() + input.ttlMs);
      await pool.transaction(async (tx) => {
        for (const identityId of targets) {
          if (chain.find((c) => c.id === identityId)?.kind === 'user') continue;
          for (const pattern of input.patterns) {
            const rule = await identities.createRule(tx, {
              orgId: spec.orgId,
              identityId,
              effect: 'allow',
              pattern,
              expiresAt,
              source: 'approval',
              approvalId: input.approvalId,
              createdBy: input.resolverId,
              condition: input.condition ?? null,
            });
            await appendAudit(tx, {
              orgId: spec.orgId,
              event: 'rule.planted',
              userId: spec.userId,
              actorId: input.resolverId,
              identityChain: chain.map((c) => c.id),
              service: spec.service,
              action: spec.action,
              permissionKeys: [pattern],
              approvalId: input.approvalId,
              callId: spec.callId,
              details: { rule_id: rule.id, identity_id: identityId, expires_at: expiresAt.toISOString(), ...(input.condition ? { condition: input.condition } : {}) },
            });
          }
        }
      });
    },
    ...steps,


    /**
     * The covered fast path: check and, when covered, execute — one local activity, one round. The
     * check's read also marks the call "about to send" (one statement): a re-run of this step after
     * a crash finds the mark, or the final state its first run recorded, and never sends twice.
     */
    async checkThenExecute(input: { spec: CallSpec }): Promise<{ check: CheckResult; executed: ExecuteCallResult | null }> {
      const first = await checkThenExecuteOnce(input.spec);
      // The API waiting in this process (an eager start) answers now: the final state is committed.
      deps.exchange.firstAnswers.deliver(input.spec.callId, firstAnswerOf(first.check, first.executed));
      // The workflow (and so its history) gets the upstream's answer sealed.
      const executed = first.executed && { ...first.executed, outcome: sealOutcome(deps.keyring, input.spec.callId, first.executed.outcome) };
      return { check: first.check, executed };
    },
  };
  return acts;
}
