// Typed errors and the one REST error envelope (DESIGN.md §5):
// {"error": {"code", "message", "details"?}, "request_id"}.
import type { ZodError } from 'zod';

export const ERROR_STATUS = {
  invalid_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_in_your_chain: 403,
  not_found: 404,
  conflict: 409,
  /** The same Idempotency-Key came with a different request. */
  idempotency_key_reused: 409,
  payload_too_large: 413,
  headers_too_large: 431,
  invalid_service_definition: 422,
  validation_failed: 422,
  /** An approver's edit asks for more than the call did (issue 31): `details.key` names the key. */
  edit_widens_request: 422,
  rate_limited: 429,
  internal: 500,
  upstream_error: 502,
  upstream_unreachable: 502,
  upstream_timeout: 504,
  unavailable: 503,
  /** An approved call may have reached the upstream before a crash and is not idempotent: not re-sent. */
  outcome_unknown: 502,
  /** The workflow behind an approval no longer exists: the approval was closed. */
  workflow_gone: 410,
  needs_authentication: 401,
  reauth_required: 401,
  missing_scopes: 403,
  credential_missing: 424,
  secret_not_allowed_for_host: 403,
  /** An invitation link that was used, revoked or has expired (details.reason says which). */
  invitation_unusable: 410,
  /** The change would leave the org without an active admin. */
  last_admin: 409,
  /** A connected MCP server's tool changed since an admin published it (details.changed: the diff). */
  tool_changed: 409,
  /** Sign-in with the right password to an account an admin deactivated (never said before the password is checked). */
  account_deactivated: 403,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  readonly status: number;
  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
    this.status = ERROR_STATUS[code];
  }
}

export const invalidRequest = (message: string, details?: Record<string, unknown>) =>
  new AppError('invalid_request', message, details);
/**
 * An action's parameters refused: the message names each refused parameter (a person reading one
 * line, e.g. the CLI's, learns which), `details.problems` lists them for programs.
 */
export const invalidParams = (problems: readonly { field: string; message: string }[]) =>
  invalidRequest(`the action parameters are not valid: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, { problems });
export const notFound = (what: string) => new AppError('not_found', `${what} not found`);
export const conflict = (message: string, details?: Record<string, unknown>) =>
  new AppError('conflict', message, details);
export const forbidden = (message: string) => new AppError('forbidden', message);
export const unauthenticated = (message = 'a valid bearer token is required') =>
  new AppError('unauthenticated', message);

export interface ErrorEnvelope {
  error: { code: string; message: string; details?: Record<string, unknown> };
  request_id?: string;
}

/** A typed error as the body every answer carries (REST, MCP, a call's recorded outcome). */
export const appErrorBody = (err: AppError): ErrorEnvelope['error'] => ({ code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) });

/** Any error as the body a caller sees: a typed one as it is, anything else as a generic `internal`. */
export const errorBody = (err: unknown, internal = 'internal error while executing the call'): ErrorEnvelope['error'] =>
  err instanceof AppError ? appErrorBody(err) : { code: 'internal', message: internal };

export function toEnvelope(err: AppError, requestId?: string): ErrorEnvelope {
  return { error: appErrorBody(err), ...(requestId ? { request_id: requestId } : {}) };
}

type Issue = ZodError['issues'][number];

/**
 * A union none of whose shapes matched says only "Invalid input": name instead what is wrong with
 * the shape the input came closest to (the one with the fewest issues), e.g. `action: required`
 * for a call that names a service but no action.
 */
function closestIssues(issues: readonly Issue[]): Issue[] {
  return issues.flatMap((i) => {
    if (i.code !== 'invalid_union' || !('errors' in i) || !i.errors.length) return [i];
    const closest = [...i.errors].sort((a, b) => a.length - b.length)[0]!;
    return closestIssues(closest.map((c) => ({ ...c, path: [...i.path, ...c.path] }) as Issue));
  });
}

/**
 * Zod's issues as `invalid_request`, listed in `details.issues`; with `about`, the message names
 * them too (`<about>: <path>: <message>; …`), for clients that show only the message.
 */
export function zodToAppError(err: ZodError, about?: string): AppError {
  const issues = closestIssues(err.issues).map((i) => ({ path: i.path.join('.'), message: i.message, code: i.code }));
  const message = about ? `${about}: ${issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')}` : 'the request is not valid';
  return new AppError('invalid_request', message, { issues });
}
