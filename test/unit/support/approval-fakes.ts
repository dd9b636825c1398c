// Fakes of what the approval and call services are given (their stores and the workflow port), for
// unit tests of the services' own logic. The view reader answers as the SQL view does: the
// viewer's relationship from the identities' parent links, one approval by id whatever the
// viewer's authority, a page newest first before a cursor.
import { randomUUID } from 'node:crypto';
import type { AgentPrincipal, UserPrincipal } from '../../../server/auth/principal.ts';
import type { ApprovalQuery, ApprovalViewReader, ApprovalViewRow } from '../../../server/approvals/store.ts';
import type { CallWorkflows } from '../../../server/approvals/workflow-port.ts';
import type { ApprovalRecord, ResolveInput } from '../../../workflows/definitions.ts';

export const ORG = randomUUID();

/** A small org: an admin, a member (Ann) with an agent and its subagent, another member (Bob). */
export function org() {
  const ids = { admin: randomUUID(), ann: randomUUID(), agent: randomUUID(), sub: randomUUID(), bob: randomUUID() };
  const parent = new Map<string, string | null>([
    [ids.admin, null],
    [ids.ann, null],
    [ids.agent, ids.ann],
    [ids.sub, ids.agent],
    [ids.bob, null],
  ]);
  const user = (identityId: string, role: UserPrincipal['role'] = 'member'): UserPrincipal => ({ type: 'user', orgId: ORG, userId: identityId, identityId, role, sessionId: randomUUID() });
  const agent = (identityId: string, via: AgentPrincipal['via'] = 'agent_key'): AgentPrincipal => ({
    type: 'agent',
    orgId: ORG,
    userId: ids.ann,
    identityId,
    kind: identityId === ids.sub ? 'subagent' : 'agent',
    via,
    credentialId: randomUUID(),
  });
  /** Ancestors of `id`, nearest first (the chain above it). */
  const ancestors = (id: string): string[] => {
    const up: string[] = [];
    for (let p = parent.get(id) ?? null; p; p = parent.get(p) ?? null) up.push(p);
    return up;
  };
  return { ids, user, agent, ancestors, chainOf: (id: string) => [id, ...ancestors(id)] };
}
export type Org = ReturnType<typeof org>;

/** A pending approval of a call by `requester` (the subagent's user is Ann). */
export function approvalView(o: Org, over: Partial<ApprovalViewRow> = {}): ApprovalViewRow {
  const created = over.created_at ?? new Date(Date.now() - 60_000);
  return {
    id: randomUUID(),
    call_id: randomUUID(),
    org_id: ORG,
    requester_id: o.ids.sub,
    user_id: o.ids.ann,
    gap_identity_id: o.ids.sub,
    resolver_id: o.ids.agent,
    status: 'pending',
    risk: 'med',
    permission_keys: ['github:create_issue:acme/app'],
    derived_keys: [],
    suggested_tiers: [{ keys: ['github:create_issue:acme/app'], description: 'this repository' }],
    gap_reasons: [],
    action_description: 'Create an issue in acme/app',
    auto_call_on_approve: true,
    dedupe_key: randomUUID(),
    expires_at: new Date(created.getTime() + 3_600_000),
    decision: null,
    reason: null,
    remember_keys: null,
    remember_ttl: null,
    resolved_by: null,
    resolved_at: null,
    bubble_count: 0,
    created_at: created,
    updated_at: created,
    relationship: 'not_in_your_chain',
    execution: null,
    call: { service: 'github', template: 'github', action: 'create_issue', description: 'Create an issue in acme/app', request: {}, disclosed: [{ field: 'title', value: 'x' }] },
    requester: { id: over.requester_id ?? o.ids.sub, kind: 'subagent', name: 'triage' },
    routed_to: 'chain',
    routed_from: null,
    people: { user: { id: o.ids.ann, name: 'Ann', role: 'member', approver_id: null }, routed_from: null, approver: null, admin_ids: [o.ids.admin] },
    ...over,
  };
}

/** The view reader over `rows`: every query is recorded in `queries`. */
export function fakeViews(o: Org, rows: ApprovalViewRow[]): ApprovalViewReader & { queries: ApprovalQuery[] } {
  const queries: ApprovalQuery[] = [];
  const relationshipOf = (viewer: string, row: ApprovalViewRow): ApprovalViewRow['relationship'] =>
    row.requester_id === viewer ? 'self' : o.ancestors(row.requester_id).includes(viewer) ? 'downstream' : 'not_in_your_chain';
  const read = async (q: ApprovalQuery) => {
    queries.push(q);
    const visible = (r: ApprovalViewRow) => q.admin || relationshipOf(q.viewerId, r) !== 'not_in_your_chain' || (r.routed_to === 'approver' && r.resolver_id === q.viewerId);
    return rows
      .filter((r) => r.org_id === q.orgId && (q.id ? r.id === q.id : visible(r)))
      .filter((r) => !q.before || r.created_at < q.before.at || (r.created_at.getTime() === q.before.at.getTime() && r.id < q.before.id))
      .sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || (a.id < b.id ? 1 : -1))
      .slice(0, q.limit)
      .map((r) => ({ ...r, relationship: relationshipOf(q.viewerId, r) }));
  };
  return Object.assign(read, { queries });
}

/** The workflow port, recording what it was sent; `answer` decides what each decision returns or throws. */
export function fakeWorkflows(answer: (callId: string, args: ResolveInput) => ApprovalRecord | Error = recordFor) {
  const decided: { callId: string; args: ResolveInput; autoCall: boolean }[] = [];
  const cancelled: { callId: string; callerId: string; reason: string }[] = [];
  const port: CallWorkflows = {
    decide(callId, args, autoCall) {
      decided.push({ callId, args, autoCall });
      const out = answer(callId, args);
      return out instanceof Error ? Promise.reject(out) : Promise.resolve(out);
    },
    cancel(callId, callerId, reason) {
      cancelled.push({ callId, callerId, reason });
      return Promise.resolve({ ...recordFor(callId, { decision: 'deny', resolverId: callerId, resolverIsAdmin: false }), status: 'cancelled' });
    },
  };
  return { port, decided, cancelled };
}

function recordFor(_callId: string, args: ResolveInput): ApprovalRecord {
  return {
    id: randomUUID(),
    status: args.decision === 'deny' ? 'denied' : 'allowed',
    relationship: 'downstream',
    risk: 'med',
    permission_keys: [],
    suggested_tiers: [],
    derived_keys: [],
    expires_at: new Date(Date.now() + 3_600_000).toISOString(),
  };
}
