// Turns `Authorization: Bearer …` (or, for the dashboard, the session cookie) into req.principal.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError, unauthenticated } from '../errors.ts';
import type { Principal } from './principal.ts';
import type { AcceptedKinds, AuthService } from './service.ts';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
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

export function authenticate(auth: AuthService, accept: AcceptedKinds): RequestHandler {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const header = req.get('authorization');
    let token: string | undefined;
    if (header !== undefined) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m) throw unauthenticated('the Authorization header must be "Bearer <token>"');
      token = m[1];
    } else if (accept.session) {
      // Cookies carry only session tokens (the dashboard); SameSite=Lax keeps them off cross-site POSTs.
      token = readCookie(req, SESSION_COOKIE);
    }
    if (!token) throw unauthenticated();
    // A cookie is only ever a dashboard session: an agent key or access token placed there is refused.
    req.principal = await auth.authenticate(token, header !== undefined ? accept : { session: true, agentKey: false, oauth: false });
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
