// OAuth to an upstream MCP server, the way the MCP Authorization specification describes it, with
// the official SDK's helpers: the server's 401 names its protected-resource metadata (RFC 9728),
// which names the authorization server (RFC 8414 metadata), where the gateway registers itself by
// dynamic client registration (RFC 7591) unless an admin configured a client. What comes out is an
// OAuth app of the connections module: the person then authorizes (code + PKCE, with the RFC 8707
// resource) through the gateway's connection flow, and the tokens are kept and refreshed as a
// connection's. Every request here is time-bound; nothing here holds a token.
import { createHash } from 'node:crypto';
import {
  checkResourceAllowed,
  discoverOAuthServerInfo,
  extractWWWAuthenticateParams,
  LATEST_PROTOCOL_VERSION,
  registerClient,
  resourceUrlFromServerUrl,
  type AuthorizationServerMetadata,
  type FetchLike,
} from '@modelcontextprotocol/client';
import type { UpstreamAppInput } from '../connections/service.ts';
import { AppError } from '../errors.ts';

/** What the gateway learnt about the upstream's authorization, before any client is chosen. */
export interface UpstreamAuthorizationServer {
  /** RFC 8707 resource indicator: the metadata's `resource`, else the server URL without fragment. */
  resource: string;
  authorizationUrl: string;
  tokenUrl: string;
  revocationUrl: string | null;
  registrationUrl: string | null;
  /** From the 401's `scope`, else the resource metadata's `scopes_supported`. */
  scopes: string[];
  authMethods: string[];
  issuer: string;
  metadata: AuthorizationServerMetadata;
}

export interface ConfiguredClient {
  clientId: string;
  clientSecret: string | null;
}

/** The connections provider of an upstream resource: one OAuth app per resource per org. */
export const upstreamProvider = (serverUrl: string): string =>
  `mcp-${createHash('sha256').update(resourceUrlFromServerUrl(serverUrl).href).digest('hex').slice(0, 24)}`;

const failed = (host: string, message: string, details: Record<string, unknown> = {}) =>
  new AppError('upstream_error', `OAuth discovery at ${host} failed: ${message}`, { oauth: true, ...details });

function timedFetch(timeoutMs: number): FetchLike {
  return (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) });
}

/**
 * Asks the server unauthenticated (an `initialize`) and follows its 401 to the authorization
 * server. A server that does not answer 401 needs no OAuth, and says so.
 */
export async function discoverUpstreamAuthorization(serverUrl: URL, timeoutMs: number): Promise<UpstreamAuthorizationServer> {
  const fetchFn = timedFetch(timeoutMs);
  const host = serverUrl.host;
  let challenge: ReturnType<typeof extractWWWAuthenticateParams>;
  try {
    const res = await fetchFn(serverUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'agent-action-gateway', version: '1' } },
      }),
    });
    await res.body?.cancel().catch(() => undefined);
    if (res.status !== 401) {
      throw new AppError('invalid_request', `the MCP server at ${host} answered HTTP ${res.status} without credentials, not 401: it does not ask for OAuth (connect it with auth "none", "bearer" or "header")`, {
        field: 'auth',
        http_status: res.status,
      });
    }
    challenge = extractWWWAuthenticateParams(res);
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError('upstream_unreachable', `the MCP server at ${host} could not be reached: ${(err as Error).message}`);
  }

  let info: Awaited<ReturnType<typeof discoverOAuthServerInfo>>;
  try {
    info = await discoverOAuthServerInfo(serverUrl, { fetchFn, ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}) });
  } catch (err) {
    throw failed(host, (err as Error).message);
  }
  const metadata = info.authorizationServerMetadata;
  if (!metadata) throw failed(host, `no authorization server metadata at ${info.authorizationServerUrl}`);
  const resource = info.resourceMetadata?.resource ?? resourceUrlFromServerUrl(serverUrl).href;
  // The metadata must describe this server (or a prefix of it): a token for another resource is refused.
  if (!checkResourceAllowed({ requestedResource: serverUrl, configuredResource: resource })) {
    throw failed(host, `its protected-resource metadata is for ${resource}, not ${serverUrl.href}`);
  }
  const scopes = challenge.scope?.split(' ').filter(Boolean) ?? info.resourceMetadata?.scopes_supported ?? [];
  return {
    resource,
    authorizationUrl: metadata.authorization_endpoint,
    tokenUrl: metadata.token_endpoint,
    // OpenID metadata does not type it, RFC 8414 metadata does.
    revocationUrl: 'revocation_endpoint' in metadata && typeof metadata.revocation_endpoint === 'string' ? metadata.revocation_endpoint : null,
    registrationUrl: metadata.registration_endpoint ?? null,
    scopes: [...new Set(scopes)],
    authMethods: metadata.token_endpoint_auth_methods_supported ?? ['client_secret_basic'],
    issuer: String(info.authorizationServerUrl),
    metadata,
  };
}

/**
 * The OAuth app for the upstream: a configured client as given, else one registered now by
 * dynamic client registration (a public client with PKCE when the server allows it).
 */
export async function upstreamClient(
  server: UpstreamAuthorizationServer,
  opts: { configured: ConfiguredClient | null; redirectUri: string; clientName: string; timeoutMs: number; host: string },
): Promise<UpstreamAppInput> {
  const endpoints = { authorizationUrl: server.authorizationUrl, tokenUrl: server.tokenUrl, revocationUrl: server.revocationUrl, resource: server.resource };
  if (opts.configured) {
    const method = opts.configured.clientSecret === null ? 'none' : server.authMethods.includes('client_secret_post') && !server.authMethods.includes('client_secret_basic') ? 'client_secret_post' : 'client_secret_basic';
    return { ...endpoints, clientId: opts.configured.clientId, clientSecret: opts.configured.clientSecret, authMethod: method };
  }
  if (!server.registrationUrl) {
    throw new AppError('invalid_request', `the authorization server of ${opts.host} offers no dynamic client registration: give auth.client_id (and client_secret) of a client registered there`, {
      field: 'auth',
    });
  }
  const publicClient = server.authMethods.includes('none');
  let registered: Awaited<ReturnType<typeof registerClient>>;
  try {
    registered = await registerClient(server.issuer, {
      metadata: server.metadata,
      clientMetadata: {
        client_name: opts.clientName,
        redirect_uris: [opts.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: publicClient ? 'none' : 'client_secret_basic',
        ...(server.scopes.length > 0 ? { scope: server.scopes.join(' ') } : {}),
      },
      fetchFn: timedFetch(opts.timeoutMs),
    });
  } catch (err) {
    throw failed(opts.host, `dynamic client registration was refused: ${(err as Error).message}`);
  }
  const secret = registered.client_secret ?? null;
  const method = secret === null ? 'none' : registered.token_endpoint_auth_method === 'client_secret_post' ? 'client_secret_post' : 'client_secret_basic';
  return { ...endpoints, clientId: registered.client_id, clientSecret: secret, authMethod: method };
}
