// GET /v1/approvals/{id}/blast-radius: loads what the pure computation in
// core/permissions/blast-radius.ts needs (the org's identities and live rules, the other pending
// approvals and the last 30 days of calls the viewer may see) and names what it finds.
import type { DatabasePool } from 'slonik';
import { blastRadius } from '../../core/permissions/blast-radius.ts';
import { NOT_IN_CHAIN_MESSAGE } from '../../core/permissions/authority.ts';
import type { AuditReader } from '../audit/readers.ts';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { AppError, invalidRequest } from '../errors.ts';
import { toChainIdentity, type IdentityReader } from '../identities/readers.ts';
import { readVisibleApproval } from './read.ts';
import type { ReadAlong } from '../auth/read-along.ts';
import { approvalViewReader, otherOpenApprovals } from './store.ts';

export const AUDIT_WINDOW_DAYS = 30;
/** Bounds on what one request scans; the answer says when it stopped early. */
const MAX_PENDING = 500;
const MAX_CALLS = 20_000;

export function createBlastRadiusService(deps: {
  pool: DatabasePool;
  identities: Pick<IdentityReader, 'listOrgIdentities' | 'liveRulesOfOrg'>;
  audit: Pick<AuditReader, 'recentCallKeys'>;
}) {
  const { pool } = deps;
  const views = approvalViewReader(pool);
  return {
    /** `along`: what the request's authentication read (read-along.ts). */
    async forTier(p: Principal, approvalId: string, tierIndex: number, along?: ReadAlong) {
      // Same visibility as GET /v1/approvals/{id}; only someone who may resolve it asks this.
      const { row: view, authority } = await readVisibleApproval(views, p, approvalId, along);
      const admin = isAdmin(p);
      if (!authority.resolve) throw new AppError('not_in_your_chain', NOT_IN_CHAIN_MESSAGE);
      const tier = view.suggested_tiers[tierIndex];
      if (!tier) throw invalidRequest(`tier must be an index of suggested_tiers (0 to ${view.suggested_tiers.length - 1})`, { field: 'tier' });

      // Members weigh it against their own approvals and calls; admins against the org's.
      const userId = admin ? null : p.userId;
      const [orgIdentities, rules, pending] = await Promise.all([
        deps.identities.listOrgIdentities(p.orgId),
        deps.identities.liveRulesOfOrg(p.orgId),
        otherOpenApprovals(pool, { orgId: p.orgId, userId, exceptId: approvalId, limit: MAX_PENDING }),
      ]);
      const byId = new Map(orgIdentities.map((r) => [r.id, toChainIdentity(r)]));
      const names = new Map(orgIdentities.map((r) => [r.id, r]));
      const input = {
        identities: byId,
        rules,
        approval: { id: view.id, requesterId: view.requester_id, keys: view.permission_keys },
        resolverId: p.identityId,
        tierKeys: tier.keys,
        pending: pending.map((a) => ({ id: a.id, requesterId: a.requester_id, keys: a.permission_keys })),
        now: new Date(),
      };
      // A past call is covered only through a remembered rule on its chain: of the recent calls,
      // only those on a target's chain leave the database (the others are counted).
      const { targetIds } = blastRadius({ ...input, pending: [], pastCalls: [] });
      const recent = await deps.audit.recentCallKeys({
        orgId: p.orgId, userId, days: AUDIT_WINDOW_DAYS, exceptApprovalId: approvalId, limit: MAX_CALLS, onChainsOf: targetIds,
      });
      const result = blastRadius({
        ...input,
        pastCalls: recent.on_chains
          .filter((c) => c.identity_chain.length > 0)
          .map((c) => ({ id: c.call_id, requesterId: c.identity_chain[0]!, keys: c.permission_keys })),
      });
      const who = (id: string) => {
        const r = names.get(id);
        return r ? { id, kind: r.kind, name: r.name } : { id, kind: null, name: null };
      };
      const covered = new Set(result.coveredPendingIds);
      return {
        approval_id: view.id,
        tier: { index: tierIndex, keys: tier.keys, description: tier.description },
        rule_targets: result.targetIds.map(who),
        pending_covered: pending
          .filter((a) => covered.has(a.id))
          .map((a) => ({
            id: a.id,
            status: a.status,
            risk: a.risk,
            action_description: a.action_description,
            permission_keys: a.permission_keys,
            requester: who(a.requester_id),
            created_at: a.created_at.toISOString(),
            expires_at: a.expires_at.toISOString(),
          })),
        audit: {
          window_days: AUDIT_WINDOW_DAYS,
          calls_scanned: recent.scanned,
          calls_covered: result.coveredCallIds.length,
          truncated: recent.scanned >= MAX_CALLS,
        },
      };
    },
  };
}

export type BlastRadiusService = ReturnType<typeof createBlastRadiusService>;
