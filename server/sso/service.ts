// Single sign-on with OpenID Connect (issue 29): an admin configures the org's identity provider
// (the client secret goes to the vault); a person signs in with it — from the sign-in page, or
// from an invitation link — and lands signed in. Every refusal is an `SsoRefusal` with a sentence
// for the page the browser shows.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { isAdmin, type Principal } from '../auth/principal.ts';
import type { AuthService } from '../auth/service.ts';
import { hashToken } from '../auth/tokens.ts';
import { AppError, conflict, forbidden, invalidRequest, notFound } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { TeamService } from '../teams/service.ts';
import { LANDING_PATH } from '../teams/service.ts';
import type { VaultService } from '../vault/service.ts';
import { authorizationUrl, completeSignIn, configurationOf, isLoopbackHttp, type SignedIn } from './oidc.ts';
import type { AuditWriter } from '../audit/writer.ts';
import * as store from './store.ts';

export const SSO_SECRET_NAME = 'sso.client_secret';
/** How long a person has at the provider before the sign-in must start again. */
export const SSO_LOGIN_TTL_SECONDS = 10 * 60;
/** The cookie binding a sign-in under way to the browser that started it. */
export const SSO_BROWSER_COOKIE = 'gw_sso';

/** A sign-in refused: the page says `message`; `status` is the HTTP status of that page. */
export class SsoRefusal extends Error {
  override name = 'SsoRefusal';
  readonly status: number;
  readonly reason: string;
  constructor(status: number, message: string, reason: string) {
    super(message);
    this.status = status;
    this.reason = reason;
  }
}

export interface SsoConfigInput {
  issuer: string;
  client_id: string;
  client_secret?: string | undefined;
  allowed_domains: string[];
  jit: boolean;
  display_name: string;
  password_signin?: boolean | undefined;
}

export function publicSsoConfig(c: store.SsoConfigRow) {
  return {
    issuer: c.issuer,
    client_id: c.client_id,
    client_secret_set: true,
    allowed_domains: c.allowed_domains,
    jit: c.jit,
    display_name: c.display_name,
    password_signin: c.password_signin,
    verified_at: c.verified_at?.toISOString() ?? null,
    updated_at: c.updated_at.toISOString(),
  };
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

export function createSsoService(deps: {
  pool: DatabasePool;
  /** Audit rows (bound to the pool by the composition root). */
  audit: AuditWriter;
  /** A completed sign-in is a dashboard session: auth opens it. */
  sessions: Pick<AuthService, 'openSession'>;
  publicUrl: string;
  vault: Pick<VaultService, 'put' | 'resolveSecretValue'>;
  teams: Pick<TeamService, 'openInvitation' | 'joinWithSso'>;
  logger: Pick<Logger, 'info' | 'warn'>;
}) {
  const { pool } = deps;
  const redirectUri = `${deps.publicUrl}/v1/auth/sso/callback`;
  const view = (c: store.SsoConfigRow) => ({ ...publicSsoConfig(c), redirect_uri: redirectUri });


  async function relyingParty(c: store.SsoConfigRow) {
    const secret = await deps.vault.resolveSecretValue(c.org_id, SSO_SECRET_NAME);
    if (secret === null) throw new SsoRefusal(503, 'Single sign-on is misconfigured: its client secret is missing. Ask an admin.', 'secret_missing');
    return configurationOf({ issuer: c.issuer, clientId: c.client_id, clientSecret: secret });
  }

  const domainsTaken = (domains: readonly string[]) =>
    conflict(
      `${domains.join(', ')} ${domains.length === 1 ? 'is' : 'are'} already claimed by another organisation's single sign-on: a domain can belong to one organisation only`,
      { field: 'allowed_domains', domains: [...domains] },
    );

  /** The person the provider vouched for, in this org: found by subject, linked by email, or joined. */
  async function personFor(c: store.SsoConfigRow, who: SignedIn, invitationId: string | null): Promise<string> {
    const email = who.email?.trim() ?? '';
    const domain = email.split('@')[1]?.toLowerCase() ?? '';
    if (!email || !domain) throw new SsoRefusal(403, 'Your identity provider did not share an email address, so you cannot be matched to a person here.', 'no_email');
    if (!who.emailVerified) throw new SsoRefusal(403, `Your identity provider says ${email} is not verified.`, 'email_unverified');
    if (!c.allowed_domains.includes(domain)) {
      throw new SsoRefusal(403, `Accounts of ${domain} cannot sign in to this organisation: its single sign-on accepts ${c.allowed_domains.join(', ')} only.`, 'unknown_domain');
    }
    const linked = await store.userOfSubject(pool, who.issuer, who.subject);
    let userId = linked;
    if (!userId) {
      try {
        userId = await deps.teams.joinWithSso({ orgId: c.org_id, email, name: who.name ?? email.split('@')[0]!, invitationId, jit: c.jit });
      } catch (err) {
        if (err instanceof AppError && err.code === 'conflict') userId = await existingUserIn(c.org_id, email);
        else if (err instanceof AppError) throw new SsoRefusal(err.status, `${err.message}.`, err.code === 'forbidden' ? 'not_invited' : err.code);
        else throw err;
      }
      await store.linkSubject(pool, who.issuer, who.subject, userId);
    }
    const user = await store.userById(pool, userId);
    if (!user || user.org_id !== c.org_id) throw new SsoRefusal(403, 'This account belongs to another organisation.', 'other_org');
    if (user.status !== 'active') throw new SsoRefusal(403, 'Your access to this organisation was deactivated. Ask an admin.', 'deactivated');
    return userId;
  }

  /** Someone who already has an account here (by password) signs in with SSO for the first time. */
  async function existingUserIn(orgId: string, email: string): Promise<string> {
    const found = await store.userByEmailInOrg(pool, orgId, email);
    if (!found) throw new SsoRefusal(403, 'This account belongs to another organisation.', 'other_org');
    return found;
  }

  return {
    redirectUri,

    /** The sign-in page's buttons: "Sign in with <name>". */
    async buttons() {
      return (await store.listButtons(pool)).map((b) => ({ org_id: b.org_id, display_name: b.display_name }));
    },

    async getConfig(p: Principal) {
      if (!isAdmin(p)) throw forbidden('only admins see the single sign-on configuration');
      const c = await store.getConfig(pool, p.orgId);
      if (!c) throw notFound('single sign-on configuration');
      return view(c);
    },

    /**
     * Sets the org's provider. The issuer must answer OpenID discovery; a new issuer or client has
     * to prove itself with a sign-in before password sign-in can be turned off.
     */
    async putConfig(p: Principal, input: SsoConfigInput) {
      if (p.type !== 'user' || !isAdmin(p)) throw forbidden('only admins configure single sign-on');
      let issuer: URL;
      try {
        issuer = new URL(input.issuer);
      } catch {
        throw invalidRequest('issuer is not a URL', { field: 'issuer' });
      }
      if (issuer.protocol !== 'https:' && !isLoopbackHttp(issuer.href)) throw invalidRequest('issuer must be an https URL', { field: 'issuer' });
      const domains = [...new Set(input.allowed_domains.map((d) => d.trim().toLowerCase()))];
      const bad = domains.find((d) => !DOMAIN.test(d));
      if (bad !== undefined) throw invalidRequest(`"${bad}" is not a domain name`, { field: 'allowed_domains' });
      // A domain is one org's (just-in-time join would take in another org's people): refused
      // before anything is stored, and without saying whose it is.
      const taken = await store.domainsClaimedElsewhere(pool, p.orgId, domains);
      if (taken.length > 0) throw domainsTaken(taken);
      const existing = await store.getConfig(pool, p.orgId);
      // Kept exactly as given: the library compares it with the provider's own `issuer`.
      const issuerText = input.issuer;
      const changedProvider = !existing || existing.issuer !== issuerText || existing.client_id !== input.client_id || input.client_secret !== undefined;
      if (!existing && input.client_secret === undefined) throw invalidRequest('client_secret is required', { field: 'client_secret' });
      const passwordSignin = input.password_signin ?? existing?.password_signin ?? true;
      if (!passwordSignin && (changedProvider || !existing?.verified_at)) {
        throw conflict('password sign-in can be turned off only once single sign-on works: sign in with it once first', { field: 'password_signin' });
      }
      const secret = input.client_secret ?? (await deps.vault.resolveSecretValue(p.orgId, SSO_SECRET_NAME));
      if (secret === null) throw invalidRequest('client_secret is required', { field: 'client_secret' });
      try {
        await configurationOf({ issuer: issuerText, clientId: input.client_id, clientSecret: secret });
      } catch (err) {
        throw new AppError('validation_failed', `the issuer did not answer OpenID Connect discovery: ${(err as Error).message}`, { field: 'issuer' });
      }
      let clientSecretId = existing?.client_secret_id;
      if (input.client_secret !== undefined) {
        const put = await deps.vault.put(p, { name: SSO_SECRET_NAME, value: input.client_secret, description: 'Client secret of the org’s single sign-on (OpenID Connect)' });
        clientSecretId = put.secret.id;
      }
      const row = await pool.transaction(async (tx) => {
        const lost = await store.claimDomains(tx, p.orgId, domains);
        // Claimed by another org since the check above: nothing of this change is kept.
        if (lost.length > 0) throw domainsTaken(lost);
        return store.putConfig(tx, {
        orgId: p.orgId,
        issuer: issuerText,
        clientId: input.client_id,
        clientSecretId: clientSecretId!,
        allowedDomains: domains,
        jit: input.jit,
        displayName: input.display_name,
        passwordSignin,
        resetVerified: changedProvider,
        by: p.identityId,
        });
      });
      deps.logger.info({ org_id: p.orgId, issuer: issuerText }, 'single sign-on configured');
      await deps.audit.append({
        orgId: p.orgId,
        event: 'sso.configured',
        actorId: p.identityId,
        details: { issuer: issuerText, client_id: input.client_id, allowed_domains: domains, jit: input.jit, password_signin: passwordSignin, secret_changed: input.client_secret !== undefined },
      });
      return view(row);
    },

    /** Starts a sign-in at the org's provider (optionally from an invitation link). */
    async start(input: { org_id: string; invitation_token?: string | undefined }): Promise<{ authorization_url: string; browser: string }> {
      const c = await store.getConfig(pool, input.org_id);
      if (!c) throw notFound('single sign-on');
      let invitationId: string | null = null;
      if (input.invitation_token) {
        const inv = await deps.teams.openInvitation(input.invitation_token);
        if (inv.orgId !== c.org_id) throw invalidRequest('the invitation is for another organisation', { field: 'invitation_token' });
        invitationId = inv.id;
      }
      const started = await authorizationUrl(await relyingParty(c).catch((err) => {
        throw new AppError('unavailable', `the identity provider cannot be reached: ${(err as Error).message}`);
      }), redirectUri);
      const browser = randomBytes(32).toString('base64url');
      await store.startLogin(pool, {
        stateHash: hashToken(started.state),
        browserHash: hashToken(browser),
        orgId: c.org_id,
        nonce: started.nonce,
        codeVerifier: started.codeVerifier,
        invitationId,
        ttlSeconds: SSO_LOGIN_TTL_SECONDS,
      });
      return { authorization_url: started.url, browser };
    },

    /**
     * The provider's redirect back: takes the sign-in its state names (once: a replayed state is
     * refused), exchanges the code (the library validates the ID token), finds or joins the
     * person, opens a session. Answers the session token and where to go next.
     */
    async callback(query: URLSearchParams, browser: string | undefined): Promise<{ token: string; landing: string }> {
      const state = query.get('state');
      if (!state) throw new SsoRefusal(400, 'The identity provider sent you back without a sign-in state. Start again from the sign-in page.', 'no_state');
      const login = await store.takeLogin(pool, hashToken(state));
      if (!login) throw new SsoRefusal(400, 'This sign-in was already used or has expired. Start again from the sign-in page.', 'replayed_state');
      // Only the browser that started the sign-in finishes it (no login CSRF with a carried-over URL).
      const sameBrowser = browser !== undefined && timingSafeEqual(hashToken(browser), login.browser_hash);
      if (!sameBrowser) throw new SsoRefusal(400, 'This sign-in was started in another browser. Start again from the sign-in page here.', 'other_browser');
      const providerError = query.get('error');
      if (providerError) throw new SsoRefusal(403, `The identity provider refused the sign-in (${providerError.slice(0, 100)}).`, 'provider_error');
      const c = await store.getConfig(pool, login.org_id);
      if (!c) throw new SsoRefusal(400, 'Single sign-on is no longer configured for this organisation.', 'not_configured');
      let who: SignedIn;
      try {
        who = await completeSignIn(await relyingParty(c), new URL(`${redirectUri}?${query.toString()}`), { state, nonce: login.nonce, codeVerifier: login.code_verifier });
      } catch (err) {
        if (err instanceof SsoRefusal) throw err;
        deps.logger.warn({ org_id: c.org_id, err: (err as Error).message }, 'single sign-on refused the identity provider’s answer');
        throw new SsoRefusal(403, `The identity provider’s answer could not be verified, so you were not signed in (${(err as Error).message}).`, 'invalid_id_token');
      }
      const userId = await personFor(c, who, login.invitation_id);
      await store.markVerified(pool, c.org_id);
      const { token } = await deps.sessions.openSession(userId);
      return { token, landing: LANDING_PATH };
    },

    /** Password sign-in of this org: on unless an admin turned it off once SSO worked. */
    async passwordSigninAllowed(orgId: string): Promise<boolean> {
      return (await store.passwordSigninAllowed(pool, orgId)) ?? true;
    },
  };
}

export type SsoService = ReturnType<typeof createSsoService>;
