// `/mcp`: the MCP Streamable HTTP transport (spec "MCP transport"), stateless so any replica can
// answer any request. POST: a fresh McpServer + transport per request, for the principal the bearer
// token names. GET: a Server-Sent Events channel for notifications about the caller's approvals,
// fed by PostgreSQL LISTEN/NOTIFY (events.ts). No MCP session lives in memory, so DELETE has
// nothing to end.
import type { IncomingMessage } from 'node:http';
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { CallToolRequestSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { hostAllowed, originAllowed } from '../../core/http/host-policy.ts';
import pkg from '../../package.json' with { type: 'json' };
import { readAlongOf } from '../auth/read-along.ts';
import type { AgentPrincipal } from '../auth/principal.ts';
import type { Config } from '../config.ts';
import { AppError, forbidden, toEnvelope, unauthenticated } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Services } from '../services.ts';
import { guardJsonRpc } from './jsonrpc-guard.ts';
import { findJsonProblem, MAX_JSON_DEPTH } from '../../core/text/storable.ts';
import { createAgentEventHub, TOOLS_LIST_CHANGED, type AgentEvent, type AgentEventHub } from '../events/agent-events.ts';
import { createStreamGuard } from '../auth/stream-guard.ts';
import { invokeTool, registerGatewayTools, SELF_APPROVE_OFF, TOOL_NAMES, toolCallLookupAlong, toolError, type ToolContext } from './tools.ts';
import { speaksStatelessRevision } from './revision-2026.ts';
import { MCP_SCOPE } from '../oauth/bindings.ts';
import { createStatelessHandler } from './stateless.ts';

export const MCP_PATH = '/mcp';
export const MCP_BODY_LIMIT = '1mb';
export const SSE_KEEPALIVE_MS = 15_000;

const INSTRUCTIONS = [
  'The Agent Action Gateway acts on third-party APIs for you: it holds the credentials and checks your permissions.',
  'Find actions with gateway_search, run them with gateway_call (gateway_read for read-only actions).',
  'A call your permissions do not cover returns status "pending_approval": a person (or an ancestor agent with gateway_approve) decides;',
  'when auto_call_on_approve is true it then runs by itself, otherwise resume it with gateway_call {approval_id}.',
  'gateway_auth tells you who you are and which connections your user has.',
].join(' ');

export interface McpEndpointDeps {
  services: Pick<Services, 'auth' | 'calls' | 'approvals' | 'registry' | 'identities' | 'connections' | 'oauth'>;
  /** The database the agent event hub LISTENs on (one dedicated connection). */
  connectionUri: string;
  config: Pick<Config, 'publicUrl' | 'hostPolicy'>;
  logger: Logger;
  /** Defaults to one LISTEN connection on `connectionUri`. */
  events?: AgentEventHub;
}

type AuthedRequest = Request & { auth?: AuthInfo };

/** The JSON-RPC notification a GET /mcp stream carries for one approval transition. */
export function eventNotification(event: AgentEvent) {
  // The tool list changed (self-approval turned on or off): the notification MCP names for it.
  if (event.type === TOOLS_LIST_CHANGED) return { jsonrpc: '2.0' as const, method: 'notifications/tools/list_changed' };
  return { jsonrpc: '2.0' as const, method: 'notifications/message', params: { level: 'info', logger: 'gateway', data: event } };
}

export function protectedResourceMetadataUrl(publicUrl: string): string {
  return `${publicUrl}/.well-known/oauth-protected-resource`;
}

/** A new MCP server for one request and one principal (tools vary with the self-approval flag). */
export function createGatewayMcpServer(ctx: ToolContext, opts: { selfApprove: boolean }): McpServer {
  const server = new McpServer({ name: 'agent-action-gateway', title: 'Agent Action Gateway', version: pkg.version }, { capabilities: { logging: {} }, instructions: INSTRUCTIONS });
  const tools = registerGatewayTools(server, ctx, opts);
  // The SDK validates arguments itself and answers a mismatch with a plain-text error; the gateway
  // answers every tool failure with its error envelope, so it dispatches tools/call itself.
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools.get(request.params.name);
    if (tool) return invokeTool(tool, request.params.arguments, extra, ctx);
    if (request.params.name === TOOL_NAMES.approveSelf) return toolError(forbidden(SELF_APPROVE_OFF));
    throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
  });
  return server;
}

export function mcpRoutes(deps: McpEndpointDeps): Router {
  const { services, config, logger } = deps;
  const events = deps.events ?? createAgentEventHub({ connectionUri: deps.connectionUri, logger });
  const guard = createStreamGuard({ connectionUri: deps.connectionUri, logger, auth: services.auth });
  // RFC 6750 §3.1: no error code when no token came; `invalid_token` when one was rejected. The
  // scope a client should ask for, as MCP 2025-11-25 recommends (its scope selection strategy).
  const challenge = `Bearer resource_metadata="${protectedResourceMetadataUrl(config.publicUrl)}", scope="${MCP_SCOPE}"`;
  const rejectedToken = (err: AppError) => `Bearer error="invalid_token", error_description="${err.message.replace(/["\\]/g, "'")}", resource_metadata="${protectedResourceMetadataUrl(config.publicUrl)}", scope="${MCP_SCOPE}"`;
  const stateless = createStatelessHandler({ instructions: INSTRUCTIONS, events, guard, keepAliveMs: SSE_KEEPALIVE_MS });
  const router = Router();

  // DNS-rebinding protection (MCP transport spec): the Host must be one this gateway is reached by
  // (PUBLIC_URL, ALLOWED_HOSTS; any loopback name when PUBLIC_URL is on loopback), and a browser's
  // Origin must be allowed too (ALLOWED_ORIGINS). Checked before anything else, preflights included.
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
  const authenticate = async (req: Request, res: Response, next: NextFunction) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
    try {
      if (!m) throw unauthenticated('a bearer token is required: an OAuth access token or an agent key');
      // A call's instance lookup is read with its agent key (one statement less per call).
      const { principal: p, along } = await services.auth.authenticate(m[1]!, { session: false, agentKey: true, oauth: true }, toolCallLookupAlong(req.body));
      if (p.type !== 'agent') throw unauthenticated('an agent credential is required');
      req.principal = p;
      req.along = along;
      (req as AuthedRequest).auth = {
        token: m[1]!,
        clientId: p.credentialId,
        scopes: p.via === 'oauth' ? ['mcp'] : [],
        extra: { principal: p },
      };
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'unauthenticated') throw err;
      res.setHeader('WWW-Authenticate', m ? rejectedToken(err) : challenge);
      res.status(401).json(toEnvelope(err, req.id));
      return;
    }
    next();
  };

  // Parsed before authenticating, as /v1 is: the call a message makes reads its service with the key.
  router.post(MCP_PATH, express.json({ limit: MCP_BODY_LIMIT }), authenticate, async (req, res) => {
    // Hostile nesting is refused before the SDK's schemas walk it (they recurse).
    if (findJsonProblem(req.body)?.problem === 'too_deep') {
      res.status(400).json({ jsonrpc: '2.0', error: { code: ErrorCode.InvalidRequest, message: `Invalid Request: the message is nested more than ${MAX_JSON_DEPTH} levels deep` }, id: null });
      return;
    }
    const p = req.principal as AgentPrincipal;
    const ctx: ToolContext = { services, config, logger: req.log, requestId: req.id, along: readAlongOf(req) };
    // The 2026-07-28 revision (no initialize, per-request _meta) is answered beside the SDK.
    if (speaksStatelessRevision(req.body, req.get('mcp-protocol-version'))) {
      await stateless(req, res, p, (req as AuthedRequest).auth!.token, ctx);
      return;
    }
    const refused = guardJsonRpc(req.body, req.get('mcp-protocol-version'));
    if (refused) {
      res.status(refused.status).json(refused.body);
      return;
    }
    const server = createGatewayMcpServer(ctx, { selfApprove: await services.oauth.selfApproveEnabled(p) });
    // Stateless: no session id, one transport per request, plain JSON replies.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req as IncomingMessage & { auth?: AuthInfo }, res, req.body);
  });

  router.get(MCP_PATH, authenticate, async (req, res) => {
    if (!(req.get('accept') ?? '').includes('text/event-stream')) {
      res.status(406).json(toEnvelope(new AppError('invalid_request', 'GET /mcp is a Server-Sent Events stream: send Accept: text/event-stream'), req.id));
      return;
    }
    const p = req.principal as AgentPrincipal;
    // Whatever ends the stream (client gone, listener lost) undoes the subscription and the timer.
    const cleanup: Array<() => void> = [];
    let closed = false;
    const end = () => {
      closed = true;
      for (const undo of cleanup.splice(0)) undo();
      if (!res.writableEnded) res.end();
    };
    res.on('close', end);
    let unsubscribe: () => void;
    try {
      unsubscribe = await events.subscribe(
        p.identityId,
        (event) => res.write(`event: message\ndata: ${JSON.stringify(eventNotification(event))}\n\n`),
        end,
      );
    } catch (err) {
      req.log.error({ err }, 'could not listen for agent events');
      throw new AppError('unavailable', 'the notification stream is not available right now');
    }
    if (closed) {
      unsubscribe();
      return;
    }
    cleanup.push(unsubscribe);
    // Revoking the agent, its key or its OAuth grant ends the stream (on every replica).
    try {
      cleanup.push(await guard.watch((req as AuthedRequest).auth!.token, { session: false, agentKey: true, oauth: true }, end));
    } catch (err) {
      end();
      req.log.error({ err }, 'could not watch the stream credential');
      throw new AppError('unavailable', 'the notification stream is not available right now');
    }
    if (closed) return;
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    res.write('retry: 5000\n: connected\n\n');
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), SSE_KEEPALIVE_MS);
    cleanup.push(() => clearInterval(keepAlive));
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
      res.status(400).json({ jsonrpc: '2.0', error: { code: ErrorCode.ParseError, message: 'Parse error: the body is not valid JSON' }, id: null });
      return;
    }
    if (type === 'entity.too.large') {
      res.status(413).json({ jsonrpc: '2.0', error: { code: ErrorCode.InvalidRequest, message: `the request body is larger than ${MCP_BODY_LIMIT}` }, id: null });
      return;
    }
    next(err);
  });

  return router;
}
