// The dashboard's one door to the gateway: the typed REST client generated from the OpenAPI
// document (core/api/client.ts), same origin, the session cookie. `unwrap` turns the client's
// `{ data, error }` answer into the data or a thrown ApiError carrying the error envelope.
import { createClient } from '../../../core/api/client.ts';

export type { components, paths } from '../../../core/api/client.ts';

export interface ApiErrorBody {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown> | undefined;
  constructor(status: number, body: ApiErrorBody) {
    super(body.message);
    this.status = status;
    this.code = body.code;
    this.details = body.details;
  }
}

/**
 * The session is gone (expired, signed out elsewhere): only then does a page send the browser to
 * sign-in. Other 401s concern a third party — a call's `needs_authentication`, a connection's
 * `reauth_required` — and are the page's to show.
 */
export const sessionLost = (err: unknown): boolean => err instanceof ApiError && err.status === 401 && err.code === 'unauthenticated';

/**
 * Same-origin client: the browser sends the session cookie with every request. Unsafe requests
 * always say Content-Type: application/json, even without a body: the gateway refuses any other
 * type for cookie-authenticated changes (a cross-site form cannot send JSON).
 */
export const api = createClient({
  baseUrl: '',
  fetch: (input) => {
    // openapi-fetch always hands a Request.
    const req = input as Request;
    if (req.method !== 'GET' && req.method !== 'HEAD' && !req.headers.has('content-type')) req.headers.set('content-type', 'application/json');
    return globalThis.fetch(req, { credentials: 'same-origin' });
  },
});

/** The data of a successful answer, or an ApiError with the gateway's envelope. */
export async function unwrap<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await p;
  if (!response.ok) {
    const body = (error as { error?: ApiErrorBody } | undefined)?.error;
    throw new ApiError(response.status, body ?? { code: 'internal', message: `HTTP ${response.status}` });
  }
  return data as T;
}
