// A call's outcome as its transports answer it: `called`, `pending_approval` and `denied` are
// answers; an `error` outcome becomes the typed error (REST's envelope, MCP's isError result).
import type { CallOutcome } from '../../workflows/definitions.ts';
import { AppError, ERROR_STATUS, type ErrorCode } from '../errors.ts';

export type CallAnswer = Exclude<CallOutcome, { status: 'error' }>;

/** The outcome, or its error thrown as AppError (a code the API does not know becomes `internal`). */
export function answerOf(outcome: CallOutcome): CallAnswer {
  if (outcome.status !== 'error') return outcome;
  const code = (outcome.error.code in ERROR_STATUS ? outcome.error.code : 'internal') as ErrorCode;
  throw new AppError(code, outcome.error.message, outcome.error.details);
}
