// A malformed JSON-RPC message gets the same error (code and id) whichever revision it claims, before
// the SDK sees it (message-guard.ts); a response is answered on neither. The 2025 revisions' version
// header and params, a 2026-07-28 retry's inputResponses. And the log-level opt-in of a listen stream.
import { describe, expect, it } from 'vitest';
import { onlyResponses, refuseLegacy, refuseMalformed, refuseModern } from '../../../server/mcp/message-guard.ts';
import { logLevelAllows } from '../../../server/mcp/listen.ts';

const REVISION = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': REVISION,
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** The guard's answer as {code, id} for a message claiming `version`, or null when it lets the SDK serve it. */
function guarded(message: unknown, version?: string) {
  const r = refuseMalformed(message, version);
  if (!r) return null;
  const body = Array.isArray(r.body) ? r.body[0]! : r.body;
  return { code: body.error.code, id: body.id };
}

describe('a malformed JSON-RPC message, whichever revision it claims', () => {
  const request = { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: META } };
  const cases: Array<[string, unknown, { code: number; id: string | number | null }]> = [
    ['method and result', { ...request, result: {} }, { code: -32600, id: 7 }],
    ['method and error', { ...request, error: { code: 1, message: 'x' } }, { code: -32600, id: 7 }],
    ['result and error', { jsonrpc: '2.0', id: 7, result: {}, error: { code: 1, message: 'x' } }, { code: -32600, id: 7 }],
    ['a response without an id', { jsonrpc: '2.0', result: {} }, { code: -32600, id: null }],
    ['no jsonrpc member', { id: 7, method: 'tools/list' }, { code: -32600, id: 7 }],
    ['jsonrpc 1.0', { ...request, jsonrpc: '1.0' }, { code: -32600, id: 7 }],
    ['an object id', { ...request, id: { x: 1 } }, { code: -32600, id: null }],
    ['a boolean id', { ...request, id: true }, { code: -32600, id: null }],
    ['a non-finite id', { ...request, id: Number.NaN }, { code: -32600, id: null }],
    ['a null request id', { ...request, id: null }, { code: -32600, id: null }],
    ['no method', { jsonrpc: '2.0', id: 7 }, { code: -32600, id: 7 }],
    ['an empty method', { ...request, method: '' }, { code: -32600, id: 7 }],
    ['a number method', { ...request, method: 3 }, { code: -32600, id: 7 }],
    ['array params', { ...request, params: [] }, { code: -32602, id: 7 }],
    ['not an object', 'tools/list', { code: -32600, id: null }],
    ['a batch (removed in 2025-06-18)', [request], { code: -32600, id: null }],
  ];

  it.each(cases)('%s: refused with the id when readable', (_name, message, expected) => {
    expect(guarded(message)).toEqual(expected);
    expect(guarded(message, '2025-06-18')).toEqual(expected);
    expect(guarded(message, REVISION)).toEqual(expected);
  });

  it('answers nothing itself to a well-formed request, response or notification', () => {
    for (const message of [
      { jsonrpc: '2.0', id: 7, method: 'tools/list' },
      { jsonrpc: '2.0', id: 7, result: {} },
      { jsonrpc: '2.0', id: 7, error: { code: -1, message: 'no' } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
    ]) {
      expect(guarded(message), JSON.stringify(message)).toBeNull();
      expect(guarded(message, REVISION), JSON.stringify(message)).toBeNull();
    }
  });

  it('takes responses alone as nothing to answer', () => {
    expect(onlyResponses({ jsonrpc: '2.0', id: 7, result: {} })).toBe(true);
    expect(onlyResponses([{ jsonrpc: '2.0', id: 7, error: { code: -1, message: 'no' } }])).toBe(true);
    expect(onlyResponses({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBe(false);
    expect(onlyResponses([{ jsonrpc: '2.0', id: 7, result: {} }, { jsonrpc: '2.0', id: 8, method: 'ping' }])).toBe(false);
  });

  it('allows batches only in the revisions that had them', () => {
    const batch = [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }];
    expect(refuseMalformed(batch, '2025-03-26')).toBeNull();
    expect(refuseMalformed([], '2025-03-26')?.status).toBe(400);
  });
});

describe('the 2025 revisions', () => {
  it('refuses an unsupported MCP-Protocol-Version header with the request id', () => {
    const r = refuseLegacy({ jsonrpc: '2.0', id: 42, method: 'tools/list' }, '1999-01-01');
    expect(r).toMatchObject({ status: 400, body: { id: 42, error: { code: -32600, message: expect.stringMatching(/MCP-Protocol-Version/) } } });
    expect(refuseLegacy({ jsonrpc: '2.0', id: 42, method: 'tools/list' }, '2025-06-18')).toBeNull();
  });

  it('refuses params that do not fit the method with -32602 and the id (the SDK says -32603 for initialize)', () => {
    for (const message of [
      { jsonrpc: '2.0', id: 44, method: 'initialize', params: {} },
      { jsonrpc: '2.0', id: 44, method: 'tools/call', params: { name: 7 } },
      { jsonrpc: '2.0', id: 44, method: 'tools/call', params: { name: 'gateway_search', arguments: 'x' } },
    ]) {
      expect(refuseLegacy(message, undefined), JSON.stringify(message)).toMatchObject({ status: 200, body: { id: 44, error: { code: -32602 } } });
    }
    expect(refuseLegacy({ jsonrpc: '2.0', id: 44, method: 'tools/call', params: { name: 'gateway_search', arguments: {} } }, undefined)).toBeNull();
  });
});

describe('2026-07-28', () => {
  const retry = (inputResponses: unknown) => ({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'gateway_call', requestState: 's', inputResponses } });
  it('refuses a retry whose inputResponses are not an object (the SDK would drop them)', () => {
    expect(refuseModern(retry(['accept']))).toMatchObject({ status: 200, body: { id: 9, error: { code: -32602 } } });
    expect(refuseModern(retry('accept'))).toMatchObject({ body: { error: { code: -32602 } } });
    expect(refuseModern(retry({ approval: { action: 'accept' } }))).toBeNull();
    expect(refuseModern(retry(undefined))).toBeNull();
  });
});

describe('the log level a listen stream asked for', () => {
  it('sends a message at or above it, and none when none was asked for', () => {
    expect(logLevelAllows(undefined, 'emergency')).toBe(false);
    expect(logLevelAllows('info', 'info')).toBe(true);
    expect(logLevelAllows('warning', 'info')).toBe(false);
    expect(logLevelAllows('nonsense', 'emergency')).toBe(false);
  });
});
