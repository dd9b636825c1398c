// The user-facing steps of an authorization: sign-in and consent, as plain HTML forms.
//
//   GET  /oauth/signin/:uid   sign-in form, or straight on when the browser holds a gateway session
//   POST /oauth/signin/:uid   email + password → the dashboard session cookie → back to the provider
//   GET  /oauth/consent/:uid  pick an agent or create one (default name: the client's client_name);
//                             skipped when the (user, client) pair is already bound to a live agent
//   POST /oauth/consent/:uid  bind the pair, grant, back to the provider (or deny)
//
// CSRF: each form carries a per-interaction token (HMAC of the interaction uid under the cookie
// key); the interaction itself is found through its own path-scoped, signed, SameSite=Lax cookie,
// and its uid must equal the one in the path; a cross-origin Origin header is refused; the pages
// cannot be framed.
import { createHmac, timingSafeEqual } from 'node:crypto';
import express, { Router, type Request, type Response } from 'express';
import type { InteractionDetails } from 'oidc-provider';
import { readCookie, SESSION_COOKIE } from '../auth/middleware.ts';
import type { UserPrincipal } from '../auth/principal.ts';
import { SESSION_TTL_SECONDS, type AuthService } from '../auth/service.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { BindingError, type AgentChoice, type ConsentBindings, type GrantRequest, type UsableBinding } from './bindings.ts';
import { consentPage, errorPage, PAGE_HEADERS, signInPage } from './html.ts';
import { CONSENT_PATH, sessionUser, SIGNIN_PATH, type OAuthRuntime } from './provider.ts';
import { mcpResourceUrl } from './verify.ts';

export interface InteractionDeps {
  runtime: () => Promise<OAuthRuntime>;
  bindings: ConsentBindings;
  auth: AuthService;
  publicUrl: string;
  logger: Logger;
}

const UID = /^[A-Za-z0-9_-]{10,64}$/;
const DEFAULT_AGENT_NAME = 'MCP client';
/** The provider's own scopes a grant may have to cover besides the MCP one. */
const OIDC_SCOPES: ReadonlySet<string> = new Set(['openid', 'offline_access']);

/** The per-interaction form token: an HMAC of the uid under the signing cookie key. */
export function csrfToken(cookieKeys: readonly string[], uid: string): string {
  return createHmac('sha256', cookieKeys[0]!).update(`oauth-interaction:${uid}`).digest('base64url');
}

function csrfValid(cookieKeys: readonly string[], uid: string, presented: unknown): boolean {
  if (typeof presented !== 'string' || presented.length === 0) return false;
  const got = Buffer.from(presented);
  return cookieKeys.some((key) => {
    const want = Buffer.from(createHmac('sha256', key).update(`oauth-interaction:${uid}`).digest('base64url'));
    return want.length === got.length && timingSafeEqual(want, got);
  });
}

function send(res: Response, status: number, html: string): void {
  res.status(status).set(PAGE_HEADERS).type('html').send(html);
}

function sessionCookie(req: Request, value: string, maxAge: number): string {
  return `${SESSION_COOKIE}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${req.secure ? '; Secure' : ''}`;
}

class PageError extends Error {
  readonly status: number;
  readonly title: string;
  constructor(status: number, title: string, message: string) {
    super(message);
    this.status = status;
    this.title = title;
  }
}

const expired = () => new PageError(400, 'This request has expired', 'The authorization request is no longer valid or was already completed.');

function field(body: unknown, name: string): string | undefined {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' ? v : undefined;
}

function asList(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

export function interactionRoutes(deps: InteractionDeps): Router {
  const { bindings, auth, logger } = deps;
  const mcpUrl = mcpResourceUrl(deps.publicUrl);
  const allowedOrigins = new Set([new URL(deps.publicUrl).origin]);
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });

  /** Wraps a page handler: typed page errors become an HTML page; anything else is logged. */
  const pageHandler = (fn: (req: Request, res: Response, rt: OAuthRuntime) => Promise<void>) => async (req: Request, res: Response) => {
    try {
      await fn(req, res, await deps.runtime());
    } catch (err) {
      if (res.headersSent) return;
      if (err instanceof PageError) return send(res, err.status, errorPage(err.title, err.message));
      logger.error({ err }, 'OAuth interaction failed');
      send(res, 500, errorPage('Something went wrong', 'The gateway could not complete this step.'));
    }
  };

  /** The interaction of this browser, which must be the one in the path and at the expected step. */
  async function load(rt: OAuthRuntime, req: Request, res: Response, step: 'login' | 'consent'): Promise<InteractionDetails> {
    const uid = String(req.params.uid ?? '');
    if (!UID.test(uid)) throw expired();
    let details: InteractionDetails;
    try {
      details = await rt.provider.interactionDetails(req, res);
    } catch {
      throw expired();
    }
    if (details.uid !== uid || details.prompt.name !== step) throw expired();
    return details;
  }

  /**
   * Form posts: the interaction's own token is what is trusted. A foreign `Origin` is refused; an
   * absent or opaque one (`Origin: null`, sent by privacy settings, extensions or a no-referrer
   * page) proves nothing either way, so the token decides.
   */
  function checkPost(rt: OAuthRuntime, req: Request, uid: string): void {
    const origin = req.get('origin');
    const ownOrigin = `${req.protocol}://${req.get('host') ?? ''}`;
    if (origin !== undefined && origin !== 'null' && origin !== ownOrigin && !allowedOrigins.has(origin)) {
      throw new PageError(403, 'Request refused', 'The form was not sent from this site.');
    }
    if (!csrfValid(rt.keys.cookieKeys, uid, field(req.body, 'csrf'))) {
      throw new PageError(403, 'Request refused', 'The form is stale or was not sent from this site. Go back and try again.');
    }
  }

  async function clientName(rt: OAuthRuntime, clientId: string): Promise<string> {
    const client = await rt.provider.Client.find(clientId);
    if (!client) throw new PageError(400, 'Unknown application', 'The application is not registered here.');
    return client.clientName?.trim() || DEFAULT_AGENT_NAME;
  }

  /** The signed-in user the consent step belongs to (the interaction's account), or an error page. */
  async function consentUser(req: Request, details: InteractionDetails): Promise<UserPrincipal> {
    const user = await sessionUser(auth, readCookie(req, SESSION_COOKIE));
    if (!user || user.userId !== details.session?.accountId) {
      throw new PageError(401, 'Your session has ended', 'Sign in again by starting over from the application.');
    }
    return user;
  }

  const grantRequest = (details: InteractionDetails): GrantRequest => {
    const resources = asList(details.params.resource);
    return {
      resources: resources.length ? resources : [mcpUrl],
      oidcScopes: (details.params.scope ?? '').split(' ').filter((s) => OIDC_SCOPES.has(s)),
    };
  };

  const finishConsent = async (rt: OAuthRuntime, req: Request, res: Response, details: InteractionDetails, binding: UsableBinding) => {
    const grant = await bindings.grant(rt.provider, binding, grantRequest(details));
    await rt.provider.interactionFinished(req, res, { consent: { grantId: grant.jti } }, { mergeWithLastSubmission: true });
  };

  const refuse = (rt: OAuthRuntime, req: Request, res: Response, description: string) =>
    rt.provider.interactionFinished(req, res, { error: 'access_denied', error_description: description }, { mergeWithLastSubmission: false });

  // Sign-in ------------------------------------------------------------------------------------

  router.get(
    `${SIGNIN_PATH}/:uid`,
    pageHandler(async (req, res, rt) => {
      const details = await load(rt, req, res, 'login');
      const user = await sessionUser(auth, readCookie(req, SESSION_COOKIE));
      const forced = details.prompt.reasons.some((r) => r === 'login_prompt' || r === 'max_age');
      if (user && !forced) {
        return rt.provider.interactionFinished(req, res, { login: { accountId: user.userId } }, { mergeWithLastSubmission: false });
      }
      send(res, 200, signInPage({ action: `${SIGNIN_PATH}/${details.uid}`, csrf: csrfToken(rt.keys.cookieKeys, details.uid), clientName: await clientName(rt, details.params.client_id) }));
    }),
  );

  router.post(
    `${SIGNIN_PATH}/:uid`,
    form,
    pageHandler(async (req, res, rt) => {
      const details = await load(rt, req, res, 'login');
      checkPost(rt, req, details.uid);
      const email = field(req.body, 'email')?.trim() ?? '';
      const password = field(req.body, 'password') ?? '';
      const name = await clientName(rt, details.params.client_id);
      const again = (status: number, error: string) =>
        send(res, status, signInPage({ action: `${SIGNIN_PATH}/${details.uid}`, csrf: csrfToken(rt.keys.cookieKeys, details.uid), email, error, clientName: name }));
      if (email.length < 3 || email.length > 320 || password.length === 0 || password.length > 1024) return again(400, 'Enter your email and password.');
      let session: Awaited<ReturnType<AuthService['login']>>;
      try {
        session = await auth.login(email, password, req.ip ?? req.socket.remoteAddress ?? 'unknown');
      } catch (err) {
        if (err instanceof AppError && err.code === 'unauthenticated') return again(401, 'Wrong email or password.');
        if (err instanceof AppError && err.code === 'account_deactivated') return again(403, 'This account was deactivated by an admin of your organisation. Ask them to restore your access.');
        if (err instanceof AppError && err.code === 'rate_limited') {
          res.setHeader('Retry-After', String(err.details?.retry_after_seconds ?? 60));
          return again(429, 'Too many failed sign-in attempts. Wait a moment, then try again.');
        }
        throw err;
      }
      res.setHeader('Set-Cookie', sessionCookie(req, session.token, SESSION_TTL_SECONDS));
      await rt.provider.interactionFinished(req, res, { login: { accountId: session.user.id } }, { mergeWithLastSubmission: false });
    }),
  );

  // Consent ------------------------------------------------------------------------------------

  router.get(
    `${CONSENT_PATH}/:uid`,
    pageHandler(async (req, res, rt) => {
      const details = await load(rt, req, res, 'consent');
      const user = await consentUser(req, details);
      const clientId = details.params.client_id;
      const name = await clientName(rt, clientId);
      if (await bindings.clientRevoked(user.orgId, clientId)) {
        return refuse(rt, req, res, 'an administrator of your organisation has revoked this application');
      }
      // Bound to a live agent: nothing to ask (native clients always come through here).
      const binding = await bindings.usable(user.userId, clientId);
      if (binding) return finishConsent(rt, req, res, details, binding);
      await renderConsent(rt, res, details, user, name, 200);
    }),
  );

  async function renderConsent(rt: OAuthRuntime, res: Response, details: InteractionDetails, user: UserPrincipal, name: string, status: number, error?: string) {
    const { agents, email } = await bindings.choices(user.userId);
    send(
      res,
      status,
      consentPage({
        action: `${CONSENT_PATH}/${details.uid}`,
        csrf: csrfToken(rt.keys.cookieKeys, details.uid),
        clientName: name,
        clientId: details.params.client_id,
        redirectUri: typeof details.params.redirect_uri === 'string' ? details.params.redirect_uri : undefined,
        userEmail: email,
        agents: agents.map((a) => ({ id: a.id, name: a.name })),
        defaultName: name.slice(0, 200),
        ...(error ? { error } : {}),
      }),
    );
  }

  router.post(
    `${CONSENT_PATH}/:uid`,
    form,
    pageHandler(async (req, res, rt) => {
      const details = await load(rt, req, res, 'consent');
      checkPost(rt, req, details.uid);
      const user = await consentUser(req, details);
      const clientId = details.params.client_id;
      const name = await clientName(rt, clientId);
      if (field(req.body, 'decision') !== 'allow') return refuse(rt, req, res, 'the user denied access');
      if (await bindings.clientRevoked(user.orgId, clientId)) {
        return refuse(rt, req, res, 'an administrator of your organisation has revoked this application');
      }
      const agent = field(req.body, 'agent') ?? 'new';
      let choice: AgentChoice;
      if (agent === 'new') {
        const newName = (field(req.body, 'name') ?? '').trim() || name;
        if (newName.length > 200) return renderConsent(rt, res, details, user, name, 400, 'The agent name may be at most 200 characters.');
        choice = { newAgentName: newName };
      } else if (/^[0-9a-f-]{36}$/i.test(agent)) {
        choice = { agentId: agent };
      } else {
        return renderConsent(rt, res, details, user, name, 400, 'Choose an agent.');
      }
      let binding: UsableBinding;
      try {
        binding = await bindings.bind({ userId: user.userId, clientId, choice });
      } catch (err) {
        if (err instanceof BindingError) return renderConsent(rt, res, details, user, name, 409, err.message);
        throw err;
      }
      await finishConsent(rt, req, res, details, binding);
    }),
  );

  return router;
}
