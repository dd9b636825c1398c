// What keeps an approved call's execution (a regular activity, never retried blindly) safe when
// the worker running it dies: it heartbeats, so Temporal notices a dead worker within the
// heartbeat timeout instead of after the whole start-to-close timeout, and hands the next attempt
// to another worker; that attempt sends the request only when no earlier attempt got as far as
// sending it. So an execution is never sent twice and never left hanging.
import { Context } from '@temporalio/activity';

/** The running regular (not local) activity's context, or null (local activity, plain call). */
function regularActivity(): Context | null {
  try {
    const ctx = Context.current();
    return ctx.info.isLocal ? null : ctx;
  } catch {
    return null;
  }
}

/** True in a retry of a regular activity: an earlier attempt ran on a worker that stopped. */
export function isRetryAttempt(): boolean {
  return (regularActivity()?.info.attempt ?? 1) > 1;
}

/** Runs `fn`, heartbeating every `everyMs` while it runs (regular activities only). */
export async function withHeartbeats<T>(fn: () => Promise<T>, everyMs = 2_000): Promise<T> {
  const ctx = regularActivity();
  if (!ctx) return fn();
  ctx.heartbeat();
  const timer = setInterval(() => ctx.heartbeat(), everyMs);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

export const OUTCOME_UNKNOWN_MESSAGE =
  'the worker executing this approved call stopped while its upstream request may have been in flight; ' +
  'it is not sent again, so whether the upstream received it is unknown';
