// The call service: what REST and MCP ask of calls — a service action, a raw HTTP call, a resume by
// approval id, a call as it stands — composed of the call's preparation (prepare.ts), its start
// (start.ts) and its resume (replay.ts), given as parts. Its stores, the approvals it reads and the
// workflows it cancels are arguments too (wiring.ts binds them to PostgreSQL and Temporal), so its
// own logic — who may read or resume a call, what a resume answers, best-effort cancels — is
// unit-tested with fakes (test/unit/calls/call-service.test.ts). Approval edits and descriptions
// live beside the approvals (server/approvals/edits.ts, descriptions.ts) and use the same preparer.
import type { CallPath, GatewayMetrics } from '../metrics/metrics.ts';
import type { CallOutcome, Risk } from '../../workflows/definitions.ts';
import { isAdmin, type Principal } from '../auth/principal.ts';
import type { ReadAlong } from '../auth/read-along.ts';
import { readVisibleApproval } from '../approvals/read.ts';
import type { ApprovalViewReader } from '../approvals/store.ts';
import type { CallWorkflows } from '../approvals/workflow-port.ts';
import { AppError, forbidden, notFound } from '../errors.ts';
import type { ChainReader } from '../identities/readers.ts';
import type { Logger } from '../logger.ts';
import { workflowNotRunning } from '../temporal/update-errors.ts';
import { approvalAnswer, presentCall } from './call-answers.ts';
import { namingCall } from './naming-call.ts';
import type { ActionCallInput, CallPreparer, ConnectionRef, Prepared, RawHttpInput } from './prepare.ts';
import type { IdentifiedOutcome } from './start.ts';
import type { ApprovalRow, CallRow, ExecutionRow } from './store.ts';
import { nameCall } from '../telemetry/log-context.ts';

export type { ActionCallInput, ConnectionRef, IdentifiedOutcome, RawHttpInput };

/** What the call service reads of stored calls (bound to the pool in wiring.ts). */
export interface CallReads {
  /** The row as it stands, closed first when its workflow never started (never-started.ts). */
  settleIfNeverStarted(call: CallRow): Promise<CallRow>;
  /**
   * The call with its approval and execution as they stood at one moment: a call's status and
   * its execution's are written together, and reads one after the other could show one and not
   * the other (`allowed` beside an `executed` execution).
   */
  callAsOfNow(callId: string): Promise<{ call: CallRow; approval: ApprovalRow | null; execution: ExecutionRow | null } | null>;
  /** The open (pending or bubbled) approvals these identities raised. */
  openApprovalsOf(requesterIds: readonly string[]): Promise<readonly Pick<ApprovalRow, 'id' | 'call_id' | 'requester_id'>[]>;
  /** Takes a token from the identity's call bucket, or throws `rate_limited` (a resume writes no row). */
  admit(identityId: string): Promise<void>;
}

export interface CallServiceParts {
  reads: CallReads;
  approvals: ApprovalViewReader;
  workflows: Pick<CallWorkflows, 'cancel'>;
  chains: ChainReader;
  preparer: CallPreparer;
  /** Starts a prepared call (start.ts). */
  start(p: Principal, prepared: Prepared, requestId: string | null, opts: CallOptions): Promise<IdentifiedOutcome>;
  /** Resumes an allowed call (replay.ts). */
  replay(p: Principal, approvalId: string, callId: string): Promise<CallOutcome>;
  /** Settles an approval whose workflow is gone, and throws the error that says so. */
  settleWithoutWorkflow(approvalId: string): Promise<never>;
  logger: Pick<Logger, 'warn'>;
  /** Rate-limit refusals and the gateway's overhead on synchronous answers. */
  metrics?: Pick<GatewayMetrics, 'rateLimited' | 'overheadSeconds'> | undefined;
}

/** How a call is asked for: `along` is what the request's authentication read (read-along.ts). */
export interface CallOptions {
  idempotencyKey?: string | undefined;
  along?: ReadAlong | undefined;
}

export function createCallService(deps: CallServiceParts) {
  const { reads, preparer } = deps;

  /**
   * Runs one call's work and counts what metrics want of it: a `rate_limited` refusal, and for an
   * answer with the upstream's result, the time spent in the gateway (the whole less the upstream's).
   */
  async function measured<T>(path: CallPath, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      const out = await work();
      const sent = out as { status?: unknown; result?: { duration_ms?: unknown } } | undefined;
      if (sent?.status === 'called' && typeof sent.result?.duration_ms === 'number') {
        deps.metrics?.overheadSeconds(path, (performance.now() - started - sent.result.duration_ms) / 1000);
      }
      return out;
    } catch (err) {
      if (err instanceof AppError && err.code === 'rate_limited') deps.metrics?.rateLimited();
      throw err;
    }
  }

  return {
    /** A service action; `onlyRisk` refuses any other risk (gateway_read runs read actions only). */
    async callAction(p: Principal, input: ActionCallInput, requestId: string | null, opts: CallOptions & { onlyRisk?: Risk | undefined } = {}): Promise<IdentifiedOutcome> {
      return measured('covered', async () => deps.start(p, await preparer.prepareAction(p, input, opts), requestId, opts));
    },

    /** Raw HTTP (`connectionId`: through a person's OAuth connection). */
    async callHttp(p: Principal, input: RawHttpInput, requestId: string | null, opts: CallOptions & { connection?: ConnectionRef | undefined } = {}): Promise<IdentifiedOutcome> {
      return measured('covered', async () => deps.start(p, await preparer.prepareHttp(p, input, opts.connection, opts.along), requestId, opts));
    },

    /** The requester resumes its approved call (or reads the stored result once executed). */
    async resume(p: Principal, approvalId: string): Promise<IdentifiedOutcome> {
      await measured('resumed', () => reads.admit(p.identityId));
      const { row: a, authority } = await readVisibleApproval(deps.approvals, p, approvalId);
      if (!authority.replay) throw forbidden('only the identity that made the call can resume it');
      const call_id = a.call_id;
      nameCall(call_id);
      try {
        const known = approvalAnswer(a, a.execution, a.call?.description ?? a.action_description);
        if (known) return { ...known, call_id };
        if (a.status !== 'allowed') throw new AppError('conflict', `the approval is ${a.status}`, { status: a.status });
        return { ...(await measured('resumed', () => deps.replay(p, a.id, a.call_id))), call_id };
      } catch (err) {
        throw namingCall(err, call_id);
      }
    },

    /**
     * A call as it stands (`GET /v1/calls/{id}`): for the identity that made it, the identities
     * above it on its chain, and the org's admins; `not_found` for anyone else.
     */
    async get(p: Principal, callId: string) {
      let now = await reads.callAsOfNow(callId);
      if (!now || now.call.org_id !== p.orgId) throw notFound('call');
      if (!isAdmin(p)) {
        const chain = await deps.chains.getChain(now.call.requester_id);
        if (!chain.some((c) => c.id === p.identityId)) throw notFound('call');
      }
      // Read again only when this read closed a call whose workflow never started.
      if ((await reads.settleIfNeverStarted(now.call)) !== now.call) now = (await reads.callAsOfNow(callId)) ?? now;
      return presentCall(now.call, now.approval, now.execution);
    },

    /**
     * Cancels the open approvals raised by these identities (they were revoked or archived), each
     * through its workflow's cancel update as its requester would: the same record, audit row,
     * events and webhooks. Best effort per approval: one that cannot be cancelled now is logged.
     */
    async cancelPendingOf(requesterIds: string[], reason: string): Promise<void> {
      for (const a of await reads.openApprovalsOf(requesterIds)) {
        try {
          await deps.workflows.cancel(a.call_id, a.requester_id, reason);
        } catch (err) {
          if (workflowNotRunning(err)) await deps.settleWithoutWorkflow(a.id).catch(() => undefined);
          else deps.logger.warn({ approval_id: a.id, err: (err as Error).message }, 'could not cancel the approval of a revoked identity');
        }
      }
    },

    settleWithoutWorkflow: deps.settleWithoutWorkflow,
    /** The preparation approval edits and descriptions share (server/approvals/edits.ts). */
    preparer,
  };
}

export type CallService = ReturnType<typeof createCallService>;
