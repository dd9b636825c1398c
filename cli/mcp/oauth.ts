// The CLI as an OAuth 2.1 public client of the gateway (spec "Authentication" 4): discovery
// (RFC 9728 → RFC 8414), dynamic registration (RFC 7591), authorization code + PKCE S256 through a
// one-shot loopback redirect server, token exchange, and refresh with rotation. The protocol steps
// are the MCP SDK's client helpers.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  discoverOAuthServerInfo,
  exchangeAuthorization,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/client';
import type { AuthorizationServerMetadata, OAuthTokens } from '@modelcontextprotocol/client';
import { normalizeBaseUrl, readCredentials, writeCredentials, type StoredCredentials } from './credentials.ts';

export const CLIENT_NAME = 'gateway CLI';
export const MCP_SCOPE = 'mcp';
const LOGIN_TIMEOUT_MS = 5 * 60_000;
/** Refresh this long before the access token's expiry. */
const EXPIRY_MARGIN_MS = 30_000;

export const mcpUrlOf = (base: string) => `${normalizeBaseUrl(base)}/mcp`;

interface Discovered {
  authorizationServerUrl: string;
  metadata: AuthorizationServerMetadata;
}

export async function discover(base: string): Promise<Discovered> {
  const info = await discoverOAuthServerInfo(mcpUrlOf(base));
  if (!info.authorizationServerMetadata) throw new Error(`no OAuth authorization server metadata found for ${base}`);
  return { authorizationServerUrl: info.authorizationServerUrl, metadata: info.authorizationServerMetadata };
}

const expiresAt = (t: OAuthTokens): string | undefined => (t.expires_in ? new Date(Date.now() + t.expires_in * 1000).toISOString() : undefined);

interface AuthorizationResponse {
  code: string;
  iss?: string;
}

interface Callback {
  redirectUri: string;
  /**
   * Resolves with the authorization code once the browser comes back with the right state, and the
   * issuer the authorization server named (RFC 9207: checked against its metadata before the code
   * is redeemed, so a code from another server is never sent to this one).
   */
  code(state: string): Promise<AuthorizationResponse>;
  close(): void;
}

/** The one-shot loopback server the authorization server redirects the browser to. */
async function listenForCallback(preferredPort: number | undefined): Promise<Callback> {
  let settle: { resolve: (response: AuthorizationResponse) => void; reject: (err: Error) => void; state: string } | undefined;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback' || !settle) {
      res.writeHead(404).end();
      return;
    }
    const page = (status: number, text: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(`<!doctype html><meta charset="utf-8"><title>gateway CLI</title><p>${text}</p>`);
    };
    if (url.searchParams.get('state') !== settle.state) {
      page(400, 'This sign-in does not belong to the running <code>gateway mcp login</code>.');
      return;
    }
    const error = url.searchParams.get('error');
    const code = url.searchParams.get('code');
    if (error || !code) {
      page(400, 'Sign-in was not completed. You can close this tab.');
      settle.reject(new Error(`authorization failed: ${error ?? 'no code'}${url.searchParams.get('error_description') ? ` (${url.searchParams.get('error_description')})` : ''}`));
    } else {
      page(200, 'Signed in. You can close this tab and return to the terminal.');
      settle.resolve({ code, iss: url.searchParams.get('iss') ?? undefined });
    }
    settle = undefined;
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  try {
    await listen(preferredPort ?? 0);
  } catch {
    await listen(0);
  }
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}/callback`,
    code: (state) =>
      new Promise<AuthorizationResponse>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('timed out waiting for the browser sign-in')), LOGIN_TIMEOUT_MS);
        settle = {
          state,
          resolve: (c) => (clearTimeout(timer), resolve(c)),
          reject: (e) => (clearTimeout(timer), reject(e)),
        };
      }),
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

function openBrowser(url: string): void {
  try {
    const child = spawn('xdg-open', [url], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined); // no xdg-open: the URL on stderr is enough
    child.unref();
  } catch {
    /* ignore */
  }
}

export interface LoginOptions {
  url: string;
  file: string;
  /** Try `xdg-open`. */
  browser: boolean;
  /** Register a new client even when the file has one for this gateway. */
  newClient: boolean;
  log: (line: string) => void;
}

/** `gateway mcp login`: the whole flow, ending with the credentials file written (0600). */
export async function login(opts: LoginOptions): Promise<StoredCredentials> {
  const base = normalizeBaseUrl(opts.url);
  const { authorizationServerUrl, metadata } = await discover(base);
  const previous = opts.newClient ? null : await readCredentials(opts.file).catch(() => null);
  const reusable = previous && previous.url === base && previous.redirect_uri ? previous : null;
  const callback = await listenForCallback(reusable ? Number(new URL(reusable.redirect_uri!).port) : undefined);
  try {
    let clientId = reusable && reusable.redirect_uri === callback.redirectUri ? reusable.client_id : undefined;
    if (!clientId) {
      const registered = await registerClient(authorizationServerUrl, {
        metadata,
        clientMetadata: {
          client_name: CLIENT_NAME,
          software_id: 'agent-gateway-cli',
          redirect_uris: [callback.redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        },
      });
      clientId = registered.client_id;
    }
    const state = randomBytes(16).toString('base64url');
    const resource = new URL(mcpUrlOf(base));
    const { authorizationUrl, codeVerifier } = await startAuthorization(authorizationServerUrl, {
      metadata,
      clientInformation: { client_id: clientId },
      redirectUrl: callback.redirectUri,
      scope: MCP_SCOPE,
      state,
      resource,
    });
    opts.log(`Open this URL in a browser to sign in and choose the agent:\n\n  ${authorizationUrl.href}\n`);
    if (opts.browser) openBrowser(authorizationUrl.href);
    const { code, iss } = await callback.code(state);
    const tokens = await exchangeAuthorization(authorizationServerUrl, {
      metadata,
      clientInformation: { client_id: clientId },
      authorizationCode: code,
      iss,
      codeVerifier,
      redirectUri: callback.redirectUri,
      resource,
    });
    const creds: StoredCredentials = {
      url: base,
      client_id: clientId,
      redirect_uri: callback.redirectUri,
      access_token: tokens.access_token,
      ...(tokens.refresh_token ? { refresh_token: tokens.refresh_token } : {}),
      ...(expiresAt(tokens) ? { expires_at: expiresAt(tokens) } : {}),
    };
    await writeCredentials(opts.file, creds);
    return creds;
  } finally {
    callback.close();
  }
}

/**
 * The stored OAuth credentials in use: the access token, refreshed (single-flight, rotation
 * stored) shortly before it expires or after a 401.
 */
export class OAuthSession {
  private creds: StoredCredentials;
  private refreshing: Promise<string> | null = null;
  private readonly file: string;

  constructor(file: string, creds: StoredCredentials) {
    this.file = file;
    this.creds = creds;
  }

  get url(): string {
    return this.creds.url;
  }

  private expired(): boolean {
    return this.creds.expires_at !== undefined && Date.parse(this.creds.expires_at) - EXPIRY_MARGIN_MS <= Date.now();
  }

  async token(): Promise<string> {
    if (this.refreshing) return this.refreshing;
    if (!this.expired()) return this.creds.access_token;
    return this.refresh();
  }

  /** After a 401 for `sent`: a newer token, or null when there is none to get. */
  async renew(sent: string): Promise<string | null> {
    if (this.refreshing) return this.refreshing.catch(() => null);
    if (this.creds.access_token !== sent) return this.creds.access_token;
    return this.refresh().catch(() => null);
  }

  private refresh(): Promise<string> {
    this.refreshing ??= this.doRefresh().finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async doRefresh(): Promise<string> {
    // Another process (a second shim) may have rotated the pair already: a rotated refresh token
    // must never be presented again, or the server revokes the whole chain.
    const onDisk = await readCredentials(this.file).catch(() => null);
    if (onDisk && onDisk.url === this.creds.url && onDisk.refresh_token !== this.creds.refresh_token) {
      this.creds = onDisk;
      if (!this.expired()) return this.creds.access_token;
    }
    if (!this.creds.refresh_token) throw new Error('the access token expired and there is no refresh token: run `gateway mcp login`');
    const { authorizationServerUrl, metadata } = await discover(this.creds.url);
    const tokens = await refreshAuthorization(authorizationServerUrl, {
      metadata,
      clientInformation: { client_id: this.creds.client_id },
      refreshToken: this.creds.refresh_token,
      resource: new URL(mcpUrlOf(this.creds.url)),
    });
    const { expires_at: _old, ...rest } = this.creds;
    const at = expiresAt(tokens);
    this.creds = { ...rest, access_token: tokens.access_token, refresh_token: tokens.refresh_token ?? this.creds.refresh_token, ...(at ? { expires_at: at } : {}) };
    await writeCredentials(this.file, this.creds);
    return this.creds.access_token;
  }
}
