// The one MCP server of /mcp, built per request by the SDK's serving entry (endpoint.ts) for the
// principal the bearer token names, for every revision: one registry (tools.ts GATEWAY_TOOLS), one
// `tools/call` dispatcher. The SDK's low-level `Server` is used because the gateway answers every
// tool failure with its error envelope (McpServer would answer argument errors in plain text),
// shows gateway_approve_self per principal yet refuses it with `forbidden` when hidden, and may
// answer a call with a task of the tasks extension (SEP-2663), which the SDK does not implement.
import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type AuthInfo,
  type CallToolResult,
  type ClientCapabilities,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import pkg from '../../package.json' with { type: 'json' };
import type { AgentPrincipal } from '../auth/principal.ts';
import { AppError, forbidden, unauthenticated } from '../errors.ts';
import type { AgentEventHub } from '../events/agent-events.ts';
import { decodeState, type ElicitationState } from './approval-elicitation.ts';
import { answerCall, invalidParams, resumeAfterElicitation, type CallerCapabilities } from './call-answer.ts';
import { progressTokenOf, relayProgress } from './progress.ts';
import { passCancelThrough } from './cancel.ts';
import type { CallCancels } from '../events/call-cancels.ts';
import { cancelTask, readTask } from './tasks.ts';
import { CALL_TOOLS, invokeTool, listedTool, toolError, visibleTools } from './tool-invoke.ts';
import { SELF_APPROVE_OFF, TOOL_NAMES, type ToolContext } from './tools.ts';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
export const SERVER_INFO = { name: 'agent-action-gateway', title: 'Agent Action Gateway', version: pkg.version };

export const INSTRUCTIONS = [
  'The Agent Action Gateway acts on third-party APIs for you: it holds the credentials and checks your permissions.',
  'Find actions with gateway_search, run them with gateway_call (gateway_read for read-only actions).',
  'A call your permissions do not cover returns status "pending_approval": a person (or an ancestor agent with gateway_approve) decides;',
  'when auto_call_on_approve is true it then runs by itself, otherwise resume it with gateway_call {approval_id}.',
  'gateway_auth tells you who you are and which connections your user has.',
].join(' ');

/** Who calls, handed from the bearer check to the server through the SDK's pass-through `authInfo`. */
export interface McpCaller {
  principal: AgentPrincipal;
  tools: ToolContext;
}

export const authInfoFor = (token: string, caller: McpCaller): AuthInfo => ({
  token,
  clientId: caller.principal.credentialId,
  scopes: caller.principal.via === 'oauth' ? ['mcp'] : [],
  extra: { caller },
});

export function callerOf(authInfo: AuthInfo | undefined): McpCaller {
  const caller = authInfo?.extra?.caller as McpCaller | undefined;
  if (!caller) throw unauthenticated();
  return caller;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The capabilities a 2026-07-28 request declared in its `_meta` (none on the 2025 revisions). */
function capabilitiesOf(ctx: ServerContext): ClientCapabilities {
  // The SDK lifts the envelope keys out of `_meta` as they came (its type names none of them).
  const declared = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY];
  return isRecord(declared) ? (declared as ClientCapabilities) : {};
}

function callerCapabilities(ctx: ServerContext): CallerCapabilities {
  const caps = capabilitiesOf(ctx);
  return { tasks: isRecord(caps.extensions?.[TASKS_EXTENSION]), urlElicitation: isRecord(caps.elicitation?.url) };
}

/** The task methods need the extension declared on the request itself. */
function requireTasks(ctx: ServerContext): void {
  if (!callerCapabilities(ctx).tasks) {
    throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } }, `${ctx.mcpReq.method} needs the ${TASKS_EXTENSION} extension in _meta ${CLIENT_CAPABILITIES_META_KEY}`);
  }
}

/**
 * A handler's failure as the protocol error it is: a service refusal outside a tool (e.g.
 * tasks/cancel of someone else's call) is invalid params; anything unexpected is logged and
 * answered as an internal error, without its message.
 */
function protocolErrors<A extends unknown[], R>(ctx: ToolContext, handler: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await handler(...args);
    } catch (err) {
      if (err instanceof ProtocolError) throw err;
      if (err instanceof AppError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: ${err.message}`, { code: err.code });
      ctx.logger.error({ err, request_id: ctx.requestId }, 'MCP request failed');
      throw new ProtocolError(ProtocolErrorCode.InternalError, 'Internal error');
    }
  };
}

const taskParams = z.looseObject({ taskId: z.string({ error: 'taskId must be a string' }) });
const anyResult = z.looseObject({});

export interface GatewayServerOptions {
  caller: McpCaller;
  selfApprove: boolean;
  /** 2026-07-28: the tasks extension and the approval elicitation are served. */
  modern: boolean;
  events: AgentEventHub;
  /** An agent's `notifications/cancelled` of a call in flight, passed on to its send (cancel.ts). */
  cancels: Pick<CallCancels, 'hold' | 'cancel'>;
}

export function createGatewayServer(opts: GatewayServerOptions): Server {
  const { caller, selfApprove, modern, events, cancels } = opts;
  const { principal: p, tools: ctx } = caller;
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: true }, logging: {}, ...(modern ? { extensions: { [TASKS_EXTENSION]: {} } } : {}) },
    instructions: INSTRUCTIONS,
    // The state echoed after the approval elicitation names a call of this caller: anything else is
    // refused before the handler runs (the SDK answers -32602). Not a secret, and never trusted:
    // every use re-reads the call with the caller's own authority.
    requestState: {
      verify(raw: string): ElicitationState {
        const state = decodeState(raw);
        if (!state || state.agent_id !== p.identityId) throw new Error('requestState is not one this server issued for this agent');
        return state;
      },
    },
  });

  server.setRequestHandler('tools/list', () => ({ tools: visibleTools(selfApprove).map((t) => listedTool(t, modern)) }));

  // A task or input-required answer passes the SDK's tools/call seam untouched (2026-07-28 results
  // other than `complete`); its type names only the complete result.
  server.setRequestHandler('tools/call', protocolErrors(ctx, async (request, sctx): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params;
    const tool = visibleTools(selfApprove).find((t) => t.name === name);
    if (!tool) {
      if (name === TOOL_NAMES.approveSelf) return toolError(forbidden(SELF_APPROVE_OFF));
      throw invalidParams(`tool ${name} not found`);
    }
    const caps = callerCapabilities(sctx);
    const state = sctx.mcpReq.requestState<ElicitationState>();
    const inputResponses = sctx.mcpReq.inputResponses;
    if (state !== undefined || inputResponses !== undefined) {
      if (!CALL_TOOLS.has(tool.name)) throw invalidParams(`${tool.name} does not ask for input: requestState and inputResponses do not go with it`);
      if (state === undefined) throw invalidParams('inputResponses come with the requestState they answer');
      if (sctx.mcpReq.droppedInputResponseKeys?.length) throw invalidParams(`inputResponses.${sctx.mcpReq.droppedInputResponseKeys.join(', ')} is not an elicitation result`);
      return (await resumeAfterElicitation(state, inputResponses, p, ctx, caps, { events, signal: sctx.mcpReq.signal })) as CallToolResult;
    }
    // A call of a long upstream tool: its progress, to a caller that asked for it (progress.ts).
    const progressToken = CALL_TOOLS.has(tool.name) && ctx.requestId ? progressTokenOf(sctx.mcpReq._meta) : undefined;
    const stopRelay =
      progressToken !== undefined && ctx.requestId
        ? await relayProgress(events, { agentId: p.identityId, requestId: ctx.requestId, progressToken }, (n) => sctx.mcpReq.notify(n), ctx.logger)
        : async () => undefined;
    // The agent may cancel it while the upstream tool runs. On the 2025 revisions the answer still
    // goes out (the POST must end): the SDK client ignores an answer to a request it cancelled.
    const stopCancel = CALL_TOOLS.has(tool.name) && ctx.requestId ? await passCancelThrough(cancels, { agentId: p.identityId, rpcId: sctx.mcpReq.id, requestId: ctx.requestId, closed: modern ? sctx.mcpReq.signal : undefined }) : () => undefined;
    try {
      return (await answerCall(tool, await invokeTool(tool, args ?? {}, p, ctx), p, ctx, caps)) as CallToolResult;
    } finally {
      stopCancel();
      await stopRelay();
    }
  }));

  if (modern) {
    server.setRequestHandler('tasks/get', { params: taskParams, result: anyResult }, protocolErrors(ctx, async ({ taskId }, sctx) => {
      requireTasks(sctx);
      const task = await readTask(ctx.services, p, taskId);
      if (!task) throw invalidParams('no such task');
      return { ...task };
    }));
    server.setRequestHandler('tasks/cancel', { params: taskParams, result: anyResult }, protocolErrors(ctx, async ({ taskId }, sctx) => {
      requireTasks(sctx);
      if (!(await cancelTask(ctx.services, p, taskId))) throw invalidParams('no such task');
      return {};
    }));
    server.setRequestHandler('tasks/update', { params: taskParams, result: anyResult }, (_params, sctx) => {
      requireTasks(sctx);
      // The gateway's tasks wait for a person on the approval page, never for client input.
      throw invalidParams('this task is not waiting for input: a person decides on the approval page');
    });
  }
  return server;
}
