// Verification of the gateway's own OAuth access tokens: RS256 JWTs (typ at+jwt) signed by a key
// of the persisted JWKS, issued by this server for the `/mcp` resource, unexpired, and resting on
// a live binding, agent chain, client, grant and token (store.resolveTokenPrincipal). Anything
// else — another audience, another issuer, another key, a dashboard session — is refused.
import { importJWK, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { DatabasePool } from 'slonik';
import type { AgentPrincipal } from '../auth/principal.ts';
import { SIGNING_ALG } from './keys.ts';
import * as store from './store.ts';

const BINDING_TOUCH_INTERVAL_MS = 60_000;

/** The private claim carrying the provider grant a token was issued under. */
export const GRANT_CLAIM = 'gid';

const UNKNOWN_KID_TTL_MS = 30_000;
const UNKNOWN_KID_CACHE_SIZE = 1_000;
const CLOCK_TOLERANCE_SECONDS = 5;

type VerifyKey = Awaited<ReturnType<typeof importJWK>>;

export interface AccessTokenClaims extends JWTPayload {
  sub: string;
  client_id: string;
  jti: string;
  exp: number;
  [GRANT_CLAIM]: string;
}

export function issuerFor(publicUrl: string): string {
  return publicUrl;
}

export function mcpResourceUrl(publicUrl: string): string {
  return `${publicUrl}/mcp`;
}

export function createAccessTokenVerifier(deps: { pool: DatabasePool; publicUrl: string }) {
  const issuer = issuerFor(deps.publicUrl);
  const audience = mcpResourceUrl(deps.publicUrl);
  // A cache of public keys by kid, not state: keys never change, and any kid not seen yet (a key
  // another replica generated after a rotation) is looked up in the shared table. Unknown kids
  // are remembered briefly so forged headers cannot turn every request into a lookup.
  const known = new Map<string, VerifyKey>();
  const unknown = new Map<string, number>();

  async function keyFor(kid: string): Promise<VerifyKey | undefined> {
    const cached = known.get(kid);
    if (cached) return cached;
    if ((unknown.get(kid) ?? 0) > Date.now()) return undefined;
    const jwk = await store.publicSigningKey(deps.pool, kid);
    if (!jwk) {
      if (unknown.size >= UNKNOWN_KID_CACHE_SIZE) unknown.clear();
      unknown.set(kid, Date.now() + UNKNOWN_KID_TTL_MS);
      return undefined;
    }
    const key = await importJWK(jwk, SIGNING_ALG);
    known.set(kid, key);
    return key;
  }

  const getKey: JWTVerifyGetKey = async (header) => {
    const key = header.kid && header.kid.length <= 128 ? await keyFor(header.kid) : undefined;
    if (!key) throw new Error('unknown signing key');
    return key;
  };

  /** The verified claims of one of our access tokens, or null. */
  async function claims(token: string): Promise<AccessTokenClaims | null> {
    try {
      const { payload } = await jwtVerify(token, getKey, {
        issuer,
        audience,
        typ: 'at+jwt',
        algorithms: [SIGNING_ALG],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['sub', 'client_id', 'jti', 'exp', 'iat', GRANT_CLAIM],
      });
      const ok = [payload.sub, payload.client_id, payload.jti, payload[GRANT_CLAIM]].every((v) => typeof v === 'string' && v.length > 0);
      return ok ? (payload as AccessTokenClaims) : null;
    } catch {
      return null;
    }
  }

  return {
    issuer,
    audience,
    claims,

    /** The hook for createAuthService: an agent principal, or null for anything not valid now. */
    async verify(token: string): Promise<AgentPrincipal | null> {
      const c = await claims(token);
      if (!c) return null;
      if (!/^[0-9a-f-]{36}$/i.test(c.sub)) return null;
      const row = await store.resolveTokenPrincipal(deps.pool, { clientId: c.client_id, agentId: c.sub, grantId: c[GRANT_CLAIM], jti: c.jti });
      if (!row) return null;
      // "Last used" for the agents page, written at most once a minute per binding.
      if (!row.last_used_at || Date.now() - row.last_used_at.getTime() > BINDING_TOUCH_INTERVAL_MS) await store.touchBinding(deps.pool, row.binding_id);
      return { type: 'agent', orgId: row.org_id, userId: row.user_id, identityId: row.agent_id, kind: row.kind, via: 'oauth', credentialId: c.client_id };
    },
  };
}

export type AccessTokenVerifier = ReturnType<typeof createAccessTokenVerifier>;
