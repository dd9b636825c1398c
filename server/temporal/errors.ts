// Temporal errors that mean "the server cannot be reached", as opposed to a domain answer.
import { isGrpcServiceError } from '@temporalio/client';

const UNAVAILABLE = 14;
const DEADLINE_EXCEEDED = 4;

export function isTemporalUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (isGrpcServiceError(e) && (e.code === UNAVAILABLE || e.code === DEADLINE_EXCEEDED)) return true;
    if (e instanceof Error && e.name === 'ServiceError' && /UNAVAILABLE|DEADLINE_EXCEEDED|failed to connect/i.test(e.message)) return true;
  }
  return false;
}
