import type { Request, Router } from 'express';
import { z } from 'zod';
import { apiRouter } from '../http/api-router.ts';
import { timestamp } from '../http/openapi/common.ts';
import { Identity } from '../identities/responses.ts';
import { publicIdentity } from '../identities/service.ts';
import { principalOf, SESSION_COOKIE } from './middleware.ts';
import { SESSION_TTL_SECONDS, type AuthService } from './service.ts';

const loginBody = z.strictObject({
  email: z.string().trim().min(3).max(320),
  password: z.string().min(1).max(1024),
});

const Session = z.strictObject({
  token: z.string().describe('A `gws_…` session token: send it as `Authorization: Bearer`.'),
  token_type: z.literal('session'),
  expires_at: timestamp,
  user: Identity,
});

/**
 * An HttpOnly, SameSite=Lax cookie of the gateway. `Secure` whenever the dashboard is served over
 * https: judged by PUBLIC_URL (a TLS-terminating proxy may not say X-Forwarded-Proto), or by the
 * request itself. Lax: sent on a top-level navigation back (an identity provider's redirect), not
 * on cross-site subrequests.
 */
export function gatewayCookie(req: Request, publicUrl: string, c: { name: string; value: string; path: string; maxAge: number }): string {
  const secure = req.secure || publicUrl.startsWith('https://') ? '; Secure' : '';
  return `${c.name}=${encodeURIComponent(c.value)}; Path=${c.path}; HttpOnly; SameSite=Lax; Max-Age=${c.maxAge}${secure}`;
}

/** The session cookie (`gatewayCookie` on the whole site). */
export const sessionCookie = (req: Request, value: string, maxAge: number, publicUrl: string): string =>
  gatewayCookie(req, publicUrl, { name: SESSION_COOKIE, value, path: '/', maxAge });

/** Sign-in is open; sign-out needs the session (mounted after authentication). */
export function loginRoutes(auth: AuthService, publicUrl: string): Router {
  const router = apiRouter({ tags: ['Sign-in'] });
  router.route(
    {
      method: 'post',
      path: '/auth/login',
      operationId: 'login',
      summary: 'Sign in with email and password; answers a session token (and sets the session cookie)',
      auth: 'none',
      body: loginBody,
      responses: { 200: Session },
      errors: ['unauthenticated', 'rate_limited', 'forbidden', 'account_deactivated'],
    },
    async (req, res, { body }) => {
    // A throttled sign-in becomes 429 with Retry-After in the error handler.
    // The client's address: behind a proxy on loopback, the one it forwards (app.ts trust proxy).
    const session = await auth.login(body.email, body.password, req.ip ?? req.socket.remoteAddress ?? 'unknown');
    res.setHeader('Set-Cookie', sessionCookie(req, session.token, SESSION_TTL_SECONDS, publicUrl));
    res.json({ token: session.token, token_type: 'session', expires_at: session.expiresAt.toISOString(), user: publicIdentity(session.user) });
    },
  );
  return router.router;
}

export function logoutRoutes(auth: AuthService, publicUrl: string): Router {
  const router = apiRouter({ tags: ['Sign-in'] });
  router.route(
    { method: 'post', path: '/auth/logout', operationId: 'logout', summary: 'End the session (clears the cookie)', responses: { 204: null }, errors: ['forbidden'] },
    async (req, res) => {
      await auth.logout(principalOf(req));
      res.setHeader('Set-Cookie', sessionCookie(req, '', 0, publicUrl));
      res.status(204).end();
    },
  );
  return router.router;
}
