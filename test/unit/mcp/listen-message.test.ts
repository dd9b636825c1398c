// What a subscriptions/listen stream sends for each agent event: only what its client opted in to,
// and never a call's progress (that belongs to the request that made the call).
import { describe, expect, it } from 'vitest';
import { CALL_PROGRESS, TOOLS_LIST_CHANGED, type AgentEvent } from '../../../server/events/agent-events.ts';
import { eventNotification } from '../../../server/mcp/endpoint.ts';
import { listenMessage } from '../../../server/mcp/listen.ts';

const send = (method: string, body: Record<string, unknown>) => ({ method, body });
const approval: AgentEvent = { type: 'approval.resolved', approval_id: 'a1', decision: 'deny' };
const progress: AgentEvent = { type: CALL_PROGRESS, approval_id: '', request_id: 'r1', progress: 2, total: 4 };
const toolsChanged: AgentEvent = { type: TOOLS_LIST_CHANGED, approval_id: '' };

describe('listen stream messages', () => {
  it('sends approval events as log messages only to a stream that asked for a log level at or below info', () => {
    expect(listenMessage(approval, {}, 'info', send)).toEqual({ method: 'notifications/message', body: { level: 'info', logger: 'gateway', data: approval } });
    expect(listenMessage(approval, {}, 'debug', send)).not.toBeNull();
    expect(listenMessage(approval, {}, 'warning', send)).toBeNull();
    expect(listenMessage(approval, {}, undefined, send)).toBeNull();
  });

  it('sends a tool list change only to a stream that opted in', () => {
    expect(listenMessage(toolsChanged, { toolsListChanged: true }, undefined, send)).toEqual({ method: 'notifications/tools/list_changed', body: {} });
    expect(listenMessage(toolsChanged, {}, 'debug', send)).toBeNull();
  });

  it("never sends a call's progress, whatever the stream asked for (nor does GET /mcp)", () => {
    expect(listenMessage(progress, { toolsListChanged: true }, 'debug', send)).toBeNull();
    expect(eventNotification(progress)).toBeNull();
  });
});
