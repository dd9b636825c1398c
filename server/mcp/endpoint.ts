// `/mcp`: the MCP Streamable HTTP transport (spec "MCP transport") on the official SDK v2, stateless
// so any replica answers any request. Every revision is served by one server (gateway-server.ts),
// built per request for the principal the bearer token names: 2026-07-28 through the SDK's serving
// entry (`createMcpHandler`, which validates the per-request envelope and headers), the 2025
// revisions through the SDK's streamable HTTP transport in stateless JSON mode (legacy-leg.ts).
// Besides: GET, a Server-Sent Events channel of the caller's approval events for the 2025
// revisions, and 2026-07-28's `subscriptions/listen` with the same events (listen.ts).
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { classifyInboundRequest, createMcpHandler, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { hostAllowed, originAllowed } from '../../core/http/host-policy.ts';
import type { AgentPrincipal } from '../auth/principal.ts';
import type { Config } from '../config.ts';
import { AppError, forbidden, toEnvelope, unauthenticated } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Services } from '../services.ts';
import { findJsonProblem, MAX_JSON_DEPTH } from '../../core/text/storable.ts';
import { createAgentEventHub, streamNotice, type AgentEvent, type AgentEventHub } from '../events/agent-events.ts';
import { createStreamGuard } from '../auth/stream-guard.ts';
import { MCP_SCOPE } from '../oauth/bindings.ts';
import { toolCallLookupAlong } from './tools.ts';
import { authInfoFor, callerOf, createGatewayServer, type McpCaller } from './gateway-server.ts';
import { openEventStream } from './event-stream.ts';
import { progressTokenOf } from './progress.ts';
import { cancelledRequestId } from './cancel.ts';
import { serveLegacy } from './legacy-leg.ts';
import { onlyResponses, refuseLegacy, refuseMalformed, refuseModern } from './message-guard.ts';
import { serveListen } from './listen.ts';
import { sendWebResponse, toWebRequest } from './web-bridge.ts';

export const MCP_PATH = '/mcp';
export const MCP_BODY_LIMIT = '1mb';
export const SSE_KEEPALIVE_MS = 15_000;

export interface McpEndpointDeps {
  services: Pick<Services, 'auth' | 'calls' | 'approvals' | 'registry' | 'identities' | 'connections' | 'oauth' | 'chains' | 'callCancels'>;
  /** The database the agent event hub LISTENs on (one dedicated connection). */
  connectionUri: string;
  config: Pick<Config, 'publicUrl' | 'hostPolicy'>;
  logger: Logger;
  /** Defaults to one LISTEN connection on `connectionUri`. */
  events?: AgentEventHub;
}

type McpRequest = Request & { mcp?: { caller: McpCaller; token: string } };

/** The JSON-RPC notification a GET /mcp stream carries for one approval transition. */
export function eventNotification(event: AgentEvent) {
  const notice = streamNotice(event);
  // The tool list changed (self-approval turned on or off): the notification MCP names for it.
  if (notice === 'tools_list_changed') return { jsonrpc: '2.0' as const, method: 'notifications/tools/list_changed' };
  if (notice === null) return null;
  return { jsonrpc: '2.0' as const, method: 'notifications/message', params: { level: 'info', logger: 'gateway', data: event } };
}

export function protectedResourceMetadataUrl(publicUrl: string): string {
  return `${publicUrl}/.well-known/oauth-protected-resource`;
}

export function mcpRoutes(deps: McpEndpointDeps): Router {
  const { services, config, logger } = deps;
  const events = deps.events ?? createAgentEventHub({ connectionUri: deps.connectionUri, logger });
  const guard = createStreamGuard({ connectionUri: deps.connectionUri, logger, auth: services.auth, chains: services.chains });
  const stream = { events, guard, keepAliveMs: SSE_KEEPALIVE_MS };
  // RFC 6750 §3.1: no error code when no token came; `invalid_token` when one was rejected. The
  // scope a client should ask for, as MCP 2025-11-25 recommends (its scope selection strategy).
  const challenge = `Bearer resource_metadata="${protectedResourceMetadataUrl(config.publicUrl)}", scope="${MCP_SCOPE}"`;
  const rejectedToken = (err: AppError) => `Bearer error="invalid_token", error_description="${err.message.replace(/["\\]/g, "'")}", resource_metadata="${protectedResourceMetadataUrl(config.publicUrl)}", scope="${MCP_SCOPE}"`;

  /** The server for one request: its tools vary with the caller's self-approval flag. */
  const serverFor = async (caller: McpCaller, modern: boolean) =>
    createGatewayServer({ caller, modern, events, cancels: services.callCancels, selfApprove: await services.oauth.selfApproveEnabled(caller.principal) });
  const modernOptions = { legacy: 'reject' as const, onerror: (err: Error) => logger.debug({ err: err.message }, 'MCP request refused') };
  // The SDK warns on the console that a JSON answer drops notifications sent before it: here that
  // is the design (a request that asks for progress is streamed, below), so the note goes to the
  // debug log instead of a bare line among the JSON log's on every start.
  const modern = withConsoleWarnings((line) => logger.debug({ sdk: line }, 'MCP SDK note'), () =>
    createMcpHandler(({ authInfo }) => serverFor(callerOf(authInfo), true), { ...modernOptions, responseMode: 'json' }),
  );
  // A request that asks for progress is answered as a stream: progress goes before the result.
  const modernStreaming = createMcpHandler(({ authInfo }) => serverFor(callerOf(authInfo), true), { ...modernOptions, responseMode: 'sse' });
  const router = Router();

  // DNS-rebinding protection (MCP transport spec): the Host must be one this gateway is reached by
  // (PUBLIC_URL, ALLOWED_HOSTS; any loopback name when PUBLIC_URL is on loopback), and a browser's
  // Origin must be allowed too (ALLOWED_ORIGINS, exact origins). Checked before anything else,
  // preflights included. (The SDK's helpers allow host names on any port, and answer otherwise.)
  router.use(MCP_PATH, (req, res, next) => {
    if (!hostAllowed(config.hostPolicy, req.get('host'))) {
      res.status(403).json(toEnvelope(forbidden(`this gateway does not answer /mcp for the host ${JSON.stringify(req.get('host') ?? '')}: add it to ALLOWED_HOSTS if it is yours`), req.id));
      return;
    }
    const origin = req.get('origin');
    if (!originAllowed(config.hostPolicy, origin)) {
      res.status(403).json(toEnvelope(forbidden(`requests from the origin ${JSON.stringify(origin)} are not allowed: add it to ALLOWED_ORIGINS if it is a client you trust`), req.id));
      return;
    }
    next();
  });

  // Browser-based MCP clients from allowed origins: bearer tokens only (never cookies) at /mcp.
  router.use(MCP_PATH, (req, res, next) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Expose-Headers', 'WWW-Authenticate, Mcp-Protocol-Version');
    if (req.method !== 'OPTIONS') return next();
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST');
    // Mcp-Method and Mcp-Name: the headers the 2026-07-28 revision sends on every request.
    res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID');
    res.setHeader('Access-Control-Max-Age', '3600');
    res.status(204).end();
  });

  /** OAuth access tokens and agent keys only (never a dashboard session); 401 starts discovery. */
  const authenticate = async (req: McpRequest, res: Response, next: NextFunction) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
    try {
      if (!m) throw unauthenticated('a bearer token is required: an OAuth access token or an agent key');
      // A call's instance lookup is read with its agent key (one statement less per call).
      const { principal: p, along } = await services.auth.authenticate(m[1]!, { session: false, agentKey: true, oauth: true }, toolCallLookupAlong(req.body));
      if (p.type !== 'agent') throw unauthenticated('an agent credential is required');
      req.principal = p;
      req.along = along;
      req.mcp = { token: m[1]!, caller: { principal: p, tools: { services, config, logger: req.log, requestId: req.id, along } } };
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'unauthenticated') throw err;
      res.setHeader('WWW-Authenticate', m ? rejectedToken(err) : challenge);
      res.status(401).json(toEnvelope(err, req.id));
      return;
    }
    next();
  };

  // Parsed before authenticating, as /v1 is: the call a message makes reads its service with the key.
  router.post(MCP_PATH, express.json({ limit: MCP_BODY_LIMIT }), authenticate, async (req: McpRequest, res) => {
    // Hostile nesting is refused before the SDK's schemas walk it (they recurse).
    if (findJsonProblem(req.body)?.problem === 'too_deep') {
      res.status(400).json({ jsonrpc: '2.0', error: { code: ProtocolErrorCode.InvalidRequest, message: `Invalid Request: the message is nested more than ${MAX_JSON_DEPTH} levels deep` }, id: null });
      return;
    }
    const { caller, token } = req.mcp!;
    const authInfo = authInfoFor(token, caller);
    const version = req.get('mcp-protocol-version');
    const malformed = refuseMalformed(req.body, version);
    if (malformed) {
      res.status(malformed.status).json(malformed.body);
      return;
    }
    if (onlyResponses(req.body)) {
      res.status(202).end();
      return;
    }
    // A cancellation names a request this stateless endpoint may not hold: announced to every
    // replica (cancel.ts); the SDK then accepts the notification as usual.
    const cancelled = cancelledRequestId(req.body);
    if (cancelled !== undefined) await services.callCancels.cancel({ kind: 'request', agentId: caller.principal.identityId, rpcId: cancelled });
    // The SDK's own routing decision, made once: which revision the message speaks.
    // A request that asks for progress (and takes a stream) is answered as SSE, so progress can go before the result.
    const asksProgress = progressTokenOf((req.body as { params?: { _meta?: unknown } } | undefined)?.params?._meta) !== undefined && (req.get('accept') ?? '').includes('text/event-stream');
    const route = classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader: version, mcpMethodHeader: req.get('mcp-method'), mcpNameHeader: req.get('mcp-name'), body: req.body });
    const refused = route.kind === 'legacy' ? refuseLegacy(req.body, version) : refuseModern(req.body);
    if (refused) {
      res.status(refused.status).json(refused.body);
      return;
    }
    if (route.kind === 'legacy') {
      await sendWebResponse(await serveLegacy(toWebRequest(req, res), req.body, authInfo, () => serverFor(caller, false), { stream: asksProgress }), res);
      return;
    }
    if (route.kind === 'modern' && route.messageKind === 'request' && route.message.method === 'subscriptions/listen') {
      await serveListen(stream, route.message, caller.principal as AgentPrincipal, token, res, req.log);
      return;
    }
    await sendWebResponse(await (asksProgress ? modernStreaming : modern).fetch(toWebRequest(req, res), { authInfo, parsedBody: req.body }), res);
  });

  router.get(MCP_PATH, authenticate, async (req: McpRequest, res) => {
    if (!(req.get('accept') ?? '').includes('text/event-stream')) {
      res.status(406).json(toEnvelope(new AppError('invalid_request', 'GET /mcp is a Server-Sent Events stream: send Accept: text/event-stream'), req.id));
      return;
    }
    const { caller, token } = req.mcp!;
    await openEventStream(res, { ...stream, agentId: caller.principal.identityId, principal: caller.principal, token, logger: req.log, toMessage: eventNotification });
  });

  router.all(MCP_PATH, (req, res) => {
    res.setHeader('Allow', 'GET, POST');
    const message = req.method === 'DELETE' ? 'this MCP endpoint is stateless: there is no session to end' : `${req.method} is not supported on /mcp`;
    res.status(405).json(toEnvelope(new AppError('invalid_request', message), req.id));
  });

  // A body that is not JSON is a protocol error: answered the JSON-RPC way.
  router.use(MCP_PATH, (err: unknown, req: Request, res: Response, next: NextFunction) => {
    const type = (err as { type?: unknown } | null)?.type;
    if (type === 'entity.parse.failed') {
      res.status(400).json({ jsonrpc: '2.0', error: { code: ProtocolErrorCode.ParseError, message: 'Parse error: the body is not valid JSON' }, id: null });
      return;
    }
    if (type === 'entity.too.large') {
      res.status(413).json({ jsonrpc: '2.0', error: { code: ProtocolErrorCode.InvalidRequest, message: `the request body is larger than ${MCP_BODY_LIMIT}` }, id: null });
      return;
    }
    next(err);
  });

  return router;
}

/** Runs `make` (synchronous) with console.warn sent to `to`, then puts console.warn back. */
function withConsoleWarnings<T>(to: (line: string) => void, make: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => to(args.map(String).join(' '));
  try {
    return make();
  } finally {
    console.warn = warn;
  }
}
