// Typed errors and the one REST error envelope (DESIGN.md §5):
// {"error": {"code", "message", "details"?}, "request_id"}.

export const ERROR_STATUS = {
  invalid_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_in_your_chain: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  headers_too_large: 431,
  invalid_service_definition: 422,
  validation_failed: 422,
  rate_limited: 429,
  internal: 500,
  upstream_error: 502,
  upstream_unreachable: 502,
  upstream_timeout: 504,
  unavailable: 503,
  needs_authentication: 401,
  reauth_required: 401,
  missing_scopes: 403,
  credential_missing: 424,
  secret_not_allowed_for_host: 403,
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

export function toEnvelope(err: AppError, requestId?: string): ErrorEnvelope {
  return {
    error: { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) },
    ...(requestId ? { request_id: requestId } : {}),
  };
}
