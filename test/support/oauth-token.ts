// An MCP client's OAuth access token, the way a real client gets one: dynamic registration, PKCE,
// sign-in and consent through the gateway's pages (optionally binding an existing agent).
import { createHash, randomBytes } from 'node:crypto';
import type { TestGateway } from './gateway.ts';
import { Browser, pageOf, redirectOf, signInAndConsent } from './oauth-browser.ts';

export async function oauthClientToken(gw: Pick<TestGateway, 'url' | 'request'>, who: { email: string; password: string }, clientName: string, existingAgentId?: string) {
  const redirectUri = 'http://127.0.0.1:9/callback';
  const reg = await gw.request('POST', '/oauth/register', { body: { redirect_uris: [redirectUri], client_name: clientName } });
  if (reg.status !== 201) throw new Error(`register: ${reg.status} ${reg.text}`);
  const clientId = reg.body.client_id as string;
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const params = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 'st', code_challenge: challenge, code_challenge_method: 'S256' });
  const browser = new Browser(gw.url);
  let back: URL;
  if (existingAgentId) {
    const signIn = pageOf(await browser.follow(`${gw.url}/oauth/authorize?${params}`));
    const consent = pageOf(await browser.submit(signIn, { email: who.email, password: who.password }));
    back = redirectOf(await browser.submit(consent, { decision: 'allow', agent: existingAgentId }));
  } else {
    back = await signInAndConsent(browser, `${gw.url}/oauth/authorize?${params}`, who, clientName);
  }
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code: ${back.href}`);
  const res = await fetch(`${gw.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier }).toString(),
  });
  const body = (await res.json()) as { access_token: string; refresh_token: string };
  if (res.status !== 200) throw new Error(`token: ${res.status} ${JSON.stringify(body)}`);
  return { ...body, clientId };
}
