import { BackendTerminatedError, BackendTerminatedUnexpectedlyError, ConnectionError, UniqueIntegrityConstraintViolationError } from 'slonik';

/** A unique constraint said no: the domain answers `conflict` (DESIGN.md §6). */
export function isUniqueViolation(err: unknown): boolean {
  return err instanceof UniqueIntegrityConstraintViolationError;
}

const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', '57P01', '57P02', '57P03', '08000', '08003', '08006']);

/** PostgreSQL is down or restarting: the request is answered 503 `unavailable`, not 500. */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof ConnectionError || e instanceof BackendTerminatedError || e instanceof BackendTerminatedUnexpectedlyError) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
    if (e instanceof Error && /Connection terminated|connection timeout|timeout exceeded when trying to connect/i.test(e.message)) return true;
  }
  return false;
}
