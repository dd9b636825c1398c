// Stub activities for the call workflow on its own (test/integration/call-workflow*.test.ts): each
// records the step the workflow asked for, in order, and answers as the real activity would for
// the case. No gateway, no PostgreSQL: what is tested is the workflow's sequencing and its clocks.
import type { Client } from '@temporalio/client';
import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { NativeConnection } from '@temporalio/worker';
import { Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { expect, inject } from 'vitest';
import { callWorkflowId, outcomeUpdate, replayUpdate, resolveUpdate, type ApprovalRecord, type CallOutcome, type CallSpec, type ResolveInput } from '../../workflows/definitions.ts';
import type { testMessageKey } from './message-signing.ts';

export const USER = randomUUID();
export const AGENT = randomUUID();
export const KEYS = ['widgets:create_item:*'];

/** One activity call: its name, its input, and the server's time when it ran. */
export type Step = { name: string; input: any; at: number };

export type StubOptions = {
  /** Reminder marks `raiseApproval` answers with (as the org's setting would). */
  reminderMarks?: string[];
  /** Recording a decision waits for this (a slow database): what arrives meanwhile must wait for it. */
  slowDecision?: () => Promise<void>;
  /** The workflow server's clock (a time-skipping server's differs from Date.now()). */
  now?: () => number | Promise<number>;
};

export function stubActivities(steps: Step[], opts: StubOptions = {}) {
  const now = opts.now ?? Date.now;
  const push = async (name: string, input: unknown) => void steps.push({ name, input, at: await now() });
  const record = (name: string) => (input: unknown) => push(name, input);
  const slowRecord = (name: string) => async (input: unknown) => {
    await push(name, input);
    await opts.slowDecision?.();
  };
  const sent = { kind: 'sent' as const, result: { status_code: 201, duration_ms: 3, body: { ok: true } }, httpStatusCode: 201 };
  return {
    async checkThenExecute(input: { spec: CallSpec }) {
      await push('checkThenExecute', input);
      if (input.spec.action === 'get_item') {
        return { check: { outcome: 'covered' }, executed: { outcome: { status: 'called', result: { status_code: 200, duration_ms: 2, body: { id: 'a1' } }, action_description: input.spec.description }, httpStatusCode: 200, executionStatus: null } };
      }
      return { check: { outcome: 'gap', gapIdentityId: AGENT, firstResolverId: AGENT }, executed: null };
    },
    async raiseApproval(input: { spec: CallSpec; approvalId: string; firstResolverId: string }) {
      await push('raiseApproval', input);
      return {
        approvalId: input.approvalId,
        expiresAt: new Date((await now()) + input.spec.clocks.approvalTtlMs).toISOString(),
        resolverId: input.firstResolverId,
        deduplicatedInto: null,
        reminderMarks: opts.reminderMarks ?? [],
      };
    },
    recordDecision: slowRecord('recordDecision'),
    recordBubble: record('recordBubble'),
    async routeOnward(input: unknown) {
      await push('routeOnward', input);
      return { stage: 'admins', top: true };
    },
    announceDecision: record('announceDecision'),
    async prepareExecution(input: unknown) {
      await push('prepareExecution', input);
      return { proceed: true };
    },
    async sendExecution(input: unknown) {
      await push('sendExecution', input);
      return sent;
    },
    async recordExecutionResult(input: { spec: CallSpec; sent: typeof sent }) {
      await push('recordExecutionResult', input);
      return { outcome: { status: 'called', result: input.sent.result, action_description: input.spec.description }, httpStatusCode: 201, executionStatus: 'executed' };
    },
    recordExecution: record('recordExecution'),
    plantRules: record('plantRules'),
    shareOutcome: record('shareOutcome'),
    async joinedOutcome() {
      return null;
    },
    remindResolver: record('remindResolver'),
  };
}

/** A call's spec: an agent's write under its user, a gap at the agent; `clocks` as given. */
export function callSpecOf(signer: ReturnType<typeof testMessageKey>, over: Omit<Partial<CallSpec>, 'clocks'> & { clocks?: Partial<CallSpec['clocks']> } = {}): CallSpec {
  const { clocks, ...rest } = over;
  return {
    callId: randomUUID(),
    orgId: randomUUID(),
    requesterId: AGENT,
    userId: USER,
    chain: [
      { id: AGENT, kind: 'agent', parentId: USER, inheritPermissions: false },
      { id: USER, kind: 'user', parentId: null, inheritPermissions: false },
    ],
    service: 'widgets',
    template: 'widgets',
    action: 'create_item',
    runtime: 'http',
    risk: 'write',
    approvalRisk: 'med',
    permissionKeys: KEYS,
    description: 'Create item x',
    autoCallOnApprove: false,
    maxPendingPerAgent: 10,
    clocks: { approvalTtlMs: 60_000, executionWindowMs: 60_000, autoBubbleMs: null, ...clocks },
    approvalUrlBase: 'http://127.0.0.1:1',
    requestId: null,
    verbose: false,
    callDigest: randomUUID(),
    messageKeys: [signer.hex],
    ...rest,
  };
}

type Signer = ReturnType<typeof testMessageKey>;

/**
 * Drives the real workflow bundle against `client`'s server: `withWorker` runs a body beside a fresh
 * worker with the stub activities on its own task queue and returns the steps they recorded.
 */
export function callWorkflowDriver(client: Client, native: NativeConnection, signer: Signer, options: { now?: StubOptions['now']; startThenUpdate?: boolean } = {}) {
  const { now, startThenUpdate } = options;
  async function withWorker(opts: Omit<StubOptions, 'now'>, body: (start: (spec: CallSpec) => Promise<{ first: CallOutcome; spec: CallSpec }>) => Promise<void>) {
    const steps: Step[] = [];
    const taskQueue = `call-workflow-${randomUUID()}`;
    const worker = await Worker.create({ connection: native, taskQueue, workflowBundle: { codePath: inject('workflowBundlePath') }, activities: stubActivities(steps, { ...opts, now }) });
    await worker.runUntil(async () => {
      await body(async (spec) => {
        const workflowId = callWorkflowId(spec.callId);
        if (startThenUpdate) {
          // The same first answer asked for right after the start (for a server without update-with-start).
          const handle = await client.workflow.start('callWorkflow', { workflowId, taskQueue, args: [spec], workflowIdConflictPolicy: 'FAIL' });
          return { first: await handle.executeUpdate(outcomeUpdate), spec };
        }
        // As the API starts a call: the first answer rides the start (a covered call closes at once).
        const startWorkflowOperation = new WithStartWorkflowOperation('callWorkflow', { workflowId, taskQueue, args: [spec], workflowIdConflictPolicy: 'FAIL' });
        return { first: await client.workflow.executeUpdateWithStart(outcomeUpdate, { startWorkflowOperation }), spec };
      });
    });
    return { names: steps.map((s) => s.name), inputs: steps };
  }
  const handleOf = (spec: CallSpec) => client.workflow.getHandle(callWorkflowId(spec.callId));
  const resolve = (spec: CallSpec, input: ResolveInput, nonce?: string) =>
    handleOf(spec).executeUpdate(resolveUpdate, { args: [signer.signed('resolve', callWorkflowId(spec.callId), input, nonce)] }) as Promise<ApprovalRecord>;
  const replay = (spec: CallSpec) =>
    handleOf(spec).executeUpdate(replayUpdate, { args: [signer.signed('replay', callWorkflowId(spec.callId), { callerId: AGENT, triggeredBy: 'agent' as const })] });
  /** The error type of an update the workflow refused. */
  const refusal = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    const cause = (err as WorkflowUpdateFailedError).cause;
    return cause instanceof ApplicationFailure ? cause.type : undefined;
  };
  return { withWorker, handleOf, resolve, replay, refusal };
}
