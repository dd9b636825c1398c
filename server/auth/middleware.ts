// Turns `Authorization: Bearer …` (or, for the dashboard, the session cookie) into req.principal.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError, unauthenticated } from '../errors.ts';
import type { Principal } from './principal.ts';
import type { AcceptedKinds, AuthRideAlong, AuthService } from './service.ts';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
    /** The credential that authenticated the request (a stream re-checks it: stream-guard.ts). */
    credential?: { token: string; accept: AcceptedKinds };
  }
}

export const SESSION_COOKIE = 'gw_session';

export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A cookie travels with any request the browser makes to this host — SameSite=Lax does not stop
 * a page on another port of the same host, which is "same site". So an unsafe request that is
 * authenticated by the cookie must prove it comes from the dashboard itself: a same-origin
 * `Origin` (or, without one, `Sec-Fetch-Site: same-origin`), and a JSON body type, which a
 * cross-origin form cannot send without a CORS preflight this server never grants. Bearer tokens
 * are not sent by browsers on their own, so bearer requests are not concerned.
 */
export function assertDashboardOrigin(req: Request, publicUrl: string): void {
  if (SAFE_METHODS.has(req.method)) return;
  const own = new Set([new URL(publicUrl).origin, `${req.protocol}://${req.get('host') ?? ''}`]);
  const origin = req.get('origin');
  const sameOrigin = origin !== undefined ? own.has(origin) : req.get('sec-fetch-site') === 'same-origin';
  if (!sameOrigin) {
    throw new AppError('forbidden', `a request signed in with the dashboard cookie must come from the dashboard's own origin (${[...own][0]}); scripts use Authorization: Bearer`, {
      reason: 'cross_origin',
    });
  }
  // The header itself: `req.is()` answers null for a request without a body (a bodiless POST or DELETE).
  const type = (req.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new AppError('invalid_request', 'a dashboard request must send Content-Type: application/json', { reason: 'content_type' });
  }
}

export interface AuthenticateOptions {
  publicUrl?: string;
  /** What the request will read next, read with its authentication (see AuthRideAlong). */
  alongside?: (req: Request) => AuthRideAlong | undefined;
}

export function authenticate(auth: AuthService, accept: AcceptedKinds, opts: AuthenticateOptions = {}): RequestHandler {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const header = req.get('authorization');
    let token: string | undefined;
    if (header !== undefined) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m) throw unauthenticated('the Authorization header must be "Bearer <token>"');
      token = m[1];
    } else if (accept.session) {
      // Cookies carry only session tokens (the dashboard); SameSite=Lax keeps them off cross-site
      // POSTs, and the origin check keeps them off same-site ones from other origins.
      token = readCookie(req, SESSION_COOKIE);
      if (token && opts.publicUrl) assertDashboardOrigin(req, opts.publicUrl);
    }
    if (!token) throw unauthenticated();
    // A cookie is only ever a dashboard session: an agent key or access token placed there is refused.
    const kinds = header !== undefined ? accept : { session: true, agentKey: false, oauth: false };
    const { principal, along } = await auth.authenticate(token, kinds, opts.alongside?.(req));
    req.principal = principal;
    req.along = along;
    req.credential = { token, accept: kinds };
    next();
  };
}

export function principalOf(req: Request): Principal {
  if (!req.principal) throw unauthenticated();
  return req.principal;
}

/** Humans only (dashboard sessions): agents may not manage permissions or the vault. */
export function requireHuman(req: Request): Extract<Principal, { type: 'user' }> {
  const p = principalOf(req);
  if (p.type !== 'user') throw new AppError('forbidden', 'this operation is reserved for people signed in to the dashboard');
  return p;
}
