// A real OpenID Connect identity provider (node-oidc-provider) on loopback, standing in for a
// company's Okta / Entra ID / Keycloak in the SSO tests (issue 29). Accounts are email addresses
// (sign in as `ann@corp.test`). Its signing key is generated here, so a test can make the provider
// answer with an ID token whose claims are wrong in one way (another audience, expired) yet still
// signed by the provider's real key: what the relying party must refuse is the claim, not the
// signature.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSign, generateKeyPairSync, randomBytes, type JsonWebKey } from 'node:crypto';

interface OidcProvider {
  callback(): http.RequestListener;
}
const OIDC_PROVIDER_MODULE: string = 'oidc-provider';

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Changes the claims of the next ID token the token endpoint answers (re-signed with the provider's key). */
  tamperNextIdToken(edit: (claims: Record<string, unknown>) => Record<string, unknown>): void;
  /** ID tokens the token endpoint answered, as sent. */
  idTokens: string[];
  stop(): Promise<void>;
}

const b64url = (v: Buffer | string) => Buffer.from(v).toString('base64url');

export async function startOidcIdp(redirectUri: string): Promise<TestIdp> {
  const { default: Provider } = (await import(/* @vite-ignore */ OIDC_PROVIDER_MODULE)) as {
    default: new (issuer: string, config: Record<string, unknown>) => OidcProvider;
  };
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = randomBytes(6).toString('hex');
  const jwk = { ...(privateKey.export({ format: 'jwk' }) as JsonWebKey), kid, use: 'sig', alg: 'RS256' };

  let handler: http.RequestListener = (_req, res) => res.end();
  let tamper: ((claims: Record<string, unknown>) => Record<string, unknown>) | null = null;
  const idTokens: string[] = [];
  const server = http.createServer((req, res) => {
    if (req.method === 'POST' && (req.url ?? '').split('?')[0] === '/token') captureIdToken(res);
    handler(req, res);
  });

  /** Reads the token response as it leaves; with a tamper pending, swaps its ID token for the edited one. */
  function captureIdToken(res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    const write = res.write.bind(res);
    const end = res.end.bind(res);
    res.write = ((chunk: unknown) => {
      chunks.push(Buffer.from(chunk as Buffer));
      return true;
    }) as typeof res.write;
    res.end = ((chunk?: unknown) => {
      if (chunk && typeof chunk !== 'function') chunks.push(Buffer.from(chunk as Buffer));
      let body = Buffer.concat(chunks).toString('utf8');
      try {
        const json = JSON.parse(body) as { id_token?: string };
        if (json.id_token) {
          if (tamper) {
            json.id_token = resign(json.id_token, tamper);
            tamper = null;
            body = JSON.stringify(json);
            res.setHeader('content-length', Buffer.byteLength(body));
          }
          idTokens.push(json.id_token);
        }
      } catch {
        // not JSON: pass it on untouched
      }
      write(body);
      return end();
    }) as typeof res.end;
  }

  function resign(token: string, edit: (claims: Record<string, unknown>) => Record<string, unknown>): string {
    const [header, payload] = token.split('.') as [string, string];
    const claims = edit(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>);
    const input = `${header}.${b64url(JSON.stringify(claims))}`;
    const signature = createSign('RSA-SHA256').update(input).sign(privateKey);
    return `${input}.${b64url(signature)}`;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'gateway-sso';
  const clientSecret = 'idp-secret-' + randomBytes(12).toString('hex');
  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }],
    jwks: { keys: [jwk] },
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({ sub: `sub-${id}`, email: id, email_verified: true, name: id.split('@')[0]!.replace(/^./, (c) => c.toUpperCase()) }),
    }),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    scopes: ['openid', 'profile', 'email'],
    // The ID token carries the claims itself (no userinfo round trip needed).
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    ttl: { AccessToken: 60, AuthorizationCode: 60, IdToken: 60, Grant: 600, Interaction: 600, Session: 600 },
    cookies: { keys: [randomBytes(16).toString('hex')] },
  });
  handler = provider.callback();
  return {
    issuer,
    clientId,
    clientSecret,
    idTokens,
    tamperNextIdToken: (edit) => void (tamper = edit),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
