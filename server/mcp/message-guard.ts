// What the SDK answers loosely, checked before it sees a message, with JSON-RPC's own codes and the
// request's id echoed whenever the body has one. On every revision (the same code and id whichever
// one a malformed message claims): batches where the revision has none, and a message that is not
// a well-formed request, notification or response. On the 2025 revisions besides: an unsupported
// MCP-Protocol-Version header, and params that do not fit a method this server serves (the SDK says
// -32603 for some). On 2026-07-28: `inputResponses` that are not an object (the SDK drops them
// silently, which would ask the person again instead of refusing the retry). Pure: no I/O.
import { specTypeSchemas, SUPPORTED_PROTOCOL_VERSIONS, type SpecTypeName } from '@modelcontextprotocol/server';
import { INVALID_PARAMS, INVALID_REQUEST, messageIdOf, readMessageShape, type MessageId } from './jsonrpc-shape.ts';

/** The MCP revisions that allowed JSON-RPC batches (removed in 2025-06-18). */
const BATCHING_REVISIONS = new Set(['2024-11-05', '2025-03-26']);

/** The SDK's schema of each request this server answers on the 2025 revisions. */
const REQUEST_TYPES: Readonly<Record<string, SpecTypeName>> = {
  initialize: 'InitializeRequest',
  ping: 'PingRequest',
  'tools/list': 'ListToolsRequest',
  'tools/call': 'CallToolRequest',
  'logging/setLevel': 'SetLevelRequest',
};

interface RpcError {
  jsonrpc: '2.0';
  id: MessageId;
  error: { code: number; message: string };
}

/** A refusal: the HTTP status and the JSON-RPC error (one per bad member of a batch). */
export interface Refusal {
  status: number;
  body: RpcError | RpcError[];
}

const rpcError = (id: MessageId, code: number, message: string): RpcError => ({ jsonrpc: '2.0', id, error: { code, message } });
const single = (status: number, id: MessageId, code: number, message: string): Refusal => ({ status, body: rpcError(id, code, message) });

/** Refuses the messages `problemOf` finds wrong: a batch for its bad members only (nothing in it runs). */
function refuseEach(body: unknown, problemOf: (message: unknown) => RpcError | null): Refusal | null {
  const errors = (Array.isArray(body) ? body : [body]).map(problemOf).filter((e): e is RpcError => e !== null);
  if (errors.length === 0) return null;
  // Invalid params is a method's own answer (HTTP 200); a malformed message is a bad request.
  const status = errors.every((e) => e.error.code === INVALID_PARAMS) ? 200 : 400;
  return { status, body: Array.isArray(body) ? errors : errors[0]! };
}

/** Batches where the revision has none, and malformed messages: on every revision. */
export function refuseMalformed(body: unknown, protocolVersion: string | undefined): Refusal | null {
  if (Array.isArray(body)) {
    if (body.length === 0) return single(400, null, INVALID_REQUEST, 'Invalid Request: an empty batch');
    if (!BATCHING_REVISIONS.has(protocolVersion ?? '')) {
      return single(400, null, INVALID_REQUEST, `Invalid Request: JSON-RPC batches are not part of MCP protocol version ${protocolVersion ?? 'negotiated by initialize'} (only ${[...BATCHING_REVISIONS].join(', ')})`);
    }
  }
  return refuseEach(body, (message) => {
    const shape = readMessageShape(message);
    return shape.kind === 'invalid' ? rpcError(shape.id, shape.code, shape.message) : null;
  });
}

/**
 * Whether the body holds only responses (well-formed already): JSON-RPC never answers one, and this
 * server sends no request that would wait for it, so it is accepted (202) whatever revision it claims.
 */
export const onlyResponses = (body: unknown): boolean => (Array.isArray(body) ? body : [body]).every((m) => readMessageShape(m).kind === 'response');

/** Why `message` does not fit its method's schema, or null when it does (or the method is not served). */
function paramsProblem(method: string, message: unknown): string | null {
  const type = REQUEST_TYPES[method];
  if (!type) return null;
  const checked = specTypeSchemas[type]['~standard'].validate(message);
  if (checked instanceof Promise || !checked.issues) return null;
  const where = (path: ReadonlyArray<PropertyKey | { key: PropertyKey }> | undefined) =>
    (path ?? []).map((k) => String(typeof k === 'object' ? k.key : k)).filter((k) => k !== 'params').join('.') || '(params)';
  return checked.issues.map((i) => `${where(i.path)}: ${i.message}`).join('; ');
}

/** The 2025 revisions (the message well-formed already): the version header, and each request's params. */
export function refuseLegacy(body: unknown, protocolVersion: string | undefined): Refusal | null {
  if (protocolVersion !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) {
    const first = Array.isArray(body) ? body[0] : body;
    return single(400, messageIdOf(first), INVALID_REQUEST, `Invalid Request: unsupported MCP-Protocol-Version ${JSON.stringify(protocolVersion)} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
  }
  return refuseEach(body, (message) => {
    const shape = readMessageShape(message);
    const problem = shape.kind === 'request' ? paramsProblem(shape.method, message) : null;
    return problem && shape.kind === 'request' ? rpcError(shape.id, INVALID_PARAMS, `Invalid params for ${shape.method}: ${problem}`) : null;
  });
}

/** 2026-07-28: a retry's `inputResponses` must be an object (the answers by input request key). */
export function refuseModern(body: unknown): Refusal | null {
  const shape = readMessageShape(body);
  if (shape.kind !== 'request' || shape.method !== 'tools/call') return null;
  const responses = ((body as { params?: Record<string, unknown> }).params ?? {}).inputResponses;
  if (responses === undefined || (typeof responses === 'object' && responses !== null && !Array.isArray(responses))) return null;
  return single(200, shape.id, INVALID_PARAMS, 'Invalid params: inputResponses must be an object of elicitation results by input request key');
}
