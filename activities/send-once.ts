// Plan, mark, send — one way for every path that sends a call: covered (the check-and-send
// activity), approved (the allow's own activity) and resumed (the execution's send step). Each path
// writes its durable send mark in its own statement before it sends; what it knows from that mark —
// an earlier attempt may have let the request leave — is judged here the same way for all: only an
// idempotent request is sent again, any other ends `outcome_unknown`. Recording the outcome stays
// with each path (a covered call's row, or an approval's execution).
import type { CallPath, GatewayMetrics } from '../server/metrics/metrics.ts';
import type { StoredCall } from '../server/calls/stored-call.ts';
import { AppError, appErrorBody, errorBody } from '../server/errors.ts';
import { planUpstream, type ExecutorDeps, type PlannedUpstream } from '../server/execution/execute.ts';
import type { Logger } from '../server/logger.ts';
import type { CallResult, CallSpec, ErrorBody } from '../workflows/definitions.ts';
import { SpanStatusCode } from '@opentelemetry/api';
import { inSpan } from '../core/telemetry/spans.ts';

/** What one attempt at the upstream came to. */
export type SentOnce =
  | { kind: 'sent'; result: CallResult; httpStatusCode: number }
  | { kind: 'error'; error: ErrorBody }
  /** An earlier attempt may have sent this non-idempotent request: it is not sent again. */
  | { kind: 'outcome_unknown' };

export type TypedError = Extract<SentOnce, { kind: 'error' }>;

/** A typed failure (AppError) as the call's error; anything else is rethrown. */
export function typedError(err: unknown): TypedError {
  if (err instanceof AppError) return { kind: 'error', error: appErrorBody(err) };
  throw err;
}

/**
 * The request planned with its credential (nothing sent), from the stored call. A typed failure —
 * the instance deleted meanwhile, a disabled action, a missing credential — is the call's error,
 * nothing sent; anything else is thrown (a dependency away: the caller may wait and plan again).
 */
/** `verbose`: the caller asked for the full result (a fresh call may; an approved one's is stored as usual). */
export async function planSend(executor: ExecutorDeps, spec: CallSpec, stored: StoredCall | TypedError, verbose: boolean): Promise<PlannedUpstream | TypedError> {
  if ('kind' in stored) return stored;
  const { request, instance, action } = stored;
  return planUpstream(executor, { orgId: spec.orgId, requesterId: spec.requesterId, userId: spec.userId, requestId: spec.requestId, instance, action, request, verbose }).catch(typedError);
}

export interface SendOnceOptions {
  /** The send mark says an earlier attempt got this far: the request may have left. */
  mayHaveLeft: boolean;
  /** The idempotency key an idempotent service gets (the call or execution id). */
  key: string;
  logger: Logger;
  /** What the log names. */
  ids: { call_id: string; execution_id?: string };
  /** Runs once the request has left (or could not): see PlannedUpstream.send. */
  left?: (() => void) | undefined;
  /** The upstream's time and the outbound errors, counted by the call's path. */
  metrics?: { path: CallPath; count: Pick<GatewayMetrics, 'upstreamSeconds' | 'outboundError'> } | undefined;
}

/** One attempt at the upstream per mark. An unexpected error is final: the request may have left, and is never resent blindly. */
export async function sendOnce(planned: PlannedUpstream, o: SendOnceOptions): Promise<SentOnce> {
  if (o.mayHaveLeft && !planned.idempotent) {
    o.logger.warn(o.ids, 'a non-idempotent request may already have left: not sending it again');
    return { kind: 'outcome_unknown' };
  }
  return inSpan('send', { ...planned.traced, 'gateway.call_id': o.ids.call_id }, async (span) => {
    try {
      const out = await planned.send(o.key, o.left);
      o.metrics?.count.upstreamSeconds(o.metrics.path, out.result.duration_ms / 1000);
      span.setAttribute('http.response.status_code', out.httpStatusCode);
      return { kind: 'sent', result: out.result, httpStatusCode: out.httpStatusCode };
    } catch (err) {
      // Typed errors are the upstream's or the policy's answer; anything else is a defect or an outage.
      if (!(err instanceof AppError)) o.logger.error({ err, ...o.ids }, 'execution failed unexpectedly');
      const error = errorBody(err);
      o.metrics?.count.outboundError(error.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.code });
      return { kind: 'error', error };
    }
  });
}
