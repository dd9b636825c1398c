// The approval service on its own: its view reader and the call workflows it decides through are
// fakes given as arguments (test/unit/support/approval-fakes.ts), its clock is pinned. What is
// judged is the service's own logic — who may decide, see and cancel, what reaches the workflow,
// edits only while open, batches reported per id, a gone workflow settled — with no PostgreSQL or
// Temporal. The same paths run end to end in the integration suite (approvals*.test.ts).
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/common';
import { describe, expect, it, vi } from 'vitest';
import { createApprovalService, type CallsOfApprovals } from '../../../server/approvals/service.ts';
import type { ApprovalViewRow } from '../../../server/approvals/store.ts';
import { AppError } from '../../../server/errors.ts';
import type { ApprovedEdit } from '../../../workflows/definitions.ts';
import { approvalView, fakeViews, fakeWorkflows, org } from '../support/approval-fakes.ts';

const NOW = Date.parse('2026-11-28T12:00:00Z');

function setup(rows: (o: ReturnType<typeof org>) => ApprovalViewRow[], answer?: Parameters<typeof fakeWorkflows>[0]) {
  const o = org();
  const all = rows(o);
  const views = fakeViews(o, all);
  const workflows = fakeWorkflows(answer);
  const settled: string[] = [];
  const derived: string[] = [];
  const calls: CallsOfApprovals = {
    describeFor: () => Promise.resolve('Create an issue named "x" in acme/app'),
    settleWithoutWorkflow: (id) => {
      settled.push(id);
      return Promise.reject(new AppError('conflict', 'workflow_gone'));
    },
    deriveEdit: (_resolver, callId) => {
      derived.push(callId);
      return Promise.resolve({ permissionKeys: ['github:create_issue:acme/app'], description: 'edited', diff: [] } as unknown as ApprovedEdit);
    },
    editForm: () => Promise.reject(new Error('not used')),
  };
  const decidedMetric = vi.fn();
  const escalated: string[] = [];
  const service = createApprovalService({
    views,
    workflows: workflows.port,
    config: { publicUrl: 'https://gw.example' },
    calls,
    escalate: (a) => {
      escalated.push(a.id);
      return Promise.resolve();
    },
    metrics: { approvalDecided: decidedMetric },
    now: () => NOW,
  });
  return { o, rows: all, views, service, ...workflows, settled, derived, decidedMetric, escalated };
}

const codeOf = async (p: Promise<unknown>) => {
  const err: unknown = await p.then(() => undefined, (e: unknown) => e);
  return err instanceof AppError ? err.code : err;
};

describe('deciding one approval', () => {
  it('an ancestor of the requester decides: the workflow gets the decision, the resolver and whether the allow sends; the record carries what was disclosed', async () => {
    const t = setup((o) => [approvalView(o, { created_at: new Date(NOW - 90_000) })]);
    const row = t.rows[0]!;
    const out = await t.service.resolve(t.o.user(t.o.ids.ann), row.id, { decision: 'allow_once', reason: 'fine' });
    expect(t.decided).toEqual([{ callId: row.call_id, args: { decision: 'allow', reason: 'fine', resolverId: t.o.ids.ann, resolverIsAdmin: false }, autoCall: true }]);
    expect(out.status).toBe('allowed');
    expect(out.disclosed).toEqual(row.call!.disclosed);
    // Counted once, by channel, with the time since it was raised on the service's clock.
    expect(t.decidedMetric).toHaveBeenCalledWith('allow', 'api', 90);
  });

  it('the requester cannot decide its own approval; an identity outside its chain cannot either; nothing reaches the workflow', async () => {
    const t = setup((o) => [approvalView(o)]);
    const id = t.rows[0]!.id;
    expect(await codeOf(t.service.resolve(t.o.agent(t.o.ids.sub), id, { decision: 'allow_once' }))).toBe('forbidden');
    expect(await codeOf(t.service.resolve(t.o.user(t.o.ids.bob), id, { decision: 'deny' }))).toBe('not_in_your_chain');
    expect(await codeOf(t.service.resolve(t.o.user(t.o.ids.bob), randomUUID(), { decision: 'deny' }))).toBe('not_found');
    expect(t.decided).toEqual([]);
    expect(t.decidedMetric).not.toHaveBeenCalled();
  });

  it("an admin, and the user's approver the approval was routed to, decide with authority beyond the chain", async () => {
    const t = setup((o) => [approvalView(o), approvalView(o, { routed_to: 'approver', resolver_id: o.ids.bob })]);
    await t.service.resolve(t.o.user(t.o.ids.admin, 'admin'), t.rows[0]!.id, { decision: 'deny' });
    await t.service.resolve(t.o.user(t.o.ids.bob, 'approver'), t.rows[1]!.id, { decision: 'deny' });
    expect(t.decided.map((d) => [d.args.resolverId, d.args.resolverIsAdmin])).toEqual([
      [t.o.ids.admin, true],
      [t.o.ids.bob, true],
    ]);
  });

  it('an edit goes only with a pending approval: a decided one is a conflict and the edit is not even derived', async () => {
    const t = setup((o) => [approvalView(o, { status: 'denied' }), approvalView(o)]);
    const ann = t.o.user(t.o.ids.ann);
    expect(await codeOf(t.service.resolve(ann, t.rows[0]!.id, { decision: 'allow_once', params: { title: 'y' } }))).toBe('conflict');
    expect(t.derived).toEqual([]);
    await t.service.resolve(ann, t.rows[1]!.id, { decision: 'allow_once', params: { title: 'y' } });
    expect(t.derived).toEqual([t.rows[1]!.call_id]);
    expect(t.decided[0]!.args.edit).toMatchObject({ description: 'edited' });
  });

  it('a workflow that is gone is settled, and the approver is told the approval is no longer open', async () => {
    const t = setup((o) => [approvalView(o)], (callId) => new WorkflowNotFoundError('gone', `call-${callId}`, undefined));
    expect(await codeOf(t.service.resolve(t.o.user(t.o.ids.ann), t.rows[0]!.id, { decision: 'deny' }))).toBe('conflict');
    expect(t.settled).toEqual([t.rows[0]!.id]);
  });

  it('a bubble past the chain goes to the people routing it, not to the workflow', async () => {
    const t = setup((o) => [approvalView(o, { routed_to: 'approver', resolver_id: o.ids.bob })]);
    await t.service.resolve(t.o.user(t.o.ids.bob, 'approver'), t.rows[0]!.id, { decision: 'bubble' });
    expect(t.escalated).toEqual([t.rows[0]!.id]);
    expect(t.decided).toEqual([]);
  });
});

describe('deciding many at once', () => {
  it('each id on its own, in the order given: decided, refused with its reason, an unexpected failure logged and reported as internal', async () => {
    const boom = randomUUID();
    const t = setup(
      (o) => [approvalView(o), approvalView(o, { requester_id: o.ids.ann, user_id: o.ids.ann }), approvalView(o, { call_id: boom })],
      (callId, args) => (callId === boom ? new Error('socket hang up') : { id: callId, status: args.decision === 'deny' ? 'denied' : 'allowed', relationship: 'downstream', risk: 'med', permission_keys: [], suggested_tiers: [], derived_keys: [], expires_at: new Date(NOW).toISOString() }),
    );
    const log = { error: vi.fn() };
    const missing = randomUUID();
    const { results } = await t.service.resolveMany(t.o.user(t.o.ids.ann), [t.rows[0]!.id, t.rows[1]!.id, missing, t.rows[2]!.id], { decision: 'deny', reason: 'no' }, log);
    expect(results.map((r) => [r.id, r.status, r.status === 'refused' ? r.error.code : r.approval.status])).toEqual([
      [t.rows[0]!.id, 'decided', 'denied'],
      [t.rows[1]!.id, 'refused', 'forbidden'],
      [missing, 'refused', 'not_found'],
      [t.rows[2]!.id, 'refused', 'internal'],
    ]);
    // The internal error's text stays in the log, never in the answer.
    expect(JSON.stringify(results)).not.toContain('socket hang up');
    expect(log.error).toHaveBeenCalledOnce();
  });

  it('a body no approval could take is refused before any approval is read or decided', async () => {
    const t = setup((o) => [approvalView(o)]);
    expect(await codeOf(t.service.resolveMany(t.o.user(t.o.ids.ann), [t.rows[0]!.id], { decision: 'allow_remember' }))).toBe('invalid_request');
    expect(t.views.queries).toEqual([]);
    expect(t.decided).toEqual([]);
  });
});

describe('reading and cancelling', () => {
  it('a page ends with a cursor only when there is more, and the cursor reads on from the last row; a forged cursor is invalid_request', async () => {
    const t = setup((o) => [0, 1, 2].map((i) => approvalView(o, { created_at: new Date(NOW - i * 1000) })));
    const ann = t.o.user(t.o.ids.ann);
    const first = await t.service.list(ann, { limit: 2 });
    expect(first.approvals.map((a) => a.id)).toEqual([t.rows[0]!.id, t.rows[1]!.id]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await t.service.list(ann, { limit: 2, cursor: first.next_cursor! });
    expect(second.approvals.map((a) => a.id)).toEqual([t.rows[2]!.id]);
    expect(second.next_cursor).toBeNull();
    expect(await codeOf(t.service.list(ann, { limit: 2, cursor: Buffer.from('yesterday|me').toString('base64url') }))).toBe('invalid_request');
  });

  it('someone outside the chain reads not_found, never a hint that the approval exists', async () => {
    const t = setup((o) => [approvalView(o)]);
    expect(await codeOf(t.service.get(t.o.user(t.o.ids.bob), t.rows[0]!.id))).toBe('not_found');
    expect((await t.service.get(t.o.user(t.o.ids.ann), t.rows[0]!.id)).id).toBe(t.rows[0]!.id);
  });

  it('only the requester cancels, with its own reason or the default one', async () => {
    const t = setup((o) => [approvalView(o)]);
    const row = t.rows[0]!;
    expect(await codeOf(t.service.cancel(t.o.user(t.o.ids.ann), row.id))).toBe('forbidden');
    await t.service.cancel(t.o.agent(t.o.ids.sub), row.id);
    expect(t.cancelled).toEqual([{ callId: row.call_id, callerId: t.o.ids.sub, reason: 'cancelled by the requester' }]);
  });

  it('self-approval: only over OAuth, only the agent\'s own approval, decided as its user and counted as MCP', async () => {
    const t = setup((o) => [approvalView(o, { requester_id: o.ids.agent }), approvalView(o)]);
    const viaKey = t.o.agent(t.o.ids.agent);
    const viaOauth = t.o.agent(t.o.ids.agent, 'oauth');
    expect(await codeOf(t.service.resolveSelf(viaKey, t.rows[0]!.id, { decision: 'allow_once' }))).toBe('forbidden');
    expect(await codeOf(t.service.resolveSelf(viaOauth, t.rows[1]!.id, { decision: 'allow_once' }))).toBe('forbidden');
    const out = await t.service.resolveSelf(viaOauth, t.rows[0]!.id, { decision: 'allow_once' });
    expect(out.relationship).toBe('self');
    expect(t.decided).toHaveLength(1);
    expect(t.decided[0]!.args).toMatchObject({ resolverId: t.o.ids.ann, resolverIsAdmin: false });
    expect(t.decidedMetric).toHaveBeenCalledWith('allow', 'mcp', expect.any(Number));
  });
});
