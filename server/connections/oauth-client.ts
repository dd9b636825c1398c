// A small OAuth 2 client for connections (RFC 6749, PKCE RFC 7636, revocation RFC 7009), on fetch.
// Pure protocol: no database, no vault. Every request is time-bound; error responses become an
// OAuthError whose `error` is the provider's code, so `invalid_grant` is recognisable upstream.
import { createHash, randomBytes } from 'node:crypto';

export const OAUTH_REQUEST_TIMEOUT_MS = 10_000;
/** Token and userinfo answers are small; anything bigger is refused rather than buffered. */
const MAX_RESPONSE_BYTES = 256 * 1024;

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

export interface OAuthClientConfig {
  clientId: string;
  /** Absent for public clients (`none`). */
  clientSecret: string | null;
  authMethod: ClientAuthMethod;
  authorizationUrl: string;
  tokenUrl: string;
  revocationUrl: string | null;
  userinfoUrl: string | null;
  /** RFC 8707 resource indicator, sent in the authorization and every token request when set. */
  resource?: string | null;
}

export interface TokenSet {
  accessToken: string;
  /** Null when the provider did not issue (or, on refresh, did not rotate) one. */
  refreshToken: string | null;
  /** Seconds; null when the provider did not say. */
  expiresIn: number | null;
  /** The `scope` of the response, split; null when absent (then the requested scopes were granted). */
  scope: string[] | null;
  tokenType: string;
}

export interface AccountIdentity {
  accountId: string | null;
  accountName: string | null;
}

export type OAuthFailure = 'oauth_error' | 'http_error' | 'network' | 'timeout' | 'invalid_response';

/**
 * A failed exchange with the provider. `error` is the RFC 6749 §5.2 code when the provider sent
 * one (`invalid_grant`, `invalid_client`, …). Messages never carry tokens or secrets.
 */
export class OAuthError extends Error {
  override name = 'OAuthError';
  readonly kind: OAuthFailure;
  readonly error: string | undefined;
  readonly description: string | undefined;
  readonly status: number | undefined;
  constructor(kind: OAuthFailure, message: string, extra: { error?: string | undefined; description?: string | undefined; status?: number | undefined } = {}) {
    super(message);
    this.kind = kind;
    this.error = extra.error;
    this.description = extra.description;
    this.status = extra.status;
  }
}

export const isInvalidGrant = (err: unknown): boolean => err instanceof OAuthError && err.error === 'invalid_grant';

export interface RequestOptions {
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** 32 random bytes, base64url: used for `state` and as the PKCE verifier (43 chars, RFC 7636 §4.1). */
export const randomToken = (): string => randomBytes(32).toString('base64url');

export const pkceChallenge = (verifier: string): string => createHash('sha256').update(verifier, 'ascii').digest('base64url');

export function buildAuthorizationUrl(
  cfg: Pick<OAuthClientConfig, 'clientId' | 'authorizationUrl' | 'resource'>,
  req: { redirectUri: string; scopes: readonly string[]; state: string; codeVerifier: string | null },
): string {
  const url = new URL(cfg.authorizationUrl);
  // Parameters of our own replace any the operator baked into the URL; others (audience, …) stay.
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', cfg.clientId);
  url.searchParams.set('redirect_uri', req.redirectUri);
  if (req.scopes.length > 0) url.searchParams.set('scope', req.scopes.join(' '));
  else url.searchParams.delete('scope');
  url.searchParams.set('state', req.state);
  if (cfg.resource) url.searchParams.set('resource', cfg.resource);
  if (req.codeVerifier !== null) {
    url.searchParams.set('code_challenge', pkceChallenge(req.codeVerifier));
    url.searchParams.set('code_challenge_method', 'S256');
  }
  return url.toString();
}

export function exchangeCode(
  cfg: OAuthClientConfig,
  req: { code: string; redirectUri: string; codeVerifier: string | null },
  opts: RequestOptions = {},
): Promise<TokenSet> {
  const params = new URLSearchParams({ grant_type: 'authorization_code', code: req.code, redirect_uri: req.redirectUri });
  if (req.codeVerifier !== null) params.set('code_verifier', req.codeVerifier);
  return tokenRequest(cfg, params, opts);
}

export function refreshTokens(cfg: OAuthClientConfig, refreshToken: string, opts: RequestOptions = {}): Promise<TokenSet> {
  return tokenRequest(cfg, new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }), opts);
}

/** RFC 7009. A no-op without a revocation endpoint; 200 means revoked (or already invalid). */
export async function revokeToken(
  cfg: OAuthClientConfig,
  token: string,
  hint: 'refresh_token' | 'access_token',
  opts: RequestOptions = {},
): Promise<boolean> {
  if (!cfg.revocationUrl) return false;
  const params = new URLSearchParams({ token, token_type_hint: hint });
  const res = await send(cfg.revocationUrl, { method: 'POST', ...clientAuth(cfg, params) }, opts);
  if (res.status === 200) return true;
  throw errorFromResponse(res, 'revocation');
}

/** The account behind a token, from the userinfo endpoint: `sub` (or `id`) and `email` (or `name`). */
export async function fetchUserinfo(url: string, accessToken: string, opts: RequestOptions = {}): Promise<AccountIdentity> {
  const res = await send(url, { method: 'GET', headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' } }, opts);
  if (res.status !== 200) throw errorFromResponse(res, 'userinfo');
  const body = res.json;
  if (!isObject(body)) throw new OAuthError('invalid_response', 'the userinfo response is not a JSON object', { status: res.status });
  const pick = (...keys: string[]): string | null => {
    for (const k of keys) {
      const v = body[k];
      if (typeof v === 'string' && v !== '') return v.slice(0, 320);
      if (typeof v === 'number') return String(v);
    }
    return null;
  };
  return { accountId: pick('sub', 'id', 'user_id'), accountName: pick('email', 'name', 'preferred_username', 'login') };
}

// --- internals ------------------------------------------------------------------------------

interface RawResponse {
  status: number;
  json: unknown;
}

/** RFC 6749 §2.3.1: client id and secret are form-encoded before Basic encoding. */
const formEncode = (s: string): string =>
  encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');

function clientAuth(cfg: OAuthClientConfig, params: URLSearchParams): { headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  switch (cfg.authMethod) {
    case 'client_secret_basic':
      headers.authorization = `Basic ${Buffer.from(`${formEncode(cfg.clientId)}:${formEncode(cfg.clientSecret ?? '')}`).toString('base64')}`;
      break;
    case 'client_secret_post':
      params.set('client_id', cfg.clientId);
      params.set('client_secret', cfg.clientSecret ?? '');
      break;
    case 'none':
      params.set('client_id', cfg.clientId);
      break;
  }
  return { headers, body: params.toString() };
}

async function tokenRequest(cfg: OAuthClientConfig, params: URLSearchParams, opts: RequestOptions): Promise<TokenSet> {
  if (cfg.resource) params.set('resource', cfg.resource);
  const res = await send(cfg.tokenUrl, { method: 'POST', ...clientAuth(cfg, params) }, opts);
  const body = res.json;
  // Some providers answer errors with 200 and an `error` member.
  if (res.status !== 200 || (isObject(body) && typeof body.error === 'string')) throw errorFromResponse(res, 'token');
  if (!isObject(body) || typeof body.access_token !== 'string' || body.access_token === '') {
    throw new OAuthError('invalid_response', 'the token response has no access_token', { status: res.status });
  }
  const expiresIn = Number(body.expires_in);
  return {
    accessToken: body.access_token,
    refreshToken: typeof body.refresh_token === 'string' && body.refresh_token !== '' ? body.refresh_token : null,
    expiresIn: body.expires_in !== undefined && body.expires_in !== null && Number.isFinite(expiresIn) && expiresIn >= 0 ? expiresIn : null,
    // Some providers separate scopes with commas; RFC 6749 says spaces.
    scope: typeof body.scope === 'string' ? [...new Set(body.scope.split(/[\s,]+/).filter(Boolean))] : null,
    tokenType: typeof body.token_type === 'string' ? body.token_type : 'Bearer',
  };
}

function errorFromResponse(res: RawResponse, what: string): OAuthError {
  const body = res.json;
  if (isObject(body) && typeof body.error === 'string') {
    const description = typeof body.error_description === 'string' ? body.error_description.slice(0, 300) : undefined;
    return new OAuthError('oauth_error', `the ${what} endpoint answered ${body.error}${description ? `: ${description}` : ''}`, {
      error: body.error.slice(0, 100),
      description,
      status: res.status,
    });
  }
  return new OAuthError('http_error', `the ${what} endpoint answered HTTP ${res.status}`, { status: res.status });
}

async function send(url: string, init: RequestInit, opts: RequestOptions): Promise<RawResponse> {
  const doFetch = opts.fetch ?? fetch;
  const timeoutMs = opts.timeoutMs ?? OAUTH_REQUEST_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  let res: Response;
  let text: string;
  try {
    res = await doFetch(url, { ...init, redirect: 'error', signal });
    text = await readCapped(res);
  } catch (err) {
    if (signal.aborted) throw new OAuthError('timeout', `${new URL(url).host} did not answer within ${timeoutMs} ms`);
    if (err instanceof OAuthError) throw err;
    throw new OAuthError('network', `${new URL(url).host} could not be reached: ${(err as Error).message}`);
  }
  let json: unknown = undefined;
  const type = res.headers.get('content-type') ?? '';
  if (type.includes('application/x-www-form-urlencoded')) json = Object.fromEntries(new URLSearchParams(text));
  else if (text !== '') {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  return { status: res.status, json };
}

async function readCapped(res: Response): Promise<string> {
  if (!res.body) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await res.body.cancel().catch(() => undefined);
      throw new OAuthError('invalid_response', `the response is larger than ${MAX_RESPONSE_BYTES} bytes`, { status: res.status });
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks).toString('utf8');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
