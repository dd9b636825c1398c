// The Express application: request context, JSON bodies, health, REST /v1, the dashboard.
import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { type Express, type RequestHandler, type Router } from 'express';
import { agentAuthority } from './auth/authority.ts';
import { authenticate } from './auth/middleware.ts';
import { loginRoutes, logoutRoutes } from './auth/routes.ts';
import { onlyItsPaths, operationsOf, type OperationSpec } from './http/api-router.ts';
import { refuseUnstorableInput } from './http/input-guard.ts';
import { createStreamGuard } from './auth/stream-guard.ts';
import { API_VERSION, documentRoutes } from './http/openapi/routes.ts';
import { buildOpenApiDocument } from './http/openapi/document.ts';
import { referencePageRoutes } from './http/openapi/reference-page.ts';
import { OAUTH_OPERATIONS } from './oauth/openapi.ts';
import { callLookupAlong, callRoutes } from './calls/routes.ts';
import { approvalAlong } from './approvals/request-approval.ts';
import { orgRoutes } from './orgs/routes.ts';
import { downloadRoutes } from './downloads/routes.ts';
import { errorHandler, notFoundHandler } from './http/error-handler.ts';
import { requestContext } from './http/request-context.ts';
import { requestSpan } from './telemetry/http-span.ts';
import type { Logger } from './logger.ts';
import type { ReadinessReport } from './readiness.ts';
import { diagnosticsRoutes } from './routes/diagnostics.ts';
import { healthRoutes } from './routes/health.ts';
import { identityRoutes } from './identities/routes.ts';
import { registryRoutes } from './registry/routes.ts';
import { mcpServerRoutes } from './mcp-servers/routes.ts';
import { vaultRoutes } from './vault/routes.ts';
import { connectionCallbackRoutes, connectionRoutes } from './connections/routes.ts';
import { webhookRoutes } from './webhooks/routes.ts';
import { auditRoutes } from './audit/routes.ts';
import { oauthRoutes } from './oauth/routes.ts';
import { mcpRoutes } from './mcp/endpoint.ts';
import { eventRoutes } from './events/routes.ts';
import { createUserEventHub } from './events/hub.ts';
import { approvalRoutes, blastRadiusRoutes } from './approvals/routes.ts';
import { approvalNoticeRoutes, integrationRoutes, notificationRoutes } from './notifications/routes.ts';
import { invitationAcceptRoutes, teamRoutes } from './teams/routes.ts';
import { ssoAdminRoutes, ssoPublicRoutes } from './sso/routes.ts';
import type { ServiceDeps, Services } from './services.ts';

export const WEB_BUILD_DIR = path.resolve(import.meta.dirname, '..', 'web', 'build');
export const BODY_LIMIT = '1mb';
/** Vendors' published OpenAPI documents are large (GitHub's: 13 MB as JSON); only the import takes them. */
export const IMPORT_BODY_LIMIT = '20mb';
const IMPORT_PATH = '/templates/import';

export interface AppDeps {
  logger: Logger;
  /** Absent in worker-only processes, which serve health checks and nothing else. */
  api?: { deps: ServiceDeps; services: Services };
  readiness: () => Promise<ReadinessReport>;
  /** Worker-only processes answer health checks and nothing else. */
  role: 'api' | 'worker' | 'all';
  webDir?: string;
  /** Tracing is on (server/telemetry/tracing.ts): each request gets its server span. */
  tracing?: boolean;
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  // First: the request's span and call scope are what its access line and handlers log under.
  app.use(requestSpan(deps.tracing ?? false));
  app.use(requestContext(deps.logger));
  app.use(healthRoutes(deps.readiness));
  if (deps.role !== 'worker' && deps.api) {
    const { services, deps: sd } = deps.api;
    // The OAuth authorization server (discovery, sign-in/consent pages, provider endpoints) lives
    // at the root, before /v1 and the dashboard's fallback.
    app.use(services.oauthServer.routes());
    // MCP (Streamable HTTP) at /mcp: its own bearer authentication and 401 challenge.
    app.use(mcpRoutes({ services, connectionUri: sd.pool.configuration.connectionUri, config: sd.config, logger: deps.logger }));
    const api = v1Api(services, sd, sd.config.publicUrl);
    app.use(referencePageRoutes());
    app.use('/v1', api.router);
    mountDashboard(app, deps.webDir ?? WEB_BUILD_DIR);
  }
  app.use(notFoundHandler());
  app.use(errorHandler());
  return app;
}

/**
 * The REST API under /v1. Every route is defined through `apiRouter` (server/http/api-router.ts),
 * so this one list both mounts the handlers and yields the OpenAPI document served at
 * /v1/openapi.json (plus the authorization server's JSON endpoints, which oidc-provider serves).
 */
export function v1Api(services: Services, sd: ServiceDeps, publicUrl: string) {
  const v1 = express.Router();
  const operations: OperationSpec[] = [];
  // Each group of routes is entered only by requests under its own paths (onlyItsPaths).
  const add = (router: Router): RequestHandler => {
    operations.push(...operationsOf(router).map((op) => ({ ...op, path: `/v1${op.path}` })));
    return onlyItsPaths(router);
  };
  const jsonBody = express.json({ limit: BODY_LIMIT, strict: false });
  const importBody = express.json({ limit: IMPORT_BODY_LIMIT, strict: false });
  v1.use((req, res, next) => (req.path === IMPORT_PATH ? importBody : jsonBody)(req, res, next));
  v1.use(refuseUnstorableInput());
  v1.use(add(documentRoutes(() => document)));
  v1.use(add(loginRoutes(services.auth, publicUrl)));
  // Public: an invitation link's single-use token is the credential.
  v1.use(add(invitationAcceptRoutes(services.teams, publicUrl)));
  v1.use(add(ssoPublicRoutes(services.sso, publicUrl)));
  // Public: the provider redirects the user's browser here; the single-use state authenticates it.
  v1.use(add(connectionCallbackRoutes(services.connections)));
  // Public: Slack's interactions (verified by Slack's signature) and email decision links (by theirs).
  v1.use(add(integrationRoutes(services.notices.slack, services.notices.email)));
  // What a request reads next rides along its authentication (one statement less): a call's
  // instance lookup, the approval an /approvals/{id} request names.
  v1.use(authenticate(services.auth, { session: true, agentKey: true, oauth: true }, { publicUrl, alongside: (req) => callLookupAlong(req) ?? approvalAlong(req) }));
  // Agents: least privilege, one table for every route (server/auth/authority.ts).
  v1.use(agentAuthority(services.chains));
  v1.use(add(logoutRoutes(services.auth, publicUrl)));
  v1.use(add(identityRoutes(services.identities)));
  v1.use(add(connectionRoutes(services.connections)));
  v1.use(add(registryRoutes(services.registry)));
  v1.use(add(mcpServerRoutes(services.mcpServers)));
  v1.use(add(vaultRoutes(services.vault)));
  v1.use(add(webhookRoutes(services.webhooks)));
  v1.use(add(auditRoutes(services.audit)));
  v1.use(add(oauthRoutes(services.oauth)));
  v1.use(add(orgRoutes(services.orgs)));
  v1.use(add(teamRoutes(services.teams)));
  v1.use(add(ssoAdminRoutes(services.sso)));
  v1.use(add(downloadRoutes(services.downloads)));
  v1.use(
    add(
      eventRoutes({
        events: services.events,
        hub: createUserEventHub({ connectionUri: sd.pool.configuration.connectionUri, logger: sd.logger }),
        guard: createStreamGuard({ connectionUri: sd.pool.configuration.connectionUri, logger: sd.logger, auth: services.auth, chains: services.chains }),
      }),
    ),
  );
  v1.use(
    add(callRoutes(services.calls, (p, ref) => services.connections.refOf(p, ref))),
  );
  v1.use(add(approvalRoutes(services.approvals)));
  v1.use(add(blastRadiusRoutes(services.blastRadius)));
  v1.use(add(notificationRoutes(services.notices.service)));
  v1.use(add(approvalNoticeRoutes(services.notices.service)));
  v1.use(add(diagnosticsRoutes(services.diagnostics)));
  v1.use(notFoundHandler());
  const document = buildOpenApiDocument([...operations, ...OAUTH_OPERATIONS], { publicUrl, version: API_VERSION });
  return { router: v1, operations, document };
}

/** The document without a running gateway (npm run gen:api): route factories only close over their services. */
export function openApiDocument(publicUrl = 'http://localhost:8080') {
  const inert: never = new Proxy(() => inert, { get: () => inert }) as never;
  return v1Api(inert, inert, publicUrl).document;
}

/** The SvelteKit build is a static single-page app: unknown paths fall back to its shell. */
function mountDashboard(app: Express, dir: string): void {
  if (!existsSync(path.join(dir, 'index.html'))) {
    app.get('/', (_req, res) => {
      res.status(503).type('text/plain').send('The dashboard is not built yet: run `npm run build`.\n');
    });
    return;
  }
  app.use(express.static(dir, { index: 'index.html', maxAge: '1h', setHeaders: noCacheForHtml }));
  app.get(/^\/(?!v1\/|oauth\/|mcp|\.well-known\/).*/, (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(path.join(dir, 'index.html'));
  });
}

function noCacheForHtml(res: express.Response, file: string): void {
  if (file.endsWith('.html')) res.setHeader('Cache-Control', 'no-cache');
}
