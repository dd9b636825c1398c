// Anyone who can reach Temporal (its UI, `temporal workflow update`, any SDK client) can send a
// call's workflow an update or a signal. The workflow acts only on messages the gateway signed
// (core/decisions/proof.ts): a forged decision — with the requester's real user id read from the
// workflow's input, as a tester did through the UI, or with an invented one — is refused by the
// update's validator, is never accepted into the history, and the approval stays decidable by
// its people. Runs against the same Temporal dev server the gateway runs on.
import type { Connection} from '@temporalio/client';
import { Client, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callWorkflowId,
  cancelUpdate,
  replayUpdate,
  resolveUpdate,
  supersedeSignal,
  type CallSpec,
  type ResolveInput,
} from '../../workflows/definitions.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { historyText } from '../support/history.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { connectTemporal } from '../../server/temporal/grpc-interceptors.ts';

describe('decisions sent straight to Temporal', () => {
  let gw: TestGateway;
  let up: Upstream;
  let human: ReturnType<TestGateway['as']>;
  let agent: ReturnType<TestGateway['as']>;
  let outsider: Client;
  let connection: Connection;

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway();
    const admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    const person = await seedUser(gw.databaseUrl, { orgId, email: 'forgery-owner@example.test' });
    human = gw.as(await gw.login(person.email, person.password));
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await human('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_forgery_test' })).status).toBe(201);
    const made = await human('POST', '/v1/identities/agents', { name: 'forgery-agent' });
    expect(made.status).toBe(201);
    agent = gw.as(made.body.key.token);
    // The outsider's own connection, as the Temporal UI or a script would open one.
    connection = await connectTemporal({ address: gw.temporalAddress });
    outsider = new Client({ connection });
  });
  afterAll(async () => {
    await connection?.close();
    await gw?.stop();
    await up?.close();
  });

  /** A pending approval, and the spec its workflow started with (what the UI shows as its input). */
  async function pendingCall(name: string) {
    const res = await agent('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name } });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const callId = res.body.call_id as string;
    const handle = outsider.workflow.getHandle(callWorkflowId(callId));
    const history = await handle.fetchHistory();
    const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
    const payload = started.input!.payloads![0]!;
    const spec = JSON.parse(Buffer.from(payload.data!).toString('utf8')) as CallSpec;
    return { approvalId: res.body.approval_id as string, callId, handle, spec };
  }

  /** The refusal an update sent from outside gets: its failure's type. */
  async function refusalOf(send: Promise<unknown>): Promise<string | undefined> {
    const err = await send.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, 'the forged update was accepted').toBeInstanceOf(WorkflowUpdateFailedError);
    const cause = (err as WorkflowUpdateFailedError).cause;
    return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
  }

  /** Updates other than the first answer's (`outcome`) that the workflow accepted into its history. */
  const acceptedUpdates = async (handle: ReturnType<Client['workflow']['getHandle']>) =>
    (await handle.fetchHistory()).events!.filter((e) => {
      const name = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name;
      return name !== undefined && name !== 'outcome';
    }).length;

  it('refuses a forged allow with the real user id, and one with an invented id; nothing is accepted and the approval stays decidable', async () => {
    const { approvalId, handle, spec } = await pendingCall('forged-allow');
    const sentBefore = up.requests.length;
    const forged = (resolverId: string): ResolveInput => ({ decision: 'allow', resolverId, resolverIsAdmin: true, reason: 'looks fine' });

    expect(await refusalOf(handle.executeUpdate(resolveUpdate, { args: [forged(spec.userId)] }))).toBe('message_unverified');
    expect(await refusalOf(handle.executeUpdate(resolveUpdate, { args: [forged(randomUUID())] }))).toBe('message_unverified');
    // A proof that is not the gateway's: a well-formed signature by nobody.
    const fakeProof = { nonce: randomUUID(), signature: 'ab'.repeat(64) };
    expect(await refusalOf(handle.executeUpdate(resolveUpdate, { args: [{ ...forged(spec.userId), proof: fakeProof }] }))).toBe('message_unverified');
    // Every other update the API sends is refused the same way.
    expect(await refusalOf(handle.executeUpdate(cancelUpdate, { args: [{ callerId: spec.requesterId }] }))).toBe('message_unverified');
    expect(await refusalOf(handle.executeUpdate(replayUpdate, { args: [{ callerId: spec.requesterId, triggeredBy: 'agent' }] }))).toBe('message_unverified');

    expect(await acceptedUpdates(handle)).toBe(0);
    const still = await human('GET', `/v1/approvals/${approvalId}`);
    expect(still.body.status).toBe('pending');
    expect(up.requests.length).toBe(sentBefore);

    // Its person decides it as usual, at once (nothing is jammed): sent once, audited with them.
    const decided = await human('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'allow_once' });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    expect(decided.body.status).toBe('allowed');
    await expect.poll(async () => (await human('GET', `/v1/approvals/${approvalId}`)).body.execution?.status, { timeout: 30_000 }).toBe('executed');
    expect(up.requests.length).toBe(sentBefore + 1);
    expect(await acceptedUpdates(handle)).toBe(1);
  });

  it('drops a forged supersede signal: the approval stays pending and decidable', async () => {
    const { approvalId, handle } = await pendingCall('forged-supersede');
    await handle.signal(supersedeSignal, { byApprovalId: randomUUID() });
    // A query is answered after the signal is handled (both go through the workflow's task).
    const state = await handle.query<{ approvalStatus: string }>('state');
    expect(state.approvalStatus).toBe('pending');
    expect((await human('GET', `/v1/approvals/${approvalId}`)).body.status).toBe('pending');
    const denied = await human('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'deny', reason: 'not today' });
    expect(denied.status, JSON.stringify(denied.body)).toBe(200);
    expect(denied.body.status).toBe('denied');
  });
});

// The Temporal UI shows every event of a workflow's history: the upstream's answers must not be
// there (PostgreSQL keeps them, for GET /v1/calls/{id}). Role `all` (eager, in-process answers)
// and the api/worker split (Update-with-Start, answers through updates), covered and approved.
describe('upstream answers in Temporal', () => {
  const MARK = 'upstream-private-7f3a9c';
  let gw: TestGateway;
  let api: TestGateway;
  let up: Upstream;

  beforeAll(async () => {
    up = await startUpstream();
    up.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-upstream-note': MARK });
      res.end(JSON.stringify({ ok: true, note: MARK }));
    });
    gw = await startTestGateway();
    api = await startTestGateway({ role: 'api', databaseUrl: gw.databaseUrl, taskQueue: gw.taskQueue, env: { GATEWAY_MASTER_KEY: gw.config.masterKey!.toString('base64') } });
  });
  afterAll(async () => {
    await api?.stop();
    await gw?.stop();
    await up?.close();
  });

  it('keeps response bodies and headers out of every history event, while callers get them whole', async () => {
    const admin = gw.as(gw.adminToken);
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_history_test' })).status).toBe(201);
    const made = await admin('POST', '/v1/identities/agents', { name: 'history-agent', auto_call_on_approve: false });
    expect(made.status).toBe(201);
    const agentId = made.body.identity.id as string;
    const viaAll = gw.as(made.body.key.token);
    const viaApi = api.as(made.body.key.token);
    expect((await admin('POST', `/v1/identities/${agentId}/rules`, { pattern: 'widgets:get_item:*', effect: 'allow' })).status).toBe(201);

    const callIds: string[] = [];
    for (const [as, id] of [[viaAll, 'h-1'], [viaApi, 'h-2']] as const) {
      const covered = await as('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id } });
      expect(covered.status, JSON.stringify(covered.body)).toBe(200);
      expect(covered.body.result.body.note).toBe(MARK);
      callIds.push(covered.body.call_id);
      // Approved, then resumed by the agent (the answer comes back through the replay update).
      const raised = await as('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: `made-${id}` } });
      expect(raised.status, JSON.stringify(raised.body)).toBe(202);
      expect((await admin('POST', `/v1/approvals/${raised.body.approval_id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
      const resumed = await as('POST', '/v1/actions/call', { approval_id: raised.body.approval_id });
      expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
      expect(resumed.body.result.body.note).toBe(MARK);
      callIds.push(raised.body.call_id);
      expect((await as('GET', `/v1/calls/${raised.body.call_id}`)).body.result.body.note).toBe(MARK);
    }
    // Approved with auto-call, decided through each process: sent with the decision (role all) or
    // by the workflow's own steps after it (the decision taken by the API-only replica).
    const auto = await admin('POST', '/v1/identities/agents', { name: 'history-auto-agent' });
    expect(auto.status).toBe(201);
    for (const decider of [admin, api.as(gw.adminToken)]) {
      const raised = await gw.as(auto.body.key.token)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: `auto-${callIds.length}` } });
      expect(raised.status, JSON.stringify(raised.body)).toBe(202);
      expect((await decider('POST', `/v1/approvals/${raised.body.approval_id}/resolve`, { decision: 'allow_once' })).status).toBe(200);
      await expect.poll(async () => (await admin('GET', `/v1/calls/${raised.body.call_id}`)).body.result?.body?.note, { timeout: 30_000 }).toBe(MARK);
      callIds.push(raised.body.call_id);
    }
    for (const callId of callIds) {
      const handle = gw.temporal.workflow.getHandle(callWorkflowId(callId));
      await handle.result();
      const history = historyText(await handle.fetchHistory());
      // The history is read whole: the call's own description and status are there.
      expect(history).toContain('"status_code":200');
      expect(history, `call ${callId}`).not.toContain(MARK);
    }
  });
});
