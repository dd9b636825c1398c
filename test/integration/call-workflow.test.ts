// The call workflow on its own: a real Temporal dev server (the suite's) and the real workflow
// bundle, with stub activities that record what the workflow asks of them — no gateway, no
// PostgreSQL. Each case drives one path (deny, duplicate decisions, allow once with a resume,
// allow-remember, an edited allow, expiry, the auto-bubble and a reminder) and checks the steps the
// workflow took, in order. Time is real but short: the spec's clocks are milliseconds here, on the
// server the gateway runs on. The same paths with the spec's real clocks (a day, an hour), time
// skipped on Temporal's test server: call-workflow-time-skipping.test.ts.
import type { Connection} from '@temporalio/client';
import { Client, WorkflowNotFoundError } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { suggestedTiers } from '../../core/permissions/tiers.ts';
import type { CallSpec } from '../../workflows/definitions.ts';
import { AGENT, callSpecOf, callWorkflowDriver, KEYS, USER } from '../support/call-workflow-stubs.ts';
import { testMessageKey } from '../support/message-signing.ts';
import { connectTemporal } from '../../server/temporal/grpc-interceptors.ts';

describe('the call workflow, with stub activities', () => {
  const signer = testMessageKey();
  let connection: Connection;
  let native: NativeConnection;
  let driver: ReturnType<typeof callWorkflowDriver>;

  beforeAll(async () => {
    connection = await connectTemporal({ address: inject('temporalAddress') });
    native = await NativeConnection.connect({ address: inject('temporalAddress') });
    driver = callWorkflowDriver(new Client({ connection }), native, signer);
  });
  afterAll(async () => {
    await native?.close();
    await connection?.close();
  });

  const specOf = (over: Parameters<typeof callSpecOf>[1] = {}): CallSpec => callSpecOf(signer, over);
  const withWorker: typeof driver.withWorker = (...args) => driver.withWorker(...args);
  const handleOf: typeof driver.handleOf = (spec) => driver.handleOf(spec);
  const resolve: typeof driver.resolve = (...args) => driver.resolve(...args);
  const refusal: typeof driver.refusal = (p) => driver.refusal(p);

  it('a covered call: checked and executed in its first step; the result keeps status and time only', async () => {
    let result: unknown;
    const { names: steps } = await withWorker({}, async (start) => {
      const { first, spec } = await start(specOf({ action: 'get_item' }));
      expect(first).toMatchObject({ status: 'called', result: { status_code: 200, body: { id: 'a1' } } });
      result = await handleOf(spec).result();
    });
    expect(steps).toEqual(['checkThenExecute']);
    expect(result).toEqual({ status: 'called', action_description: 'Create item x', result: { status_code: 200, duration_ms: 2 } });
  });

  it('a deny ends the call; a bubble taken once cannot be sent again; nothing reaches a closed call', async () => {
    const { names: steps, inputs } = await withWorker({}, async (start) => {
      const { first, spec } = await start(specOf());
      expect(first).toMatchObject({ status: 'pending_approval' });
      const nonce = randomUUID();
      expect(await resolve(spec, { decision: 'bubble', resolverId: USER, resolverIsAdmin: false }, nonce)).toMatchObject({ status: 'bubbled' });
      // The very message taken once, sent again (as anyone reading the history could): refused.
      expect(await refusal(resolve(spec, { decision: 'bubble', resolverId: USER, resolverIsAdmin: false }, nonce))).toBe('message_unverified');
      expect(await resolve(spec, { decision: 'deny', resolverId: USER, resolverIsAdmin: false, reason: 'no' })).toMatchObject({ status: 'denied' });
      expect(await handleOf(spec).result()).toMatchObject({ status: 'denied' });
      const late = await resolve(spec, { decision: 'allow', resolverId: USER, resolverIsAdmin: false }).then(() => null, (e: unknown) => e);
      expect(late).toBeInstanceOf(WorkflowNotFoundError);
    });
    expect(steps).toEqual(['checkThenExecute', 'raiseApproval', 'recordBubble', 'recordDecision', 'shareOutcome']);
    const bubbled = inputs.find((s) => s.name === 'recordBubble')!.input;
    expect(bubbled).toMatchObject({ fromId: AGENT, toId: USER, actorId: USER, automatic: false });
  });

  it('refuses the requester deciding its own call, and a resolver outside the chain', async () => {
    await withWorker({}, async (start) => {
      const { spec } = await start(specOf());
      expect(await refusal(resolve(spec, { decision: 'allow', resolverId: AGENT, resolverIsAdmin: false }))).toBe('cannot_resolve_own_approval');
      expect(await refusal(resolve(spec, { decision: 'allow', resolverId: randomUUID(), resolverIsAdmin: false }))).toBe('not_in_your_chain');
      await resolve(spec, { decision: 'deny', resolverId: USER, resolverIsAdmin: false });
    });
  });

  it('allow once without auto-call: the call waits for its resume, then prepares, sends and records', async () => {
    const { names: steps } = await withWorker({}, async (start) => {
      const { spec } = await start(specOf());
      expect(await resolve(spec, { decision: 'allow', resolverId: USER, resolverIsAdmin: false })).toMatchObject({ status: 'allowed', execution: { status: 'pending' } });
      const outcome = await driver.replay(spec);
      expect(outcome).toMatchObject({ status: 'called', result: { status_code: 201 } });
      expect(await handleOf(spec).result()).toMatchObject({ status: 'allowed', execution: { status: 'executed', triggered_by: 'agent', result: { status_code: 201, duration_ms: 3 } } });
    });
    expect(steps).toEqual(['checkThenExecute', 'raiseApproval', 'recordDecision', 'prepareExecution', 'sendExecution', 'recordExecutionResult', 'shareOutcome']);
  });

  it('allow and remember with auto-call: executed at once, the rules planted only after the send', async () => {
    const tiers = suggestedTiers(KEYS);
    const { names: steps } = await withWorker({}, async (start) => {
      const { spec } = await start(specOf({ autoCallOnApprove: true }));
      await resolve(spec, { decision: 'allow_remember', resolverId: USER, resolverIsAdmin: false, rememberKeys: tiers[0]!.keys, rememberTtlMs: 3_600_000, rememberTtl: '1h' });
      expect(await handleOf(spec).result()).toMatchObject({ status: 'allowed', execution: { status: 'executed', triggered_by: 'auto' } });
    });
    expect(steps).toEqual(['checkThenExecute', 'raiseApproval', 'recordDecision', 'prepareExecution', 'sendExecution', 'recordExecutionResult', 'plantRules', 'shareOutcome']);
  });

  it('an edited allow runs the edited request: its keys and the edit reach the execution steps', async () => {
    const { inputs } = await withWorker({}, async (start) => {
      const { spec } = await start(specOf({ autoCallOnApprove: true }));
      const edit = { envelope: { sealed: 'x' }, redacted: { body: { amount: 5 } }, diff: [{ field: 'body.amount', before: 100, after: 5 }], permissionKeys: ['widgets:create_item:small'], description: 'Create item x (5)' };
      const record = await resolve(spec, { decision: 'allow', resolverId: USER, resolverIsAdmin: false, edit: edit as never });
      expect(record).toMatchObject({ status: 'allowed', modified_by_approver: true, edited_permission_keys: ['widgets:create_item:small'] });
      expect(await handleOf(spec).result()).toMatchObject({ modified_by_approver: true, execution: { status: 'executed' } });
    });
    const prepared = inputs.find((s) => s.name === 'prepareExecution')!.input as { spec: CallSpec };
    expect(prepared.spec.permissionKeys).toEqual(['widgets:create_item:small']);
    expect(prepared.spec.description).toBe('Create item x (5)');
    expect(prepared.spec.edit?.diff).toEqual([{ field: 'body.amount', before: 100, after: 5 }]);
    const decided = inputs.find((s) => s.name === 'recordDecision')!.input as { edit?: unknown };
    expect(decided.edit).toMatchObject({ permissionKeys: ['widgets:create_item:small'] });
  });

  it('an approval nobody decides expires on its timer', async () => {
    const { names: steps, inputs } = await withWorker({}, async (start) => {
      const { spec } = await start(specOf({ clocks: { approvalTtlMs: 1_500 } }));
      expect(await handleOf(spec).result()).toMatchObject({ status: 'expired' });
    });
    expect(steps).toEqual(['checkThenExecute', 'raiseApproval', 'recordDecision', 'shareOutcome']);
    expect(inputs[2]!.input).toMatchObject({ status: 'expired', decision: 'expire', resolverId: null });
  });

  it('the auto-bubble moves the approval up the chain, then past the user; a reminder is sent on time', async () => {
    const { names: steps } = await withWorker({ reminderMarks: ['half'] }, async (start) => {
      const { spec } = await start(specOf({ clocks: { approvalTtlMs: 4_000, autoBubbleMs: 600 } }));
      expect(await handleOf(spec).result()).toMatchObject({ status: 'expired' });
    });
    // The reminder's place among the bubbles depends on how late timers fire on a busy machine.
    expect(steps.filter((s) => s !== 'remindResolver')).toEqual(['checkThenExecute', 'raiseApproval', 'recordBubble', 'routeOnward', 'recordDecision', 'shareOutcome']);
    expect(steps.filter((s) => s === 'remindResolver')).toHaveLength(1);
  });

  it('duplicate decisions sent at once: one is recorded, the other is refused as no longer pending', async () => {
    const { names: steps, inputs } = await withWorker({ slowDecision: () => delay(1_500) }, async (start) => {
      const { spec } = await start(specOf());
      const allow = resolve(spec, { decision: 'allow', resolverId: USER, resolverIsAdmin: false });
      const deny = resolve(spec, { decision: 'deny', resolverId: USER, resolverIsAdmin: false, reason: 'no' });
      const [a, d] = await Promise.allSettled([allow, deny]);
      const won = [a, d].filter((r) => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      const lost = [a, d].find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(await refusal(Promise.reject(lost.reason))).toBe('approval_not_pending');
      // A deny that won closes the call; an allow that won leaves it waiting for its resume.
      const winner = (a.status === 'fulfilled' ? a : d) as PromiseFulfilledResult<{ status: string }>;
      if (winner.value.status === 'denied') expect(await handleOf(spec).result()).toMatchObject({ status: 'denied' });
      else await handleOf(spec).terminate('test done');
    });
    expect(steps.filter((s) => s === 'recordDecision')).toHaveLength(1);
    expect(inputs.filter((s) => s.name === 'recordDecision').map((s) => s.input.decision)).toHaveLength(1);
  });

  it('an approval that times out while an allow is being recorded is allowed, never expired under it', async () => {
    const { names: steps } = await withWorker({ slowDecision: () => delay(2_500) }, async (start) => {
      const { spec } = await start(specOf({ clocks: { approvalTtlMs: 1_500 } }));
      // Sent at once: the expiry timer fires while the allow's activity is still recording it.
      expect(await resolve(spec, { decision: 'allow', resolverId: USER, resolverIsAdmin: false })).toMatchObject({ status: 'allowed' });
      await handleOf(spec).terminate('test done');
    });
    expect(steps.filter((s) => s === 'recordDecision')).toHaveLength(1);
    expect(steps).toEqual(['checkThenExecute', 'raiseApproval', 'recordDecision']);
  });
});
