// Runtime `mcp`: each action of the service is a tool on an external MCP server (the template's
// `x-gateway-mcp.url`), called over Streamable HTTP with the official SDK client. A client lives
// for one call only: connect, list tools, call, close. Nothing stays open between calls.
//
// Arguments: the call's params, validated and defaulted against the action's schemas exactly as
// for HTTP, flattened into one object (path/query parameters and top-level body properties).
// The tool is the operation's `x-gateway-tool`, else the action key.
// Credentials: the service's own auth methods (a vault secret as bearer or API-key header, or an
// OAuth connection's token), chosen and resolved by the HTTP executor's `credentialFor`.
//
// Result mapping (the HTTP runtime's shapes):
//   - success: `status_code` 200.
//   - the tool reports `isError`: still a `called` result, with `status_code` 502. The tool ran and
//     said it failed, just as an upstream HTTP API answering 4xx/5xx is a `called` result with that
//     status. The agent gets the tool's own error text, and the execution record shows the failure.
//   - `body`: `structuredContent` when present; else the content list. A single text item becomes
//     its text, JSON-parsed when it parses. No content gives null. Anything else (several items,
//     images, resources) stays the list of content items. Verbose: the raw CallToolResult.
// Errors:
//   - the server cannot be reached (DNS, refused, reset): `upstream_unreachable`.
//   - no answer within the service's `timeout_ms`, else the outbound timeout (30 s by default), for
//     the whole call: `upstream_timeout`.
//   - the server answers the transport with an HTTP error (e.g. 401 for a bad token) or with
//     something that is not MCP: `upstream_error`, with `details.http_status` when there is one.
//   - the agent cancels the request waiting for the call (server/mcp/cancel.ts,
//     server/events/call-cancels.ts): the SDK client aborts the request and tells the server; the
//     tool may already have had effects, so `outcome_unknown` with `details.cancelled_by: "caller"`
//     and `tool_called` (false in the rare case the cancellation came before the tool was called;
//     the call is not sent again either way). Only a call with a request waiting can be cancelled.
//   - the tool is not in the server's tool list, or the server rejects the arguments
//     (JSON-RPC invalid params): `invalid_request`.
//   - the action pins the tool (a connected MCP server's, server/mcp-servers) and the server now
//     describes it differently: `tool_changed`, nothing sent; `details.changed` is the diff.
import { Client, ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode, SdkHttpError, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { buildActionRequest, type BuiltRequest } from '../../../core/execution/request.ts';
import { AppError, invalidParams, invalidRequest } from '../../errors.ts';
import { credentialFor, templateTrusted, type RuntimeHandler, type ToolProgress } from '../execute.ts';
import { assertAddressAllowed } from '../http-client.ts';
import { jsonOutput } from './result.ts';
import { pinDiff, pinHash, pinOf, type UpstreamTool } from '../../../core/mcp-servers/tools.ts';
import type { ToolPinRef } from '../../../core/registry/types.ts';
import { waitAtMost } from '../../../core/async/wait-at-most.ts';

/** The status a tool result that reports `isError` maps to. */
export const TOOL_ERROR_STATUS = 502;
export const CLIENT_INFO = { name: 'agent-action-gateway', version: '0.1.0' };
/** tools/list pages followed before giving up on finding the tool. */
const MAX_TOOL_PAGES = 20;
const MESSAGE_LIMIT = 300;

export const mcpRuntime: RuntimeHandler = async (deps, input) => {
  const { instance, action, request } = input;
  const service = instance.service;
  if (!service.mcp) throw new AppError('internal', `service ${service.key} has runtime mcp but no mcp url`);
  if (request.kind !== 'action' || !action) throw invalidRequest(`${service.key} is an MCP service: call its actions; raw HTTP is not available for it`);
  const built = buildActionRequest(service, action, request.params);
  if (!built.ok) throw invalidParams(built.problems);
  const args = toolArguments(built.request);
  const tool = action.tool ?? action.key;

  const url = new URL(service.mcp.url);
  // A member's own MCP template is held to the outbound address policy like raw HTTP (vetted ones are not).
  if (!templateTrusted(instance.origin)) await assertAddressAllowed(url, deps.outbound.policy);
  const injection = await credentialFor(deps, input.orgId, service, instance.credentials, action, input.userId, { host: url.hostname, origin: instance.origin });
  for (const [k, v] of Object.entries(injection.query)) url.searchParams.set(k, v);

  const started = performance.now();
  const timeoutMs = service.mcp.timeoutMs ?? deps.outbound.timeoutMs;
  // Progress goes to the request that is waiting for this call (none for a call replayed later).
  const to = input.requesterId && input.requestId ? { requesterId: input.requesterId, requestId: input.requestId } : null;
  const onProgress = to && deps.reportProgress ? (p: ToolProgress) => deps.reportProgress!(to, p) : undefined;
  const onCancel = to && deps.onCancel ? (abort: () => void) => deps.onCancel!(to, abort) : undefined;
  const result = await callTool({ url, headers: injection.headers, tool, args, timeoutMs, pin: action.toolPin, onProgress, onCancel });
  return jsonOutput(
    {
      status: result.isError ? TOOL_ERROR_STATUS : 200,
      body: resultBody(result),
      raw: result,
      durationMs: Math.round(performance.now() - started),
    },
    input.verbose,
  );
};

/** Path/query parameters and top-level body properties, as one arguments object. */
function toolArguments(req: BuiltRequest): Record<string, unknown> {
  if (req.body !== undefined && (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body))) {
    throw invalidRequest('MCP tool arguments must be an object: the action body schema must describe an object');
  }
  return { ...(req.body as Record<string, unknown> | undefined), ...req.params };
}

export function resultBody(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const content = result.content;
  if (content.length === 0) return null;
  const only = content[0];
  if (content.length === 1 && only?.type === 'text') {
    try {
      return JSON.parse(only.text) as unknown;
    } catch {
      return only.text;
    }
  }
  return content;
}

interface ToolCall {
  url: URL;
  headers: Record<string, string>;
  tool: string;
  args: Record<string, unknown>;
  timeoutMs: number;
  pin?: ToolPinRef | undefined;
  /** Asks the server for progress (a progressToken) and hands each notification here. */
  onProgress?: ((p: ToolProgress) => Promise<void>) | undefined;
  /** Listens for the agent's cancellation (see ExecutorDeps.onCancel). */
  onCancel?: ((abort: () => void) => Promise<() => void>) | undefined;
}

/** How long a finished call waits for the progress it reported to be sent (a lost one costs nothing). */
const PROGRESS_REPORT_WAIT_MS = 2_000;

/** Why the exchange was stopped before its answer. */
type Stopped = 'timeout' | 'cancelled' | undefined;

async function callTool(call: ToolCall): Promise<CallToolResult> {
  const transport = new StreamableHTTPClientTransport(call.url, {
    requestInit: { headers: { ...call.headers, 'user-agent': `${CLIENT_INFO.name}/${CLIENT_INFO.version}` } },
  });
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  // One deadline for the whole exchange (initialize, tools/list, tools/call); the agent's
  // cancellation stops it the same way (the SDK tells the server of an aborted request).
  const abort = new AbortController();
  let stopped: Stopped;
  const stop = (why: Exclude<Stopped, undefined>, reason: string) => {
    stopped ??= why;
    abort.abort(new Error(reason));
  };
  const timer = setTimeout(() => stop('timeout', `no answer within ${call.timeoutMs} ms`), call.timeoutMs);
  const opts = { signal: abort.signal, timeout: call.timeoutMs };
  // Listening starts with the exchange and is in place before the tool is called.
  const listening = call.onCancel?.(() => stop('cancelled', 'the caller cancelled the call'));
  let toolCalled = false;
  const reporting = new Set<Promise<void>>();
  try {
    await client.connect(transport, opts);
    const listed = await findTool(client, call.tool, opts);
    if (call.pin) assertUnchanged(call.tool, call.pin, listed);
    await listening;
    abort.signal.throwIfAborted();
    const onprogress = call.onProgress;
    toolCalled = true;
    const result = await client.request(
      { method: 'tools/call', params: { name: call.tool, arguments: call.args } },
      onprogress ? { ...opts, onprogress: (p) => void reporting.add(onprogress({ progress: p.progress, total: p.total, message: p.message })) } : opts,
    );
    // The progress reported leaves before the answer (server/mcp/progress.ts waits for it there).
    if (reporting.size > 0) await waitAtMost(Promise.allSettled(reporting), PROGRESS_REPORT_WAIT_MS);
    return result;
  } catch (err) {
    if (stopped === 'cancelled') throw cancelledByCaller(call, toolCalled);
    throw toAppError(err, call, stopped === 'timeout');
  } finally {
    clearTimeout(timer);
    void listening?.then((release) => release());
    await close(client, transport);
  }
}

/** Once the tool was called it may have done part or all of its work before it stopped. */
function cancelledByCaller(call: Pick<ToolCall, 'url' | 'tool'>, toolCalled: boolean): AppError {
  if (!toolCalled) {
    return new AppError('outcome_unknown', `the caller cancelled the call before "${call.tool}" was called on the MCP server ${call.url.host}: the tool did not run`, { cancelled_by: 'caller', tool_called: false });
  }
  return new AppError(
    'outcome_unknown',
    `the caller cancelled the call while the MCP server ${call.url.host} was running "${call.tool}": the server was told to stop, and the tool may already have had effects`,
    { cancelled_by: 'caller', tool_called: true },
  );
}

/** People approved the pinned text: a tool the server now describes differently is not called. */
function assertUnchanged(tool: string, pin: ToolPinRef, listed: UpstreamTool): void {
  const current = pinOf(listed);
  if (pinHash(current) === pin.hash) return;
  const changed = pinDiff(pin, current);
  throw new AppError('tool_changed', `the MCP server changed tool "${tool}" (${Object.keys(changed).join(', ') || 'its pin'}) since it was published: an admin must review and accept it`, {
    tool,
    changed,
  });
}

/** An unknown tool is the caller's (or the template's) mistake, not an upstream failure. */
async function findTool(client: Client, tool: string, opts: { signal: AbortSignal; timeout: number }): Promise<UpstreamTool> {
  if (!client.getServerCapabilities()?.tools) throw invalidRequest(`the MCP server offers no tools (wanted "${tool}")`, { tool });
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    // client.request, not client.listTools: no output-schema validators get cached, so the
    // gateway passes structuredContent through as the server sent it.
    const list = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, opts);
    const found = list.tools.find((t) => t.name === tool);
    if (found) return found as UpstreamTool;
    cursor = list.nextCursor;
    if (!cursor) break;
  }
  throw invalidRequest(`the MCP server has no tool "${tool}"`, { tool });
}

export async function close(client: Client, transport: StreamableHTTPClientTransport): Promise<void> {
  // A server that keeps sessions gets told this one is over; a stateless one has none.
  if (transport.sessionId) {
    await Promise.race([transport.terminateSession().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
  }
  await client.close().catch(() => undefined);
}

function clip(text: string): string {
  return text.length > MESSAGE_LIMIT ? `${text.slice(0, MESSAGE_LIMIT)}…` : text;
}

export function toAppError(err: unknown, call: Pick<ToolCall, 'url' | 'tool' | 'timeoutMs'>, timedOut: boolean): AppError {
  if (err instanceof AppError) return err;
  const host = call.url.host;
  if (timedOut || (err instanceof SdkError && err.code === SdkErrorCode.RequestTimeout)) {
    return new AppError('upstream_timeout', `${host} did not answer within ${call.timeoutMs} ms`);
  }
  if (err instanceof SdkHttpError) {
    const status = err.status > 0 ? err.status : undefined;
    return new AppError(
      'upstream_error',
      status ? `the MCP server ${host} answered HTTP ${status}` : `the MCP server ${host} answered something that is not MCP: ${clip(err.message)}`,
      status ? { http_status: status } : undefined,
    );
  }
  if (err instanceof SdkError && err.code === SdkErrorCode.ConnectionClosed) {
    return new AppError('upstream_unreachable', `the connection to ${host} closed`, { mcp_error: { code: err.code, message: clip(err.message) } });
  }
  if (err instanceof ProtocolError) {
    const details = { mcp_error: { code: err.code, message: clip(err.message) } };
    if (err.code === (ProtocolErrorCode.InvalidParams as number)) return new AppError('invalid_request', `the MCP server rejected the call to "${call.tool}": ${clip(err.message)}`, details);
    return new AppError('upstream_error', `the MCP server ${host} failed the call: ${clip(err.message)}`, details);
  }
  const e = err instanceof Error ? err : new Error(String(err));
  // fetch failures (refused, reset, DNS) are TypeError('fetch failed') whose cause says what happened.
  if (e instanceof TypeError && (e.message === 'fetch failed' || e.cause !== undefined)) {
    return new AppError('upstream_unreachable', `could not reach ${host}: ${clip((e.cause as Error | undefined)?.message ?? e.message)}`);
  }
  // Malformed answers (JSON-RPC or schema parse errors) come from the server.
  return new AppError('upstream_error', `the MCP server ${host} answered something unexpected: ${clip(e.message)}`);
}
