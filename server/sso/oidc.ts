// The OpenID Connect relying party, on `openid-client` (v6): discovery, the authorization URL with
// PKCE (S256), state and nonce, and the code exchange whose ID token the library validates
// (signature against the provider's JWKS, issuer, audience, expiry, nonce). No JWT is checked by
// hand here.
import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';

export interface RelyingParty {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

const CACHE_MS = 5 * 60_000;
const cache = new Map<string, { at: number; config: Promise<oidc.Configuration> }>();

/** Plain http is for a provider on this machine only (development, tests); anywhere else https. */
export function isLoopbackHttp(issuer: string): boolean {
  const u = new URL(issuer);
  return u.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
}

/** The provider's discovered configuration for this client (cached a few minutes). */
export function configurationOf(rp: RelyingParty): Promise<oidc.Configuration> {
  const key = createHash('sha256').update(`${rp.issuer}\n${rp.clientId}\n${rp.clientSecret}`).digest('hex');
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.config;
  const config = oidc.discovery(new URL(rp.issuer), rp.clientId, rp.clientSecret, oidc.ClientSecretBasic(rp.clientSecret), {
    timeout: 10,
    ...(isLoopbackHttp(rp.issuer) ? { execute: [oidc.allowInsecureRequests] } : {}),
  });
  cache.set(key, { at: Date.now(), config });
  config.catch(() => cache.delete(key));
  return config;
}

export interface Started {
  url: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

export async function authorizationUrl(config: oidc.Configuration, redirectUri: string): Promise<Started> {
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    response_type: 'code',
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url: url.href, state, nonce, codeVerifier };
}

export interface SignedIn {
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
}

/** The code exchange; throws the library's error when anything about the answer or its ID token is wrong. */
export async function completeSignIn(config: oidc.Configuration, callbackUrl: URL, checks: { state: string; nonce: string; codeVerifier: string }): Promise<SignedIn> {
  const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
    pkceCodeVerifier: checks.codeVerifier,
    expectedState: checks.state,
    expectedNonce: checks.nonce,
    idTokenExpected: true,
  });
  const claims = tokens.claims()!;
  return {
    issuer: claims.iss,
    subject: claims.sub,
    email: typeof claims.email === 'string' ? claims.email : null,
    // Absent counts as verified (some providers never send it; the allowed domains still apply); false refuses.
    emailVerified: claims.email_verified !== false,
    name: typeof claims.name === 'string' ? claims.name : null,
  };
}
