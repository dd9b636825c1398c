// The covered fast path's execution (no approval, no execution row): the request as the API
// prepared it (hand-off in the same process, else the encrypted call row), the upstream call, and
// the call row's final status written together with its audit row in one statement.
import type { GatewayMetrics } from '../server/metrics/metrics.ts';
import type { DatabasePool } from 'slonik';
import { callAuditEntry, type AuditEntry, type CallEvent } from '../server/audit/entry.ts';
import type { LocalExchange, PreparedCall } from '../server/temporal/local-exchange.ts';
import { finalAnswer } from '../server/calls/call-answers.ts';
import * as calls from '../server/calls/store.ts';
import { AppError, appErrorBody } from '../server/errors.ts';
import type { ExecutorDeps } from '../server/execution/execute.ts';
import { planSend, sendOnce } from './send-once.ts';
import { inSpan } from '../core/telemetry/spans.ts';
import { templateSecretOf, withPrefetchedSecret, type SecretRead } from './secret-prefetch.ts';
import { OUTCOME_UNKNOWN } from './outcome-unknown.ts';
import { actionOf, loadStoredCall } from '../server/calls/stored-call.ts';
import type { Logger } from '../server/logger.ts';
import type { RegistryService } from '../server/registry/service.ts';
import type { VaultKeyring } from '../server/vault/keyring.ts';
import type { CallOutcome, CallSpec, ErrorBody } from '../workflows/definitions.ts';

export interface CoveredCallDeps {
  pool: DatabasePool;
  logger: Logger;
  keyring: VaultKeyring;
  registry: RegistryService;
  executor: ExecutorDeps;
  metrics: CallMetrics;
}

/** What the activities that write a call's final state count. */
export type CallMetrics = Pick<GatewayMetrics, 'callFinished' | 'outcomeUnknown' | 'upstreamSeconds' | 'outboundError'>;

export interface CoveredResult {
  outcome: CallOutcome;
  httpStatusCode: number | null;
  executionStatus: null;
}

export type { CallEvent };

/** The row the call's activities write, from its spec. */
export const entryFor = (spec: CallSpec, e: CallEvent): AuditEntry =>
  callAuditEntry(
    {
      orgId: spec.orgId,
      userId: spec.userId,
      identityChain: spec.chain.map((c) => c.id),
      service: spec.service,
      action: spec.action,
      permissionKeys: spec.permissionKeys,
      callId: spec.callId,
      requestId: spec.requestId,
    },
    e,
  );

/** What the covered path's claim found: an earlier attempt marked the call (it may have sent). */
export interface SendClaim {
  previouslyMarked: boolean;
  /** The rules that covered the call, for its audit row (issue 44: which rule, with its condition and budget). */
  coveredBy?: CoveringRule[];
}

export interface CoveringRule {
  rule_id: string;
  identity_id: string;
  pattern: string;
  condition?: string;
  budget?: unknown;
}

/** A rule as the audit row of the call it covered names it. */
export function coveringRule(r: { id: string; identityId: string; pattern: string; condition?: string | null; budget?: unknown }): CoveringRule {
  return { rule_id: r.id, identity_id: r.identityId, pattern: r.pattern, ...(r.condition ? { condition: r.condition } : {}), ...(r.budget ? { budget: r.budget } : {}) };
}

/**
 * The request the API prepared in this process, taken before the check, and the template secret
 * its credential will read: that secret's envelope is read by the check's own statement (issue 28),
 * not by one more. Opened (decrypted) only if the call is sent.
 */
export interface CoveredPrefetch {
  handedOff: PreparedCall;
  secret: SecretRead | null;
}

/** Takes the hand-off (if this process prepared the call) and names the secret its send will read. */
export function prefetchCovered(exchange: LocalExchange, spec: CallSpec): CoveredPrefetch | null {
  const handedOff = exchange.preparedCalls.take(spec.callId);
  if (!handedOff) return null;
  return { handedOff, secret: templateSecretOf(spec.orgId, handedOff.instance, handedOff.stored, spec.action) };
}

export function createCoveredCall(deps: CoveredCallDeps) {
  const { pool } = deps;

  /**
   * The request, planned with its credential (nothing sent): as the API prepared it in this
   * process, else from the call row. `executor` serves the envelope the check read, once: a retry
   * after a PostgreSQL blip reads the secret afresh.
   */
  async function plan(spec: CallSpec, pre: CoveredPrefetch | null, executor: ExecutorDeps) {
    const stored = pre
      ? { ...pre.handedOff, request: pre.handedOff.stored, action: actionOf(pre.handedOff.instance, pre.handedOff.stored, spec.action) }
      : await loadStoredCall(deps, spec);
    return { planned: await planSend(executor, spec, stored, spec.verbose), redacted: stored.redacted };
  }

  /** The final state, retried briefly until it lands: a request that left must not be re-run for a PostgreSQL blip. */
  const finish = (spec: CallSpec, status: 'called' | 'failed', f: calls.CallFinish, e: CallEvent) =>
    inSpan('audit', { 'gateway.call_id': spec.callId, 'gateway.audit_event': e.event }, () =>
      untilLanded(() => calls.finishCallWithAudit(pool, spec.callId, status, f, entryFor(spec, e))),
    );

  async function failed(spec: CallSpec, error: ErrorBody): Promise<CoveredResult> {
    const decision = error.code === OUTCOME_UNKNOWN.code ? 'outcome_unknown' : 'failed';
    await finish(spec, 'failed', { httpStatusCode: null, error }, { event: 'call.failed', approvalId: null, executionId: null, decision, details: { error } });
    deps.metrics.callFinished({ service: spec.template, action: spec.action, outcome: decision, path: 'covered' });
    if (decision === 'outcome_unknown') deps.metrics.outcomeUnknown('covered');
    return { outcome: { status: 'error', error }, httpStatusCode: null, executionStatus: null };
  }

  /**
   * Sends the covered call once. `claim.previouslyMarked`: an earlier run of this step got past the
   * check (and its mark) without recording a final state, so the request may have left: only an
   * idempotent one (GET/HEAD, or a service with an idempotency key header, keyed by the call id) is
   * sent again; any other ends `failed` with `outcome_unknown`.
   */
  return async function executeCovered(spec: CallSpec, claim: SendClaim, prefetch: CoveredPrefetch | null = null, envelope: unknown = null): Promise<CoveredResult> {
    let planned;
    let redacted: unknown;
    const executor = prefetch?.secret ? withPrefetchedSecret(deps.executor, spec.orgId, prefetch.secret.name, envelope) : deps.executor;
    try {
      // Nothing has left yet: a dependency that is briefly away (PostgreSQL restarting under the
      // vault or the registry) is waited for here rather than turned into a final failure.
      // A typed error (a missing credential, a disabled action) is final at once.
      ({ planned, redacted } = await untilLanded(() => plan(spec, prefetch, executor), 30_000, (err) => !(err instanceof AppError)));
    } catch (err) {
      // Nothing left: credentials, instance or parameters failed before the request was built.
      return failed(spec, err instanceof AppError ? appErrorBody(err) : notSent(deps, spec, err));
    }
    // Nothing left either: a typed error (a missing credential, a disabled action) while planning.
    if ('kind' in planned) return failed(spec, planned.error);
    const out = await sendOnce(planned, { mayHaveLeft: claim.previouslyMarked, key: spec.callId, logger: deps.logger, ids: { call_id: spec.callId }, metrics: { path: 'covered', count: deps.metrics } });
    if (out.kind !== 'sent') return failed(spec, out.kind === 'error' ? out.error : OUTCOME_UNKNOWN);
    await finish(spec, 'called', { httpStatusCode: out.httpStatusCode, result: out.result }, {
      event: 'call.called',
      actorId: spec.requesterId,
      approvalId: null,
      executionId: null,
      decision: 'covered',
      httpStatusCode: out.httpStatusCode,
      details: {
        duration_ms: out.result.duration_ms,
        request: redacted,
        ...(spec.disclosed?.length ? { disclosed: spec.disclosed } : {}),
        ...(claim.coveredBy?.length ? { covered_by: claim.coveredBy } : {}),
      },
    });
    deps.metrics.callFinished({ service: spec.template, action: spec.action, outcome: 'called', path: 'covered' });
    return { outcome: { status: 'called', result: out.result, action_description: spec.description }, httpStatusCode: out.httpStatusCode, executionStatus: null };
  };
}

/** A dependency stayed away while planning: nothing was sent, and the caller is told so. */
function notSent(deps: CoveredCallDeps, spec: CallSpec, err: unknown): ErrorBody {
  deps.logger.error({ err, call_id: spec.callId }, 'could not prepare the covered call');
  return { code: 'unavailable', message: 'a dependency of the gateway stayed unreachable while the call was being prepared: nothing was sent; call again with a new Idempotency-Key' };
}

/**
 * A covered call whose row is already final: a re-run of its workflow task after the first run
 * committed. The recorded outcome is the answer; nothing is sent. Null: not final (run the step).
 */
export function recordedCoveredOutcome(spec: CallSpec, claim: Pick<calls.CallClaim, 'status' | 'result' | 'error' | 'http_status_code'>): CoveredResult | null {
  // The same reading of a final row as a keyed retry's answer (call-answers.ts); a denial is judged again.
  const outcome = finalAnswer({ ...claim, description: spec.description });
  if (!outcome || outcome.status === 'denied') return null;
  return { outcome, httpStatusCode: outcome.status === 'called' ? claim.http_status_code : null, executionStatus: null };
}

/**
 * Writes what must land after a request left: retried (briefly) until it does, so a PostgreSQL
 * restart does not turn a sent call into a re-run. Bounded: past it, the error surfaces.
 */
export async function untilLanded<T>(write: () => Promise<T>, budgetMs = 30_000, retryable: (err: unknown) => boolean = () => true): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (let delay = 200; ; delay = Math.min(delay * 2, 2_000)) {
    try {
      return await write();
    } catch (err) {
      if (!retryable(err) || Date.now() + delay > deadline) throw err;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
