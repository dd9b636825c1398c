// The one mapping from a failed call-workflow update to the API's typed error. The workflow says
// what went wrong in the failure's type and details (workflows/definitions.ts UPDATE_ERROR_CODES);
// nothing here reads an error message.
import { ActivityFailure, ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { UPDATE_ERROR_CODES, type UpdateErrorType } from '../../workflows/definitions.ts';
import { AppError } from '../errors.ts';

const isUpdateErrorType = (type: string | undefined | null): type is UpdateErrorType => !!type && Object.hasOwn(UPDATE_ERROR_CODES, type);

/** The update found no running workflow: it finished, or it is gone. */
export const workflowNotRunning = (err: unknown): err is WorkflowNotFoundError => err instanceof WorkflowNotFoundError;

/** A failed update as the caller's error; anything else (not an update's failure) unchanged. */
export function updateError(err: unknown): unknown {
  if (workflowNotRunning(err)) return new AppError('conflict', 'this approval is no longer open');
  if (!(err instanceof WorkflowUpdateFailedError)) return err;
  const cause = err.cause;
  if (cause instanceof ApplicationFailure && isUpdateErrorType(cause.type)) {
    const details = cause.details?.[0];
    return new AppError(UPDATE_ERROR_CODES[cause.type], cause.message, { reason: cause.type, ...(details && typeof details === 'object' ? details : {}) });
  }
  // The handler's own write failed (a dependency stayed down): nothing was decided.
  if (cause instanceof ActivityFailure) return new AppError('unavailable', 'the gateway could not record this now; nothing was decided: retry shortly');
  // Any other failure the update ended with (e.g. the workflow completed before it finished).
  return new AppError('conflict', cause?.message ?? err.message, { reason: cause instanceof ApplicationFailure ? cause.type : 'update_failed' });
}
