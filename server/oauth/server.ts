// The authorization server as the Express app sees it: discovery documents, the sign-in and
// consent pages, and the provider itself, all at the root (mounted before /v1 and the dashboard).
// The provider is built on first use (its keys come from the database), once per process.
import express, { Router, type Request } from 'express';
import { interactionRoutes } from './interactions.ts';
import { buildProvider, OAUTH_ROUTES, PROVIDER_PATH, SCOPES_SUPPORTED, type OAuthRuntime, type OAuthServerDeps } from './provider.ts';
import { createConsentBindings, MCP_SCOPE } from './bindings.ts';
import { issuerFor, mcpResourceUrl } from './verify.ts';

export const PROTECTED_RESOURCE_PATHS = ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp'];

export function createOAuthServer(deps: OAuthServerDeps) {
  let building: Promise<OAuthRuntime> | undefined;
  const runtime = (): Promise<OAuthRuntime> =>
    (building ??= buildProvider(deps).catch((err: unknown) => {
      building = undefined; // a failed start (database down) is retried by the next request
      throw err;
    }));
  const publicUrl = deps.config.publicUrl;

  /** RFC 9728: where to get a token for `/mcp` (referenced by the 401s of `/mcp`). */
  const protectedResourceMetadata = () => ({
    resource: mcpResourceUrl(publicUrl),
    authorization_servers: [issuerFor(publicUrl)],
    bearer_methods_supported: ['header'],
    scopes_supported: SCOPES_SUPPORTED,
    resource_name: 'Agent Action Gateway',
  });

  function routes(): Router {
    const router = Router();
    router.options(PROTECTED_RESOURCE_PATHS, (_req, res) => {
      res.set({ 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Methods': 'GET', 'Access-Control-Max-Age': '3600' }).status(204).end();
    });
    router.get(PROTECTED_RESOURCE_PATHS, (_req, res) => {
      res.set({ 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'public, max-age=300' }).json(protectedResourceMetadata());
    });
    router.use(interactionRoutes({ runtime, bindings: createConsentBindings(deps.pool), auth: deps.auth, publicUrl, logger: deps.logger }));
    // MCP clients register with `scope: "mcp"` (from the protected-resource metadata). `mcp` is a
    // resource scope, granted through the resource indicator, not a provider scope: drop it here.
    router.post(OAUTH_ROUTES.registration, express.json({ limit: '64kb' }), (req, _res, next) => {
      const body = req.body as { scope?: unknown } | undefined;
      if (body && typeof body.scope === 'string') {
        const rest = body.scope.split(' ').filter((s) => s && !SCOPES_SUPPORTED.includes(s));
        if (rest.length > 0) body.scope = rest.join(' ');
        else delete body.scope;
      }
      next();
    });
    const publicHost = new URL(publicUrl).host;
    const https = publicUrl.startsWith('https://');
    router.use((req, res, next) => {
      if (!PROVIDER_PATH.test(req.path)) return next();
      if (req.method === 'GET' && req.path === OAUTH_ROUTES.authorization) withMcpScope(req);
      // The metadata's URLs (endpoints, jwks) are built from PUBLIC_URL, never from what the
      // request claims: a foreign Host or X-Forwarded-Host gets the same document. (The flow's own
      // redirects stay on the host the browser is using, so a replica keeps its own flows.)
      if (req.path.startsWith('/.well-known/')) {
        req.headers.host = publicHost;
        delete req.headers['x-forwarded-host'];
        if (https) req.headers['x-forwarded-proto'] = 'https';
        else delete req.headers['x-forwarded-proto'];
        res.setHeader('Cache-Control', 'public, max-age=300');
      }
      runtime().then((rt) => rt.handler(req, res), next);
    });
    return router;
  }

  return { runtime, routes, protectedResourceMetadata };
}

export type OAuthServer = ReturnType<typeof createOAuthServer>;

/**
 * Every authorization is for the MCP resource, and this is not an OpenID provider: the MCP scope
 * is added when the client asked for none (or only for others), so a client that sends no `scope`
 * still gets a usable token, and `openid` is dropped (no ID tokens).
 */
function withMcpScope(req: Request): void {
  const q = req.url.indexOf('?');
  const params = new URLSearchParams(q === -1 ? '' : req.url.slice(q + 1));
  const scopes = params.getAll('scope');
  if (scopes.length > 1) return; // the provider rejects repeated parameters
  const requested = (scopes[0] ?? '').split(' ').filter(Boolean);
  const normalized = [...new Set([...requested.filter((s) => s !== 'openid'), MCP_SCOPE])];
  if (normalized.join(' ') === requested.join(' ')) return;
  params.set('scope', normalized.join(' '));
  req.url = `${q === -1 ? req.url : req.url.slice(0, q)}?${params.toString()}`;
}
