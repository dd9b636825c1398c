// Once a call's row exists, every error its caller gets names the call (`details.call_id`), so an
// agent told "unavailable" can look the call up (GET /v1/calls/{id}) or retry it with its key
// instead of guessing whether it ran. Raw dependency errors become the same typed 503 the error
// handler would give, with the call id added.
import { isDatabaseUnavailable } from '../db/errors.ts';
import { AppError } from '../errors.ts';
import { isTemporalUnavailable } from '../temporal/errors.ts';
import { unavailable } from '../temporal/health.ts';

export function namingCall(err: unknown, callId: string): unknown {
  if (err instanceof AppError) return err.details?.call_id ? err : new AppError(err.code, err.message, { ...err.details, call_id: callId });
  if (isDatabaseUnavailable(err)) return unavailable('database', 'the database is unreachable; the call may still complete: look it up or retry shortly', { call_id: callId });
  if (isTemporalUnavailable(err)) return unavailable('temporal', 'Temporal is unreachable; the call may still complete: look it up or retry shortly', { call_id: callId });
  return err;
}
