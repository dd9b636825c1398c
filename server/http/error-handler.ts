// The one error middleware: typed errors become the envelope with their status; body-parser
// failures become invalid_request / payload_too_large; anything else is a logged 500 that never
// echoes internals to the caller.
import type { NextFunction, Request, Response } from 'express';
import { ZodError } from 'zod';
import { isDatabaseUnavailable, isUniqueViolation } from '../db/errors.ts';
import { isTemporalUnavailable } from '../temporal/errors.ts';
import { unavailable } from '../temporal/health.ts';
import { AppError, toEnvelope, zodToAppError } from '../errors.ts';


/**
 * Any error as the typed error a caller sees; undefined for one nobody expected (the caller logs
 * it and answers `internal`). Also used per item where one request decides many (approvals/resolve).
 */
export function typedError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  if (err instanceof ZodError) return zodToAppError(err);
  if (isUniqueViolation(err)) return new AppError('conflict', 'a resource with the same unique name already exists');
  if (isDatabaseUnavailable(err)) return unavailable('database', 'the database is unreachable; retry shortly');
  if (isTemporalUnavailable(err)) return unavailable('temporal', 'Temporal is unreachable; retry shortly');
  // Express could not percent-decode a path parameter.
  if (err instanceof URIError) return new AppError('invalid_request', 'the path is not valid percent-encoding');
  if (isBodyParserError(err)) {
    return err.type === 'entity.too.large'
      ? new AppError('payload_too_large', 'the request body is larger than the limit', { limit_bytes: err.limit })
      : new AppError('invalid_request', err.type === 'entity.parse.failed' ? 'the request body is not valid JSON' : err.message);
  }
  return undefined;
}

export function errorHandler() {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    let appErr = typedError(err);
    if (!appErr) {
      req.log?.error({ err }, 'unhandled error');
      appErr = new AppError('internal', 'internal error');
    }
    if (res.headersSent) return;
    const retryAfter = appErr.details?.retry_after_seconds;
    if ((appErr.code === 'rate_limited' || appErr.code === 'unavailable') && typeof retryAfter === 'number') res.setHeader('Retry-After', String(retryAfter));
    res.status(appErr.status).json(toEnvelope(appErr, req.id));
  };
}

interface BodyParserError {
  type: string;
  message: string;
  limit?: number;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  return typeof err === 'object' && err !== null && typeof (err as { type?: unknown }).type === 'string' && 'status' in err;
}

export function notFoundHandler() {
  return (req: Request, res: Response) => {
    res.status(404).json(toEnvelope(new AppError('not_found', `no route for ${req.method} ${req.path}`), req.id));
  };
}
