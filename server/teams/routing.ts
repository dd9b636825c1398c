// Approvals past the requester's user (issue 29): "Bubble up" from the user goes to the user's
// approver, then to the org's admins (core/permissions/routing.ts decides who). Inside the identity
// chain the call's workflow moves an approval; past it, nothing durable waits (no timer), so the
// step is one conditional UPDATE here, with its audit row and the people's events.
import type { DatabasePool } from 'slonik';
import { nextRouting, whyYours, type Person, type Stage } from '../../core/permissions/routing.ts';
import type { AuditWriter } from '../audit/writer.ts';
import { AppError } from '../errors.ts';
import { publishBubble } from '../events/approval-events.ts';
import type { Logger } from '../logger.ts';
import * as store from './store.ts';

export interface RoutedApproval {
  id: string;
  org_id: string;
  user_id: string;
  resolver_id: string;
  routed_to: Stage;
}

const toPerson = (r: { id: string; name: string; role: Person['role']; approver_id: string | null; status: string }): Person => ({
  id: r.id,
  name: r.name,
  role: r.role,
  approverId: r.approver_id,
  active: r.status === 'active',
});

export interface ApprovalRoutingDeps {
  pool: DatabasePool;
  /** Audit rows (bound to the pool by the composition root). */
  audit: AuditWriter;
  logger: Pick<Logger, 'warn'>;
  /**
   * Tells the new resolvers where the approval went (issue 30's Slack and email notices, routing
   * rules evaluated again); fire-and-forget, never throws. Absent: nobody is told but the stream.
   */
  announce?: (orgId: string, approvalId: string, occasion: string) => Promise<void>;
}

export function createApprovalRouting(deps: ApprovalRoutingDeps) {
  const { pool } = deps;

  async function people(orgId: string): Promise<Person[]> {
    return (await store.peopleOfOrg(pool, orgId)).map(toPerson);
  }

  /** One step up from where `a` sits; `actorId` null: the system (an approver was deactivated). */
  async function step(a: RoutedApproval, actorId: string | null, known?: Person[]): Promise<Stage> {
    const all = known ?? (await people(a.org_id));
    const user = all.find((p) => p.id === a.user_id);
    const next = user ? nextRouting(a.routed_to, user, all) : null;
    if (!next) {
      throw new AppError('conflict', 'nobody is above: the approval already sits with the org’s admins (decide it, or deny it)', { status: 'bubbled', routed_to: a.routed_to });
    }
    const from = a.resolver_id;
    const moved = await store.routeApproval(pool, {
      id: a.id,
      fromStage: a.routed_to,
      fromResolver: from,
      toStage: next.stage,
      toResolver: next.stage === 'approver' ? next.resolverIds[0]! : from,
      routedFrom: actorId ?? from,
    });
    if (!moved) throw new AppError('conflict', 'the approval changed meanwhile (decided or bubbled): reload it', { reason: 'changed' });
    await deps.audit.append({
      orgId: moved.org_id,
      event: 'approval.bubbled',
      userId: moved.user_id,
      actorId,
      identityChain: await store.chainIds(pool, moved.requester_id),
      permissionKeys: moved.permission_keys,
      decision: 'bubble',
      callId: moved.call_id,
      approvalId: moved.id,
      details: { from, to: next.stage === 'approver' ? next.resolverIds[0] : 'admins', stage: next.stage, automatic: actorId === null },
    });
    const data = { approval_id: moved.id, status: moved.status, risk: moved.risk, action_description: moved.action_description, requester_id: moved.requester_id, resolver_id: moved.resolver_id };
    // The requester's user sees it leave; the new resolvers see it arrive (admins read the org's stream).
    for (const userId of new Set([moved.user_id, ...(next.stage === 'approver' ? next.resolverIds : [])])) {
      await publishBubble({ db: pool, logger: deps.logger }, { orgId: moved.org_id, userId }, moved.id, `${next.stage}_${userId}`, data);
    }
    await deps.announce?.(moved.org_id, moved.id, `routed-${next.stage}-${next.stage === 'approver' ? next.resolverIds[0] : 'admins'}`);
    return next.stage;
  }

  return {
    people,
    /** "Bubble up" by `actorId` when the approval sits with the user or beyond. */
    escalate: async (a: RoutedApproval, actorId: string): Promise<void> => {
      await step(a, actorId);
    },

    /**
     * The automatic bubble past the user (the call's workflow, when the org's auto-bubble clock
     * runs out): one step from `expected`, the stage the workflow last saw. When the approval is
     * elsewhere (a person moved it meanwhile, or a retry of this step already did) it is not moved
     * again: the answer is where it is, so a retried activity never skips a stage.
     */
    async autoStep(approvalId: string, expected: Stage): Promise<{ stage: Stage; top: boolean }> {
      const a = await store.openApproval(pool, approvalId);
      if (!a) return { stage: expected, top: true };
      const all = await people(a.org_id);
      const user = all.find((p) => p.id === a.user_id);
      if (a.routed_to === expected && user && nextRouting(expected, user, all)) {
        const moved = await step(a, null, all);
        return { stage: moved, top: !nextRouting(moved, user, all) };
      }
      return { stage: a.routed_to, top: !user || !nextRouting(a.routed_to, user, all) };
    },

    /**
     * After a deactivation (or once `personId` is no longer `forUserId`'s approver): what waited on
     * that person as an approver (of `forUserId` only, when given) goes on to the admins.
     */
    async rerouteFrom(orgId: string, personId: string, forUserId?: string): Promise<void> {
      for (const a of await store.waitingOn(pool, orgId, personId, forUserId)) {
        try {
          await step(a, null);
        } catch (err) {
          deps.logger.warn({ approval_id: a.id, err: (err as Error).message }, 'could not move an approval on from a former approver');
        }
      }
    },

    whyYours,
  };
}

export type ApprovalRouting = ReturnType<typeof createApprovalRouting>;
