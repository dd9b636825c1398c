// The OAuth sign-in and consent pages in a real browser (Debian Chromium via playwright-core): a
// person types into the form and clicks the buttons, with whatever headers Chromium really sends.
// Two clients nobody here controls the wire of: the MCP SDK's OAuth client, and `gateway mcp login`.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../support/chromium.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { CLI } from '../support/processes.ts';
import { seedUser, type SeededUser } from '../support/seed.ts';
import { until } from '../support/wait.ts';

/** A loopback page the authorization server sends the browser back to (the client's redirect URI). */
async function callbackServer(): Promise<{ url: string; codes: string[]; close(): void }> {
  const codes: string[] = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    const code = u.searchParams.get('code');
    if (code) codes.push(code);
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>back</title><p>back in the client</p>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`, codes, close: () => (server.closeAllConnections(), server.close()) };
}

/** Types into the sign-in form and allows on the consent page, as a person would. */
async function signInAndAllow(page: Page, who: { email: string; password: string }, agentName: string) {
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Connect an application' }).waitFor();
  await page.getByRole('textbox', { name: 'New agent name' }).fill(agentName);
  await page.getByRole('button', { name: 'Allow' }).click();
}

describe('OAuth pages in real Chromium', () => {
  let gw: TestGateway;
  let member: SeededUser;
  let browser: Browser;
  /** Every form POST the browser sent to the gateway, with the Origin it carried. */
  const posts: Request[] = [];

  const newPage = async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.on('request', (r: Request) => {
      if (r.method() === 'POST' && r.url().startsWith(gw.url)) posts.push(r);
    });
    return page;
  };

  beforeAll(async () => {
    [gw, browser] = await Promise.all([startTestGateway({ realPublicUrl: true }), launchChromium()]);
    const orgId = (await gw.as(gw.adminToken)('GET', '/v1/identities/me')).body.org.id;
    member = await seedUser(gw.databaseUrl, { orgId, email: 'chromium-user@example.test' });
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
  });

  it('the MCP SDK client gets an access token after a person signs in and consents in Chromium', async () => {
    const cb = await callbackServer();
    try {
      const provider = new (class implements OAuthClientProvider {
        info: OAuthClientInformationMixed | undefined;
        saved: OAuthTokens | undefined;
        verifier = '';
        authorizationUrl: URL | undefined;
        get redirectUrl() {
          return cb.url;
        }
        get clientMetadata(): OAuthClientMetadata {
          return { client_name: 'Chromium test client', redirect_uris: [cb.url], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
        }
        clientInformation = () => this.info;
        saveClientInformation = (i: OAuthClientInformationMixed) => void (this.info = i);
        tokens = () => this.saved;
        saveTokens = (t: OAuthTokens) => void (this.saved = t);
        redirectToAuthorization = (u: URL) => void (this.authorizationUrl = u);
        saveCodeVerifier = (v: string) => void (this.verifier = v);
        codeVerifier = () => this.verifier;
      })();
      const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { authProvider: provider });
      await expect(new Client({ name: 'chromium-test', version: '1.0.0' }).connect(transport)).rejects.toThrow(UnauthorizedError);

      const page = await newPage();
      await page.goto(provider.authorizationUrl!.href);
      await signInAndAllow(page, member, 'Chromium agent');
      await page.waitForURL((u) => u.href.startsWith(cb.url));
      expect(cb.codes).toHaveLength(1);

      await transport.finishAuth(cb.codes[0]!);
      expect(provider.saved?.access_token).toMatch(/^eyJ/);
      const client = new Client({ name: 'chromium-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { authProvider: provider }));
      const who = (await client.callTool({ name: 'gateway_auth', arguments: { operation: 'whoami' } })).structuredContent as any;
      expect(who).toMatchObject({ authenticated_via: 'oauth', identity: { kind: 'agent', name: 'Chromium agent' } });
      await client.close();
      // What made the old check fail: Chromium sends `Origin: null` from a no-referrer page. The
      // pages now let the browser send its real origin, and the token is what is trusted.
      const formPosts = posts.filter((p) => /\/oauth\/(signin|consent)\//.test(p.url()));
      expect(formPosts.length).toBeGreaterThanOrEqual(2);
      for (const p of formPosts) expect((await p.allHeaders())['origin']).toBe(new URL(gw.url).origin);
      await page.context().close();
    } finally {
      cb.close();
    }
  });

  it('`gateway mcp login` completes with the browser opened by the test, and stores the tokens', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-cli-chromium-'));
    const file = path.join(dir, 'credentials.json');
    const login = spawn(process.execPath, [CLI, 'mcp', 'login', '--url', gw.url, '--no-browser'], {
      env: { PATH: process.env.PATH ?? '', HOME: dir, GATEWAY_CONFIG: file },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    login.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => login.once('exit', (code) => resolve(code)));
    try {
      const authUrl = await until(async () => /(http:\/\/\S+\/oauth\/authorize\?\S+)/.exec(stderr)?.[1], Boolean, 30_000);
      const page = await newPage();
      await page.goto(authUrl!);
      await signInAndAllow(page, member, 'CLI agent in Chromium');
      await page.getByText('Signed in. You can close this tab').waitFor();
      expect(await exited).toBe(0);
      await page.context().close();
    } finally {
      login.kill();
    }
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const creds = JSON.parse(await readFile(file, 'utf8'));
    expect(creds).toMatchObject({ url: gw.url, access_token: expect.stringMatching(/^eyJ/), refresh_token: expect.any(String) });
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${creds.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(200);
  });

  it('a form posted from another site is still refused, whatever the token', async () => {
    const cb = await callbackServer();
    try {
      const reg = await gw.request('POST', '/oauth/register', {
        body: { client_name: 'cross-site check', redirect_uris: [cb.url], token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'] },
      });
      expect(reg.status).toBe(201);
      const q = new URLSearchParams({ client_id: reg.body.client_id, redirect_uri: cb.url, response_type: 'code', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', scope: 'mcp', prompt: 'login' });
      const page = await newPage();
      await page.goto(`${gw.url}/oauth/authorize?${q}`);
      const action = await page.locator('form').getAttribute('action');
      const csrf = await page.locator('input[name=csrf]').inputValue();
      // The same form, with the real token, submitted by a page on another origin (the callback host).
      await page.goto(cb.url);
      await page.setContent(
        `<form method="post" action="${gw.url}${action}"><input name="csrf" value="${csrf}"><input name="email" value="${member.email}"><input name="password" value="${member.password}"><button>go</button></form>`,
      );
      const [answer] = await Promise.all([page.waitForResponse((r) => r.url().startsWith(gw.url) && r.request().method() === 'POST'), page.getByRole('button', { name: 'go' }).click()]);
      expect([400, 403]).toContain(answer.status());
      await expect(page.getByRole('heading', { name: 'Connect an application' }).count()).resolves.toBe(0);
      await page.context().close();
    } finally {
      cb.close();
    }
  });
});
