// The 2026-07-28 envelope check: which POSTs speak the revision, and the error each malformed
// request gets (code, HTTP status, id kept), before any method runs.
import { describe, expect, it } from 'vitest';
import { logLevelAllows, readStatelessRequest, speaksStatelessRevision, STATELESS_REVISION } from '../../../server/mcp/revision-2026.ts';

const META = {
  'io.modelcontextprotocol/protocolVersion': STATELESS_REVISION,
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};
const HEADERS: Record<string, string> = { 'mcp-protocol-version': STATELESS_REVISION, 'mcp-method': 'tools/call', 'mcp-name': 'gateway_auth' };
const body = (over: Record<string, unknown> = {}, meta: Record<string, unknown> = META) => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name: 'gateway_auth', arguments: {}, _meta: meta },
  ...over,
});
const read = (b: unknown, headers: Record<string, string | undefined> = HEADERS) => readStatelessRequest(b, (n) => headers[n]);
const errorOf = (r: ReturnType<typeof read>) => (r && 'status' in r ? { status: r.status, code: r.body.error.code, id: r.body.id } : r);

describe('the 2026-07-28 envelope', () => {
  it('recognises the revision by header, _meta or its own methods, and leaves the rest to the SDK', () => {
    expect(speaksStatelessRevision({}, STATELESS_REVISION)).toBe(true);
    expect(speaksStatelessRevision(body(), undefined)).toBe(true);
    expect(speaksStatelessRevision({ jsonrpc: '2.0', id: 1, method: 'server/discover' }, undefined)).toBe(true);
    expect(speaksStatelessRevision({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }, undefined)).toBe(false);
    expect(speaksStatelessRevision({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, '2025-11-25')).toBe(false);
  });

  it('reads a valid request with its capabilities', () => {
    const r = read(body());
    expect(r).toMatchObject({ id: 7, method: 'tools/call', capabilities: META['io.modelcontextprotocol/clientCapabilities'] });
  });

  it('names the error the revision gives each problem, keeping the id', () => {
    expect(errorOf(read(body({ params: { name: 'gateway_auth' } })))).toEqual({ status: 400, code: -32602, id: 7 });
    expect(errorOf(read(body({}, { 'io.modelcontextprotocol/protocolVersion': STATELESS_REVISION })))).toEqual({ status: 400, code: -32602, id: 7 });
    expect(errorOf(read(body({}, { ...META, 'io.modelcontextprotocol/clientInfo': { name: 'x' } })))).toEqual({ status: 400, code: -32602, id: 7 });
    expect(errorOf(read(body(), { ...HEADERS, 'mcp-protocol-version': undefined }))).toEqual({ status: 400, code: -32020, id: 7 });
    const v = '2099-01-01';
    const unknown = read(body({}, { ...META, 'io.modelcontextprotocol/protocolVersion': v }), { ...HEADERS, 'mcp-protocol-version': v });
    expect(errorOf(unknown)).toEqual({ status: 400, code: -32022, id: 7 });
    expect(unknown && 'status' in unknown && unknown.body.error.data).toEqual({ supported: [STATELESS_REVISION], requested: v });
    expect(errorOf(read(body(), { ...HEADERS, 'mcp-method': 'tools/list' }))).toEqual({ status: 400, code: -32020, id: 7 });
    expect(errorOf(read(body(), { ...HEADERS, 'mcp-method': 'Tools/Call' }))).toEqual({ status: 400, code: -32020, id: 7 });
    expect(errorOf(read(body(), { ...HEADERS, 'mcp-name': undefined }))).toEqual({ status: 400, code: -32020, id: 7 });
    expect(errorOf(read([body()]))).toEqual({ status: 400, code: -32600, id: null });
    expect(errorOf(read(body({ id: null })))).toEqual({ status: 400, code: -32600, id: null });
  });

  it('accepts header values with surrounding whitespace and answers nothing to a notification', () => {
    expect(read(body(), { ...HEADERS, 'mcp-method': '  tools/call ', 'mcp-name': ' gateway_auth' })).toMatchObject({ id: 7 });
    const { id: _, ...notification } = body();
    expect(read(notification)).toBeNull();
  });

  it('sends log messages only at or above the level a request asked for', () => {
    expect(logLevelAllows(undefined, 'emergency')).toBe(false);
    expect(logLevelAllows('info', 'info')).toBe(true);
    expect(logLevelAllows('warning', 'info')).toBe(false);
  });
});
