// The call workflow with the spec's real clocks — an approval lives a day, auto-bubbles after an
// hour, an approved call waits an hour for its resume, reminders at half-life and 2 minutes before
// expiry — on Temporal's time-skipping test server (test/support/time-skipping-server.ts): the
// server jumps to the next timer while a test awaits a result or `env.sleep`s, and runs in real
// time otherwise (while updates are sent). The real workflow bundle, stub activities that record
// each step with the server's time; no gateway, no PostgreSQL. The test server (1.38) takes
// updates, but not update-with-start: the call's first answer is asked for right after its start.
import { WorkflowNotFoundError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suggestedTiers } from '../../core/permissions/tiers.ts';
import { CALL_SEARCH_ATTRIBUTES, type CallSpec } from '../../workflows/definitions.ts';
import { AGENT, callSpecOf, callWorkflowDriver, KEYS, USER, type Step } from '../support/call-workflow-stubs.ts';
import { testMessageKey } from '../support/message-signing.ts';
import { createTimeSkippingEnv } from '../support/time-skipping-server.ts';

/** IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD (as server/temporal/search-attributes.ts registers them). */
const KEYWORD = 2;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** The spec's clocks, as the gateway's defaults set them. */
const REAL_CLOCKS = { approvalTtlMs: DAY, autoBubbleMs: HOUR, executionWindowMs: HOUR };
/** Real time a step may lag its timer on a busy machine (time is skipped to the timer, then runs). */
const SLACK = MINUTE;

describe('the call workflow with real clocks, time skipped', () => {
  const signer = testMessageKey();
  let env: TestWorkflowEnvironment;
  let driver: ReturnType<typeof callWorkflowDriver>;

  beforeAll(async () => {
    // A cold cache fetches the test server with Maven first (~30 s on this machine).
    env = await createTimeSkippingEnv();
    // The workflow sets the gateway's search attributes; this server knows none until told.
    await env.connection.operatorService.addSearchAttributes({
      namespace: 'default',
      searchAttributes: Object.fromEntries(Object.values(CALL_SEARCH_ATTRIBUTES).map((k) => [k.name, KEYWORD])),
    });
    // The test server 1.38 fails update-with-start (a NullPointerException in its
    // executeMultiOperation: "updateHandle" is null): the first answer is a plain update after the start.
    driver = callWorkflowDriver(env.client, env.nativeConnection, signer, { now: () => env.currentTimeMs(), startThenUpdate: true });
  }, 300_000);
  afterAll(async () => {
    await env?.teardown();
  });

  const specOf = (over: Parameters<typeof callSpecOf>[1] = {}): CallSpec => callSpecOf(signer, { ...over, clocks: { ...REAL_CLOCKS, ...over.clocks } });
  const allow = { decision: 'allow', resolverId: USER, resolverIsAdmin: false } as const;
  /** When each step ran, in ms after the approval was raised. */
  const offsets = (steps: Step[]) => {
    const raisedAt = steps.find((s) => s.name === 'raiseApproval')!.at;
    return steps.map((s) => [s.name, s.at - raisedAt] as const);
  };
  /**
   * Within a minute after `ms`. A step's time is when its stub ran; the timers start when the
   * workflow handled what came before, which can precede that step's activity by its scheduling
   * latency (on a loaded machine tens of ms): a second of it is allowed before `ms`.
   */
  const near = (ms: number) => expect.toSatisfy((x: number) => x >= ms - 1_000 && x < ms + SLACK, `within a minute after ${ms} ms`);

  it('an approval nobody decides expires a day after it was raised', async () => {
    const { names, inputs } = await driver.withWorker({}, async (start) => {
      const { first, spec } = await start(specOf({ clocks: { autoBubbleMs: null } }));
      expect(first).toMatchObject({ status: 'pending_approval' });
      const raisedAt = Date.parse((first as { expires_at: string }).expires_at) - DAY;
      expect(await driver.handleOf(spec).result()).toMatchObject({ status: 'expired' });
      expect(await env.currentTimeMs()).toBeGreaterThanOrEqual(raisedAt + DAY);
    });
    expect(names).toEqual(['checkThenExecute', 'raiseApproval', 'recordDecision', 'shareOutcome']);
    expect(inputs[2]!.input).toMatchObject({ status: 'expired', decision: 'expire', resolverId: null });
    expect(offsets(inputs)[2]).toEqual(['recordDecision', near(DAY)]);
  });

  it('auto-bubbles up the chain after an hour, past the user after two; reminds at half-life and 2 minutes before expiry', async () => {
    const { inputs } = await driver.withWorker({ reminderMarks: ['half', '2m'] }, async (start) => {
      const { spec } = await start(specOf());
      expect(await driver.handleOf(spec).result()).toMatchObject({ status: 'expired' });
    });
    expect(offsets(inputs)).toEqual([
      ['checkThenExecute', expect.any(Number)],
      ['raiseApproval', 0],
      ['recordBubble', near(HOUR)],
      ['routeOnward', near(2 * HOUR)],
      ['remindResolver', near(12 * HOUR)],
      ['remindResolver', near(DAY - 2 * MINUTE)],
      ['recordDecision', near(DAY)],
      ['shareOutcome', near(DAY)],
    ]);
    const input = (name: string) => inputs.filter((s) => s.name === name).map((s) => s.input);
    expect(input('recordBubble')).toEqual([expect.objectContaining({ fromId: AGENT, toId: USER, actorId: null, automatic: true })]);
    expect(input('routeOnward')).toEqual([expect.objectContaining({ expected: 'chain' })]);
    expect(input('remindResolver')).toEqual([expect.objectContaining({ n: 1 }), expect.objectContaining({ n: 2 })]);
  });

  it('the user denies an hour and a half in, after the auto-bubble reached them; nothing reaches the closed call', async () => {
    const { inputs } = await driver.withWorker({}, async (start) => {
      const { spec } = await start(specOf());
      await env.sleep(90 * MINUTE);
      expect(await driver.resolve(spec, { decision: 'deny', resolverId: USER, resolverIsAdmin: false, reason: 'no' })).toMatchObject({ status: 'denied' });
      expect(await driver.handleOf(spec).result()).toMatchObject({ status: 'denied' });
      const late = await driver.resolve(spec, allow).then(
        () => null,
        (e: unknown) => e,
      );
      expect(late).toBeInstanceOf(WorkflowNotFoundError);
    });
    expect(offsets(inputs)).toEqual([
      ['checkThenExecute', expect.any(Number)],
      ['raiseApproval', 0],
      ['recordBubble', near(HOUR)],
      ['recordDecision', near(90 * MINUTE)],
      ['shareOutcome', near(90 * MINUTE)],
    ]);
    expect(inputs[3]!.input).toMatchObject({ status: 'denied', decision: 'deny', resolverId: USER });
  });

  it('allow once: resumed 59 minutes later it runs; never resumed, its execution expires after the hour', async () => {
    const resumed = await driver.withWorker({}, async (start) => {
      const { spec } = await start(specOf());
      expect(await driver.resolve(spec, allow)).toMatchObject({ status: 'allowed', execution: { status: 'pending' } });
      await env.sleep(59 * MINUTE);
      expect(await driver.replay(spec)).toMatchObject({ status: 'called', result: { status_code: 201 } });
      expect(await driver.handleOf(spec).result()).toMatchObject({ status: 'allowed', execution: { status: 'executed', triggered_by: 'agent' } });
    });
    expect(resumed.names).toEqual(['checkThenExecute', 'raiseApproval', 'recordDecision', 'prepareExecution', 'sendExecution', 'recordExecutionResult', 'shareOutcome']);
    const allowedAt = resumed.inputs[2]!.at;
    expect(resumed.inputs[3]!.at - allowedAt).toEqual(near(59 * MINUTE));

    const lapsed = await driver.withWorker({}, async (start) => {
      const { spec } = await start(specOf());
      await driver.resolve(spec, allow);
      expect(await driver.handleOf(spec).result()).toMatchObject({ status: 'allowed', execution: { status: 'expired' } });
    });
    expect(lapsed.names).toEqual(['checkThenExecute', 'raiseApproval', 'recordDecision', 'recordExecution', 'shareOutcome']);
    expect(lapsed.inputs[3]!.input).toMatchObject({ status: 'expired', triggeredBy: null });
    expect(lapsed.inputs[3]!.at - lapsed.inputs[2]!.at).toEqual(near(HOUR));
  });

  it('allow and remember with auto-call: executed at once, the rules planted only after the send', async () => {
    const tiers = suggestedTiers(KEYS);
    const { names, inputs } = await driver.withWorker({}, async (start) => {
      const { spec } = await start(specOf({ autoCallOnApprove: true }));
      await env.sleep(3 * HOUR);
      await driver.resolve(spec, { decision: 'allow_remember', resolverId: USER, resolverIsAdmin: false, rememberKeys: tiers[0]!.keys, rememberTtlMs: 30 * DAY, rememberTtl: '30d' });
      expect(await driver.handleOf(spec).result()).toMatchObject({ status: 'allowed', execution: { status: 'executed', triggered_by: 'auto' } });
    });
    expect(names).toEqual(['checkThenExecute', 'raiseApproval', 'recordBubble', 'routeOnward', 'recordDecision', 'prepareExecution', 'sendExecution', 'recordExecutionResult', 'plantRules', 'shareOutcome']);
    expect(inputs.find((s) => s.name === 'recordDecision')!.input).toMatchObject({ decision: 'allow_remember', rememberKeys: tiers[0]!.keys, rememberTtl: '30d' });
  });

  it('an edited allow runs the edited request: its keys and the edit reach the execution steps', async () => {
    const { names, inputs } = await driver.withWorker({}, async (start) => {
      const { spec } = await start(specOf({ autoCallOnApprove: true }));
      await env.sleep(30 * MINUTE);
      const edit = { envelope: { sealed: 'x' }, redacted: { body: { amount: 5 } }, diff: [{ field: 'body.amount', before: 100, after: 5 }], permissionKeys: ['widgets:create_item:small'], description: 'Create item x (5)' };
      expect(await driver.resolve(spec, { ...allow, edit: edit as never })).toMatchObject({ status: 'allowed', modified_by_approver: true, edited_permission_keys: ['widgets:create_item:small'] });
      expect(await driver.handleOf(spec).result()).toMatchObject({ modified_by_approver: true, execution: { status: 'executed' } });
    });
    expect(names).toEqual(['checkThenExecute', 'raiseApproval', 'recordDecision', 'prepareExecution', 'sendExecution', 'recordExecutionResult', 'shareOutcome']);
    const prepared = inputs.find((s) => s.name === 'prepareExecution')!.input as { spec: CallSpec };
    expect(prepared.spec.permissionKeys).toEqual(['widgets:create_item:small']);
    expect(prepared.spec.description).toBe('Create item x (5)');
    expect(prepared.spec.edit?.diff).toEqual([{ field: 'body.amount', before: 100, after: 5 }]);
    expect(inputs.find((s) => s.name === 'recordDecision')!.input).toMatchObject({ edit: { permissionKeys: ['widgets:create_item:small'] } });
  });

  it('duplicate decisions sent at once: one is recorded, the other is refused as no longer pending', async () => {
    const { names, inputs } = await driver.withWorker({ slowDecision: () => env.sleep(3_000) }, async (start) => {
      const { spec } = await start(specOf());
      const [a, d] = await Promise.allSettled([driver.resolve(spec, allow), driver.resolve(spec, { decision: 'deny', resolverId: USER, resolverIsAdmin: false, reason: 'no' })]);
      expect([a, d].filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const lost = [a, d].find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(await driver.refusal(Promise.reject(lost.reason))).toBe('approval_not_pending');
      const won = (a.status === 'fulfilled' ? a : d) as PromiseFulfilledResult<{ status: string }>;
      const final = await driver.handleOf(spec).result();
      expect(final).toMatchObject({ status: won.value.status === 'allowed' ? 'allowed' : 'denied' });
    });
    expect(names.filter((s) => s === 'recordDecision')).toHaveLength(1);
    expect(names.slice(0, 3)).toEqual(['checkThenExecute', 'raiseApproval', 'recordDecision']);
    expect(names.at(-1)).toBe('shareOutcome');
    expect(inputs.some((s) => s.name === 'recordDecision' && s.input.status === 'expired')).toBe(false);
  });

  it('an allow still being recorded when the day runs out is allowed, never expired under it', async () => {
    let recordedUntil = 0;
    const slowDecision = async () => {
      // The recording outlasts the approval: server time passes its expiry before it returns.
      await env.sleep(8_000);
      recordedUntil = await env.currentTimeMs();
    };
    const { names, inputs } = await driver.withWorker({ slowDecision }, async (start) => {
      const { first, spec } = await start(specOf({ clocks: { autoBubbleMs: null } }));
      const expiresAt = Date.parse((first as { expires_at: string }).expires_at);
      // To 5 s before expiry: the allow's recording starts before the timer, and is still going when it fires.
      await env.sleep(DAY - 5_000);
      expect(await driver.resolve(spec, allow)).toMatchObject({ status: 'allowed' });
      expect(recordedUntil).toBeGreaterThan(expiresAt);
      expect(await driver.replay(spec)).toMatchObject({ status: 'called' });
      expect(await driver.handleOf(spec).result()).toMatchObject({ status: 'allowed', execution: { status: 'executed' } });
    });
    expect(names).toEqual(['checkThenExecute', 'raiseApproval', 'recordDecision', 'prepareExecution', 'sendExecution', 'recordExecutionResult', 'shareOutcome']);
    expect(inputs[2]!.input).toMatchObject({ status: 'allowed', decision: 'allow' });
  });
});
