import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { publicIdentity } from '../identities/service.ts';
import { principalOf, SESSION_COOKIE } from './middleware.ts';
import { SESSION_TTL_SECONDS, type AuthService } from './service.ts';

const loginBody = z.strictObject({
  email: z.string().trim().min(3).max(320),
  password: z.string().min(1).max(1024),
});

function sessionCookie(req: Request, value: string, maxAge: number): string {
  const secure = req.secure ? '; Secure' : '';
  return `${SESSION_COOKIE}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure}`;
}

/** Sign-in is open; sign-out needs the session (mounted after authentication). */
export function loginRoutes(auth: AuthService): Router {
  const router = Router();
  router.post('/auth/login', async (req: Request, res: Response) => {
    const body = loginBody.parse(req.body);
    // A throttled sign-in becomes 429 with Retry-After in the error handler.
    const session = await auth.login(body.email, body.password);
    res.setHeader('Set-Cookie', sessionCookie(req, session.token, SESSION_TTL_SECONDS));
    res.json({ token: session.token, token_type: 'session', expires_at: session.expiresAt.toISOString(), user: publicIdentity(session.user) });
  });
  return router;
}

export function logoutRoutes(auth: AuthService): Router {
  const router = Router();
  router.post('/auth/logout', async (req, res) => {
    await auth.logout(principalOf(req));
    res.setHeader('Set-Cookie', sessionCookie(req, '', 0));
    res.status(204).end();
  });
  return router;
}
