// The call service on its own: its stored-call reads, the approvals it reads, the workflow port and
// its preparer/starter/replay parts are fakes given as arguments. What is judged is the service's
// own logic — who may read a call or resume it, what a resume answers from the rows before it asks
// the workflow, the rate-limit token a resume takes, best-effort cancels of revoked identities, and
// the overhead it measures — with no PostgreSQL or Temporal (those run in the integration suite).
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/common';
import { describe, expect, it, vi } from 'vitest';
import type { Principal } from '../../../server/auth/principal.ts';
import type { CallPreparer, Prepared } from '../../../server/calls/prepare.ts';
import { createCallService, type CallReads } from '../../../server/calls/service.ts';
import type { ApprovalRow, CallRow, ExecutionRow } from '../../../server/calls/store.ts';
import { AppError } from '../../../server/errors.ts';
import type { IdentityRow } from '../../../server/identities/readers.ts';
import type { CallOutcome } from '../../../workflows/definitions.ts';
import { approvalView, fakeViews, fakeWorkflows, ORG, org } from '../support/approval-fakes.ts';

function callRow(o: ReturnType<typeof org>, over: Partial<CallRow> = {}): CallRow {
  return {
    id: randomUUID(),
    org_id: ORG,
    requester_id: o.ids.sub,
    user_id: o.ids.ann,
    service: 'github',
    template: 'github',
    action: 'create_issue',
    runtime: 'http',
    risk: 'write',
    permission_keys: ['github:create_issue:acme/app'],
    description: 'Create an issue in acme/app',
    request_redacted: {},
    request_envelope: null,
    disclosed: [],
    status: 'called',
    http_status_code: 201,
    request_id: null,
    created_at: new Date(),
    finished_at: new Date(),
    result: { status_code: 201, body: { number: 7 }, duration_ms: 12 },
    ...over,
  };
}

const called = (duration_ms: number): CallOutcome => ({ status: 'called', result: { status_code: 200, headers: {}, body: {}, duration_ms } as never, action_description: 'x' });

function setup(opts: { approvals?: (o: ReturnType<typeof org>) => ReturnType<typeof approvalView>[]; calls?: (o: ReturnType<typeof org>) => CallRow[]; executions?: Record<string, ExecutionRow>; admit?: () => Promise<void>; replay?: CallOutcome } = {}) {
  const o = org();
  const approvals = opts.approvals?.(o) ?? [];
  const calls = opts.calls?.(o) ?? [];
  const workflows = fakeWorkflows();
  const settledNeverStarted: string[] = [];
  const settledGone: string[] = [];
  const admitted: string[] = [];
  const replayed: string[] = [];
  const warn = vi.fn();
  const metrics = { rateLimited: vi.fn(), overheadSeconds: vi.fn() };
  const reads: CallReads = {
    settleIfNeverStarted: (c) => {
      settledNeverStarted.push(c.id);
      return Promise.resolve(c);
    },
    callAsOfNow: (callId) => {
      const call = calls.find((c) => c.id === callId);
      if (!call) return Promise.resolve(null);
      const approval = (approvals.find((a) => (call.approval_id ? a.id === call.approval_id : a.call_id === callId)) as ApprovalRow | undefined) ?? null;
      return Promise.resolve({ call, approval, execution: approval ? (opts.executions?.[approval.id] ?? null) : null });
    },
    openApprovalsOf: (ids) => Promise.resolve(approvals.filter((a) => ids.includes(a.requester_id) && (a.status === 'pending' || a.status === 'bubbled'))),
    admit: (identityId) => {
      admitted.push(identityId);
      return opts.admit?.() ?? Promise.resolve();
    },
  };
  const prepared = { description: 'prepared' } as unknown as Prepared;
  const service = createCallService({
    reads,
    approvals: fakeViews(o, approvals),
    workflows: workflows.port,
    chains: { getChain: (id) => Promise.resolve(o.chainOf(id).map((cid) => ({ id: cid, status: 'active' }) as IdentityRow)) },
    preparer: { prepareAction: () => Promise.resolve(prepared), prepareHttp: () => Promise.resolve(prepared), namesFor: () => Promise.resolve({}) } as unknown as CallPreparer,
    start: () => new Promise((resolve) => setTimeout(() => resolve({ ...called(5), call_id: randomUUID() }), 20)),
    replay: (_p, approvalId) => {
      replayed.push(approvalId);
      return Promise.resolve(opts.replay ?? called(3));
    },
    settleWithoutWorkflow: (id) => {
      settledGone.push(id);
      return Promise.reject(new AppError('conflict', 'gone'));
    },
    logger: { warn },
    metrics,
  });
  return { o, approvals, calls, service, ...workflows, settledNeverStarted, settledGone, admitted, replayed, warn, metrics };
}

const codeOf = async (p: Promise<unknown>) => {
  const err: unknown = await p.then(() => undefined, (e: unknown) => e);
  return err instanceof AppError ? err.code : err;
};

describe('reading a call', () => {
  it('the identity that made it, those above it on its chain and the admins read it; anyone else in or out of the org reads not_found', async () => {
    const t = setup({ calls: (o) => [callRow(o)] });
    const id = t.calls[0]!.id;
    for (const who of [t.o.agent(t.o.ids.sub), t.o.agent(t.o.ids.agent), t.o.user(t.o.ids.ann), t.o.user(t.o.ids.admin, 'admin')]) {
      expect((await t.service.get(who, id)).call_id).toBe(id);
    }
    expect(await codeOf(t.service.get(t.o.user(t.o.ids.bob), id))).toBe('not_found');
    const stranger: Principal = { ...t.o.user(t.o.ids.admin, 'admin'), orgId: randomUUID() };
    expect(await codeOf(t.service.get(stranger, id))).toBe('not_found');
    expect(await codeOf(t.service.get(t.o.user(t.o.ids.ann), randomUUID()))).toBe('not_found');
    // Every read settles a call whose workflow never started before presenting it.
    expect(t.settledNeverStarted).toEqual([id, id, id, id]);
  });
});

describe('resuming an approved call', () => {
  const allowed = (o: ReturnType<typeof org>) => [approvalView(o, { status: 'allowed' })];

  it('only the requester resumes; the token is taken before anything is read', async () => {
    const t = setup({ approvals: allowed });
    const id = t.approvals[0]!.id;
    expect(await codeOf(t.service.resume(t.o.user(t.o.ids.ann), id))).toBe('forbidden');
    expect(t.admitted).toEqual([t.o.ids.ann]);
    const out = await t.service.resume(t.o.agent(t.o.ids.sub), id);
    expect(out).toMatchObject({ status: 'called', call_id: t.approvals[0]!.call_id });
    expect(t.replayed).toEqual([id]);
  });

  it('a call that already ran answers from its rows and is not replayed; a pending one is a conflict naming its state', async () => {
    const t = setup({ approvals: (o) => [approvalView(o, { status: 'allowed', execution: { id: randomUUID(), status: 'executed', runtime: 'http', triggered_by: 'auto', http_status_code: 201, result: { status_code: 201, body: { number: 9 } }, error: null, expires_at: new Date() } }), approvalView(o)] });
    const sub = t.o.agent(t.o.ids.sub);
    const ran = await t.service.resume(sub, t.approvals[0]!.id);
    expect(ran).toMatchObject({ status: 'called', result: { body: { number: 9 } } });
    const err = await t.service.resume(sub, t.approvals[1]!.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('conflict');
    expect((err as AppError).details).toMatchObject({ status: 'pending', call_id: t.approvals[1]!.call_id });
    expect(t.replayed).toEqual([]);
  });

  it('an empty bucket refuses the resume with rate_limited, counted once, and nothing is replayed', async () => {
    const t = setup({ approvals: allowed, admit: () => Promise.reject(new AppError('rate_limited', 'too many calls', { retry_after_seconds: 3 })) });
    expect(await codeOf(t.service.resume(t.o.agent(t.o.ids.sub), t.approvals[0]!.id))).toBe('rate_limited');
    expect(t.metrics.rateLimited).toHaveBeenCalledOnce();
    expect(t.replayed).toEqual([]);
  });
});

describe('cancelling the approvals of revoked identities', () => {
  it('each open approval is cancelled as its requester; a gone workflow is settled; another failure is logged and the rest go on', async () => {
    const t = setup({ approvals: (o) => [approvalView(o), approvalView(o, { status: 'bubbled' }), approvalView(o, { status: 'denied' }), approvalView(o, { requester_id: o.ids.bob })] });
    const [open, bubbled] = t.approvals;
    let n = 0;
    t.port.cancel = (callId, callerId, reason) => {
      t.cancelled.push({ callId, callerId, reason });
      n += 1;
      return Promise.reject(n === 1 ? new WorkflowNotFoundError('gone', `call-${callId}`, undefined) : new Error('frontend unavailable'));
    };
    await t.service.cancelPendingOf([t.o.ids.sub], 'agent revoked');
    expect(t.cancelled).toEqual([
      { callId: open!.call_id, callerId: t.o.ids.sub, reason: 'agent revoked' },
      { callId: bubbled!.call_id, callerId: t.o.ids.sub, reason: 'agent revoked' },
    ]);
    expect(t.settledGone).toEqual([open!.id]);
    expect(t.warn).toHaveBeenCalledOnce();
    expect(t.warn.mock.calls[0]![0]).toMatchObject({ approval_id: bubbled!.id });
  });
});

describe('measuring the overhead', () => {
  it("a called answer counts the gateway's own time: the whole less the upstream's duration", async () => {
    const t = setup();
    await t.service.callAction(t.o.agent(t.o.ids.sub), { service: 'github', action: 'create_issue', params: {} } as never, null);
    expect(t.metrics.overheadSeconds).toHaveBeenCalledOnce();
    const [path, seconds] = t.metrics.overheadSeconds.mock.calls[0]! as [string, number];
    expect(path).toBe('covered');
    // The fake start took at least 20 ms in all; the upstream's 5 ms are not the gateway's.
    expect(seconds).toBeGreaterThanOrEqual(0.014);
  });
});
