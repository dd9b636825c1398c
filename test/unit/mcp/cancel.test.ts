// Which messages cancel a request, and how a cancellation is addressed (issue 43).
import { describe, expect, it } from 'vitest';
import { cancelledRequestId } from '../../../server/mcp/cancel.ts';
import { markKey } from '../../../server/events/call-cancels.ts';

describe('cancelledRequestId', () => {
  it('names the request a notifications/cancelled cancels', () => {
    expect(cancelledRequestId({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3, reason: 'no longer needed' } })).toBe(3);
    expect(cancelledRequestId({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'abc' } })).toBe('abc');
  });
  it('ignores anything else: other methods, requests, batches, ids that are not JSON-RPC ids', () => {
    expect(cancelledRequestId({ jsonrpc: '2.0', method: 'notifications/progress', params: { requestId: 3 } })).toBeUndefined();
    expect(cancelledRequestId({ jsonrpc: '2.0', id: 1, method: 'notifications/cancelled', params: { requestId: 3 } })).toBeUndefined();
    expect(cancelledRequestId([{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } }])).toBeUndefined();
    expect(cancelledRequestId({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1.5 } })).toBeUndefined();
    expect(cancelledRequestId({ jsonrpc: '2.0', method: 'notifications/cancelled', params: {} })).toBeUndefined();
    expect(cancelledRequestId(null)).toBeUndefined();
  });
});

describe('markKey', () => {
  it('keeps agents, kinds and the JSON-RPC id types apart', () => {
    const a = markKey({ kind: 'request', agentId: 'a', rpcId: 1 });
    expect(markKey({ kind: 'request', agentId: 'a', rpcId: 1 })).toBe(a);
    expect(markKey({ kind: 'request', agentId: 'a', rpcId: '1' })).not.toBe(a);
    expect(markKey({ kind: 'request', agentId: 'b', rpcId: 1 })).not.toBe(a);
    expect(markKey({ kind: 'send', agentId: 'a', requestId: '1' })).not.toBe(markKey({ kind: 'request', agentId: 'a', rpcId: '1' }));
  });
});
