// The MCP revision 2026-07-28 on the wire (SEP-2575 stateless MCP, SEP-2243 HTTP headers, SEP-2322
// result types): no initialize, every request carries its protocol version and client
// capabilities in `_meta`, the HTTP headers mirror the body, and errors have their own codes.
// The SDK (1.32.2) knows 2025-11-25 at most, so this module reads the envelope itself; the
// methods are dispatched by stateless.ts.
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { readMessageShape } from './jsonrpc-shape.ts';

export const STATELESS_REVISION = '2026-07-28';
/** Every revision /mcp speaks, newest first: this one here, the older ones through the SDK. */
export const SUPPORTED_REVISIONS: readonly string[] = [STATELESS_REVISION, ...SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v !== STATELESS_REVISION)];

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The revision's error codes, beside JSON-RPC's own. */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  headerMismatch: -32020,
  missingCapability: -32021,
  unsupportedVersion: -32022,
} as const;

export type RequestId = string | number;

export interface RpcFailure {
  status: number;
  body: { jsonrpc: '2.0'; id: RequestId | null; error: { code: number; message: string; data?: unknown } };
}

export const rpcFailure = (status: number, id: RequestId | null, code: number, message: string, data?: unknown): RpcFailure => ({
  status,
  body: { jsonrpc: '2.0', id, error: { code, message, ...(data !== undefined ? { data } : {}) } },
});

const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const jsonObject = z.record(z.string(), z.unknown());
const clientCapabilities = z.looseObject({
  elicitation: z.looseObject({ form: jsonObject.optional(), url: jsonObject.optional() }).optional(),
  sampling: jsonObject.optional(),
  roots: jsonObject.optional(),
  experimental: z.record(z.string(), jsonObject).optional(),
  extensions: z.record(z.string(), jsonObject).optional(),
});
export type ClientCapabilities = z.infer<typeof clientCapabilities>;

const requestMeta = z.looseObject({
  [META.protocolVersion]: z.string(),
  [META.clientCapabilities]: clientCapabilities,
  [META.clientInfo]: z.looseObject({ name: z.string(), version: z.string() }).optional(),
  [META.logLevel]: z.enum(LOG_LEVELS).optional(),
});

/** One request of this revision, its envelope checked. */
export interface StatelessRequest {
  id: RequestId;
  method: string;
  params: Record<string, unknown>;
  capabilities: ClientCapabilities;
  logLevel: LogLevel | undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Whether a POST speaks this revision: its version header or its `_meta` names it, or it calls a
 * method only this revision has. Anything else goes to the SDK path, as before.
 */
export function speaksStatelessRevision(body: unknown, headerVersion: string | undefined): boolean {
  if (headerVersion?.trim() === STATELESS_REVISION) return true;
  if (!isRecord(body)) return false;
  if (body.method === 'server/discover' || body.method === 'subscriptions/listen') return true;
  const meta = isRecord(body.params) ? body.params._meta : undefined;
  return isRecord(meta) && META.protocolVersion in meta;
}

/** The body param a header mirrors (SEP-2243 `Mcp-Name`), per method. */
const NAME_PARAM: Record<string, string> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

export type Headers = (name: string) => string | undefined;

/**
 * The request, or the error the revision names for what is wrong with it: a malformed message
 * (-32600), `_meta` missing or malformed (-32602), the version header not matching `_meta`
 * (-32020), a version this server does not speak (-32022), `Mcp-Method` / `Mcp-Name` absent or
 * not matching the body (-32020). All are HTTP 400 and keep the request's id.
 * A notification (no id) or a response yields `null`: nothing is answered.
 */
export function readStatelessRequest(body: unknown, header: Headers): StatelessRequest | RpcFailure | null {
  if (Array.isArray(body)) return rpcFailure(400, null, RPC.invalidRequest, `Invalid Request: JSON-RPC batches are not part of MCP ${STATELESS_REVISION}`);
  // The message's shape is read as on the SDK's path (jsonrpc-shape.ts): the same code and id for
  // the same malformed message whichever revision it claims.
  const shape = readMessageShape(body);
  if (shape.kind === 'invalid') return rpcFailure(400, shape.id, shape.code, shape.message);
  // A notification or a response (there are no server requests in this revision to answer, but
  // JSON-RPC never answers a response): nothing is answered, as on the SDK's path.
  if (shape.kind !== 'request') return null;
  const { id, method } = shape;
  const params = ((body as Record<string, unknown>).params ?? {}) as Record<string, unknown>;

  const rawMeta = params._meta;
  if (!isRecord(rawMeta)) return rpcFailure(400, id, RPC.invalidParams, `Invalid params: _meta is required in MCP ${STATELESS_REVISION} (with ${META.protocolVersion} and ${META.clientCapabilities})`);
  const missing = [META.protocolVersion, META.clientCapabilities].filter((k) => !(k in rawMeta));
  if (missing.length > 0) return rpcFailure(400, id, RPC.invalidParams, `Invalid params: missing _meta keys: ${missing.join(', ')}`);
  const meta = requestMeta.safeParse(rawMeta);
  if (!meta.success) {
    const issues = meta.error.issues.map((i) => `_meta.${i.path.join('.')}: ${i.message}`);
    return rpcFailure(400, id, RPC.invalidParams, `Invalid params: ${issues.join('; ')}`);
  }
  const version = meta.data[META.protocolVersion];
  const headerVersion = header('mcp-protocol-version')?.trim();
  if (headerVersion !== version) {
    return rpcFailure(400, id, RPC.headerMismatch, `the MCP-Protocol-Version header (${headerVersion === undefined ? 'absent' : JSON.stringify(headerVersion)}) does not match _meta ${META.protocolVersion} (${JSON.stringify(version)})`);
  }
  // Only this revision is stateless: the older ones negotiate with initialize, on the SDK path.
  if (version !== STATELESS_REVISION) {
    return rpcFailure(400, id, RPC.unsupportedVersion, 'Unsupported protocol version', { supported: [STATELESS_REVISION], requested: version });
  }
  const headerMethod = header('mcp-method')?.trim();
  if (headerMethod !== method) {
    return rpcFailure(400, id, RPC.headerMismatch, `the Mcp-Method header (${headerMethod === undefined ? 'absent' : JSON.stringify(headerMethod)}) does not match the method ${JSON.stringify(method)}`);
  }
  const nameParam = NAME_PARAM[method];
  if (nameParam !== undefined && typeof params[nameParam] === 'string') {
    const headerName = header('mcp-name')?.trim();
    if (headerName !== params[nameParam]) {
      return rpcFailure(400, id, RPC.headerMismatch, `the Mcp-Name header (${headerName === undefined ? 'absent' : JSON.stringify(headerName)}) does not match params.${nameParam}`);
    }
  }
  return { id, method, params, capabilities: meta.data[META.clientCapabilities], logLevel: meta.data[META.logLevel] };
}

/** Whether the client declared an extension on this request (capabilities are per request). */
export const declaresExtension = (c: ClientCapabilities, extension: string): boolean => isRecord(c.extensions?.[extension]);

/** Whether a log message at `level` may be sent to a request that asked for `wanted` (absent: none). */
export function logLevelAllows(wanted: LogLevel | undefined, level: LogLevel): boolean {
  return wanted !== undefined && LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(wanted);
}
