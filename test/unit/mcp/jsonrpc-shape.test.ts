// A malformed JSON-RPC message gets the same error (code and id) on both MCP paths: the SDK's
// revisions (jsonrpc-guard.ts) and 2026-07-28 (revision-2026.ts); a response is answered on neither.
import { describe, expect, it } from 'vitest';
import { guardJsonRpc } from '../../../server/mcp/jsonrpc-guard.ts';
import { readStatelessRequest, STATELESS_REVISION } from '../../../server/mcp/revision-2026.ts';

const META = {
  'io.modelcontextprotocol/protocolVersion': STATELESS_REVISION,
  'io.modelcontextprotocol/clientCapabilities': {},
};
const HEADERS: Record<string, string> = { 'mcp-protocol-version': STATELESS_REVISION, 'mcp-method': 'tools/list' };

/** The answer of each path as {code, id}, or null when it answers nothing / serves the message. */
function onStatelessPath(message: unknown) {
  const r = readStatelessRequest(message, (n) => HEADERS[n]);
  return r && 'status' in r ? { code: r.body.error.code, id: r.body.id } : r === null ? null : 'served';
}
function onSdkPath(message: unknown) {
  const r = guardJsonRpc(message, undefined);
  if (!r) return null;
  const body = Array.isArray(r.body) ? r.body[0]! : r.body;
  return { code: body.error.code, id: body.id };
}

const request = { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: META } };

describe('a malformed JSON-RPC message on both MCP paths', () => {
  const cases: Array<[string, unknown, { code: number; id: string | number | null }]> = [
    ['method and result', { ...request, result: {} }, { code: -32600, id: 7 }],
    ['method and error', { ...request, error: { code: 1, message: 'x' } }, { code: -32600, id: 7 }],
    ['result and error', { jsonrpc: '2.0', id: 7, result: {}, error: { code: 1, message: 'x' } }, { code: -32600, id: 7 }],
    ['a response without an id', { jsonrpc: '2.0', result: {} }, { code: -32600, id: null }],
    ['no jsonrpc member', { id: 7, method: 'tools/list', params: { _meta: META } }, { code: -32600, id: 7 }],
    ['jsonrpc 1.0', { ...request, jsonrpc: '1.0' }, { code: -32600, id: 7 }],
    ['an object id', { ...request, id: { x: 1 } }, { code: -32600, id: null }],
    ['a boolean id', { ...request, id: true }, { code: -32600, id: null }],
    ['a non-finite id', { ...request, id: Number.NaN }, { code: -32600, id: null }],
    ['a null request id', { ...request, id: null }, { code: -32600, id: null }],
    ['no method', { jsonrpc: '2.0', id: 7, params: { _meta: META } }, { code: -32600, id: 7 }],
    ['an empty method', { ...request, method: '' }, { code: -32600, id: 7 }],
    ['a number method', { ...request, method: 3 }, { code: -32600, id: 7 }],
    ['array params', { ...request, params: [] }, { code: -32602, id: 7 }],
    ['not an object', 'tools/list', { code: -32600, id: null }],
  ];

  it.each(cases)('%s: the same error on both paths', (_name, message, expected) => {
    expect(onSdkPath(message)).toEqual(expected);
    expect(onStatelessPath(message)).toEqual(expected);
  });

  it('answers nothing to a well-formed response or notification on either path', () => {
    for (const message of [
      { jsonrpc: '2.0', id: 7, result: {} },
      { jsonrpc: '2.0', id: 7, error: { code: -1, message: 'no' } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ]) {
      expect(onSdkPath(message), JSON.stringify(message)).toBeNull();
      expect(onStatelessPath(message), JSON.stringify(message)).toBeNull();
    }
  });

  it('serves a well-formed request on the 2026-07-28 path', () => {
    expect(onStatelessPath(request)).toBe('served');
  });
});
