// Sign-in, sessions and bearer resolution. One place turns a presented token into a Principal.
import type { DatabasePool } from 'slonik';
import { AppError, unauthenticated } from '../errors.ts';
import type { IdentityReader, IdentityRow, RideAlongRead } from '../identities/readers.ts';
import { createLoginThrottle } from './login-throttle-store.ts';
import { DUMMY_HASH, verifyPassword } from './passwords.ts';
import type { AgentPrincipal, Principal, UserPrincipal } from './principal.ts';
import type { ReadAlong } from './read-along.ts';
import * as store from './store.ts';
import { hashToken, newToken, SESSION_PREFIX, tokenKind } from './tokens.ts';

export const SESSION_TTL_SECONDS = 12 * 3600;
const KEY_TOUCH_INTERVAL_MS = 60_000;

export interface AuthDeps {
  pool: DatabasePool;
  /** The identities a credential resolves to (users by email, agent keys with their chain). */
  identities: Pick<IdentityReader, 'getUserByEmail' | 'findAgentKeyWithChain' | 'touchAgentKey'>;
  /** OAuth access-token verifier (the authorization server, issue 7); absent → JWTs are refused. */
  verifyAccessToken?: (token: string) => Promise<AgentPrincipal | null>;
  /** False for an org whose admin turned password sign-in off once SSO worked (issue 29). */
  passwordSigninAllowed?: (orgId: string) => Promise<boolean>;
}

export type AcceptedKinds = { session: boolean; agentKey: boolean; oauth: boolean };

/**
 * A read the request will need next, made in the same statement as a session's or an agent key's
 * authentication (the call path's instance lookup, server/registry/request-lookup.ts; the approval
 * a request names, server/approvals/request-approval.ts): `keep` gets what it read with the
 * request's ReadAlong. OAuth access tokens authenticate without a statement, and the reader reads
 * on its own.
 */
export interface AuthRideAlong {
  sql: RideAlongRead;
  keep(along: ReadAlong, value: unknown): void;
}

/** Who presented the token, and what was read along with it for the rest of the request. */
export interface Authenticated {
  principal: Principal;
  along: ReadAlong;
}

export function createAuthService(deps: AuthDeps) {
  const { pool, identities } = deps;
  const throttle = createLoginThrottle(pool);

  async function openSession(userId: string): Promise<{ token: string; expiresAt: Date }> {
    const token = newToken(SESSION_PREFIX);
    const session = await store.createSession(pool, userId, hashToken(token), SESSION_TTL_SECONDS);
    return { token, expiresAt: session.expires_at };
  }

  return {
    /** `source`: the client's address (the sign-in throttle counts per source too: login-throttle.ts). */
    async login(email: string, password: string, source: string): Promise<{ token: string; expiresAt: Date; user: IdentityRow }> {
      // Counted as a failure before the password is checked; a success takes it back.
      const attempt = await throttle.begin(email, source);
      const user = await identities.getUserByEmail(email);
      // Always run scrypt, so an unknown email costs the same time as a wrong password.
      const ok = await verifyPassword(password, user?.password_hash ?? DUMMY_HASH);
      if (!user || !ok) throw new AppError('unauthenticated', 'wrong email or password');
      // The password was right: the attempt is not a guess, whatever comes next.
      await attempt.succeeded();
      // Said only to whoever knows the password: anyone else learns nothing about the account.
      if (user.status !== 'active') throw new AppError('account_deactivated', 'this account was deactivated by an admin of your organisation: ask them to restore your access');
      // Checked after the password, so only the person themself learns their org uses SSO only.
      if (deps.passwordSigninAllowed && !(await deps.passwordSigninAllowed(user.org_id))) {
        throw new AppError('forbidden', 'your organisation signs in with single sign-on only: use the "Sign in with …" button');
      }
      const { token, expiresAt } = await openSession(user.id);
      const { password_hash: _ph, ...publicUser } = user;
      return { token, expiresAt, user: publicUser };
    },

    /** A new dashboard session for a person another door has signed in (SSO). */
    openSession,

    async logout(principal: Principal): Promise<void> {
      if (principal.type !== 'user') throw new AppError('forbidden', 'only a dashboard session can sign out');
      await store.revokeSession(pool, principal.sessionId);
    },

    /** Resolves a bearer token of an accepted kind; anything else is `unauthenticated`. */
    async authenticate(token: string, accept: AcceptedKinds, alongside?: AuthRideAlong): Promise<Authenticated> {
      const along: ReadAlong = {};
      switch (tokenKind(token)) {
        case 'session': {
          if (!accept.session) throw unauthenticated('a dashboard session token is not accepted here');
          const row = await store.findSession(pool, hashToken(token), alongside?.sql);
          if (!row) throw unauthenticated('the session is invalid or expired');
          const p: UserPrincipal = { type: 'user', orgId: row.org_id, userId: row.user_id, identityId: row.user_id, role: row.role, sessionId: row.session_id };
          alongside?.keep(along, row.alongside);
          return { principal: p, along };
        }
        case 'agent_key': {
          if (!accept.agentKey) throw unauthenticated('an agent key is not accepted here');
          // The chain and org settings come along: a call reuses them (read-along.ts).
          const found = await identities.findAgentKeyWithChain(hashToken(token), alongside?.sql);
          if (!found) throw unauthenticated('the agent key is invalid or revoked');
          if (!found.lastUsedAt || Date.now() - found.lastUsedAt.getTime() > KEY_TOUCH_INTERVAL_MS) {
            await identities.touchAgentKey(found.keyId);
          }
          const self = found.chain[0]!;
          const p: AgentPrincipal = {
            type: 'agent',
            orgId: self.org_id,
            userId: self.user_id,
            identityId: self.id,
            kind: self.kind as AgentPrincipal['kind'],
            via: 'agent_key',
            credentialId: found.keyId,
          };
          along.chain = { chain: found.chain, org: found.org };
          alongside?.keep(along, found.alongside);
          return { principal: p, along };
        }
        case 'jwt': {
          if (!accept.oauth || !deps.verifyAccessToken) throw unauthenticated('an OAuth access token is not accepted here');
          const p = await deps.verifyAccessToken(token);
          if (!p) throw unauthenticated('the access token is invalid or expired');
          return { principal: p, along };
        }
        default:
          throw unauthenticated('the bearer token is not recognised');
      }
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
