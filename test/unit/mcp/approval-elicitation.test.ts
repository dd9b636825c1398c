// The self-approval elicitation's wire pieces (the person's answer, the request state, the pending
// answer that ends the exchange) and the hold a retry waits in.
import { describe, expect, it } from 'vitest';
import { approvalElicitation, decodeState, encodeState, pendingResult, readElicitationAction } from '../../../server/mcp/approval-elicitation.ts';
import { createWaker, holdWhile } from '../../../server/mcp/hold.ts';

const CALL = '11111111-1111-4111-8111-111111111111';
const AGENT = '22222222-2222-4222-8222-222222222222';
const APPROVAL = '33333333-3333-4333-8333-333333333333';

describe('the approval elicitation', () => {
  it("reads the person's action, or that the retry carries none (asked again)", () => {
    expect(readElicitationAction(undefined)).toEqual({ action: 'missing' });
    expect(readElicitationAction({})).toEqual({ action: 'missing' });
    expect(readElicitationAction({ other: { action: 'accept' } })).toEqual({ action: 'missing' });
    for (const action of ['accept', 'decline', 'cancel'] as const) expect(readElicitationAction({ approval: { action } })).toEqual({ action });
    expect(readElicitationAction({ approval: { action: 'accept', content: {} }, other: 1 })).toEqual({ action: 'accept' });
  });

  it('refuses inputResponses that are not an elicitation result', () => {
    for (const bad of [null, 'accept', ['accept'], { approval: 'accept' }, { approval: { action: 'maybe' } }, { approval: {} }]) {
      expect(readElicitationAction(bad), JSON.stringify(bad)).toHaveProperty('error');
    }
  });

  it('round-trips its request state and refuses any other', () => {
    const asked = approvalElicitation(AGENT, { call_id: CALL, approval_id: APPROVAL, approval_url: `http://gw/approvals/${APPROVAL}`, expires_at: '2030-01-01T00:00:00.000Z', action_description: 'create an item' });
    expect(asked).toMatchObject({ resultType: 'input_required', inputRequests: { approval: { method: 'elicitation/create', params: { mode: 'url', elicitationId: APPROVAL } } } });
    expect(decodeState(asked.requestState)).toEqual({ call_id: CALL, agent_id: AGENT });
    expect(decodeState(encodeState({ call_id: CALL, agent_id: AGENT }).slice(1))).toBeNull();
    expect(decodeState(Buffer.from(JSON.stringify({ call_id: CALL, agent_id: AGENT, extra: 1 })).toString('base64url'))).toBeNull();
    expect(decodeState(42)).toBeNull();
  });

  it("ends with gateway_call's pending answer, saying why and how to resume", () => {
    const approval = { id: APPROVAL, approval_url: `http://gw/approvals/${APPROVAL}`, expires_at: '2030-01-01T00:00:00.000Z', risk: 'low', permission_keys: ['k'], suggested_tiers: [], auto_call_on_approve: false };
    const result = pendingResult(CALL, 'create an item', approval, 'The approval page was declined, so nothing more is asked here.');
    expect(result.structuredContent).toEqual({
      status: 'pending_approval',
      approval_id: APPROVAL,
      approval_url: approval.approval_url,
      action_description: 'create an item',
      expires_at: approval.expires_at,
      relationship: 'self',
      suggested_tiers: [],
      auto_call_on_approve: false,
      risk: 'low',
      permission_keys: ['k'],
      call_id: CALL,
    });
    expect(result.isError).toBeUndefined();
    expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^The approval page was declined.*resume it with gateway_call \{"approval_id": "3{8}-/) });
  });
});

describe('holding a request', () => {
  const never = new AbortController().signal;

  it('re-reads on a wake-up and stops once the value no longer waits', async () => {
    const waker = createWaker();
    let status = 'working';
    let reads = 0;
    const read = async () => (reads++, { status });
    const held = holdWhile(read, (v) => v.status === 'working', { deadline: Date.now() + 60_000, signal: never, waker, pollMs: 60_000 });
    await new Promise((r) => setTimeout(r, 20));
    status = 'completed';
    waker.ring();
    expect(await held).toEqual({ status: 'completed' });
    expect(reads).toBe(2);
  });

  it('does not lose a wake-up rung before it sleeps', async () => {
    const waker = createWaker();
    waker.ring();
    const started = Date.now();
    await waker.sleep(60_000);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('gives up at the deadline, and at once when the client has gone', async () => {
    const read = async () => ({ status: 'working' });
    const started = Date.now();
    expect(await holdWhile(read, () => true, { deadline: Date.now() + 150, signal: never, waker: createWaker(), pollMs: 40 })).toEqual({ status: 'working' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    const gone = new AbortController();
    gone.abort();
    let reads = 0;
    await holdWhile(async () => (reads++, { status: 'working' }), () => true, { deadline: Date.now() + 60_000, signal: gone.signal, waker: createWaker(), pollMs: 10 });
    expect(reads).toBe(1);
  });
});
