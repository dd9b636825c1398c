// A call's outcome as its transports answer it: `called`, `pending_approval` and `denied` are
// answers; an `error` outcome becomes the typed error (REST's envelope, MCP's isError result).
import type { CallOutcome } from '../../workflows/definitions.ts';
import { AppError, ERROR_STATUS, type ErrorCode } from '../errors.ts';

export type CallAnswer = Exclude<CallOutcome, { status: 'error' }> & { call_id?: string };

/**
 * The outcome, or its error thrown as AppError (a code the API does not know becomes `internal`);
 * the call's id rides along in the answer, or in the error's details.
 */
export function answerOf(outcome: CallOutcome & { call_id?: string }): CallAnswer {
  if (outcome.status !== 'error') return outcome;
  const code = (outcome.error.code in ERROR_STATUS ? outcome.error.code : 'internal') as ErrorCode;
  const details = outcome.call_id ? { ...outcome.error.details, call_id: outcome.call_id } : outcome.error.details;
  throw new AppError(code, outcome.error.message, details);
}
