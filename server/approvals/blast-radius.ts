// GET /v1/approvals/{id}/blast-radius: loads what the pure computation in
// core/permissions/blast-radius.ts needs (the org's identities and live rules, the other pending
// approvals and the last 30 days of calls the viewer may see) and names what it finds.
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { blastRadius } from '../../core/permissions/blast-radius.ts';
import type { Rule } from '../../core/permissions/chain.ts';
import { NOT_IN_CHAIN_MESSAGE } from '../../core/permissions/authority.ts';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { AppError, invalidRequest } from '../errors.ts';
import { readVisibleApproval } from './service.ts';
import * as identities from '../identities/store.ts';

export const AUDIT_WINDOW_DAYS = 30;
/** Bounds on what one request scans; the answer says when it stopped early. */
const MAX_PENDING = 500;
const MAX_CALLS = 20_000;

const pendingRow = z.object({
  id: z.string(),
  requester_id: z.string(),
  permission_keys: z.array(z.string()),
  risk: z.string(),
  status: z.string(),
  action_description: z.string(),
  created_at: z.date(),
  expires_at: z.date(),
});
const callRow = z.object({ call_id: z.string(), identity_chain: z.array(z.string()), permission_keys: z.array(z.string()) });

export function createBlastRadiusService(deps: { pool: DatabasePool }) {
  const { pool } = deps;
  return {
    async forTier(p: Principal, approvalId: string, tierIndex: number) {
      // Same visibility as GET /v1/approvals/{id}; only someone who may resolve it asks this.
      const { row: view, authority } = await readVisibleApproval(pool, p, approvalId);
      const admin = isAdmin(p);
      if (!authority.resolve) throw new AppError('not_in_your_chain', NOT_IN_CHAIN_MESSAGE);
      const tier = view.suggested_tiers[tierIndex];
      if (!tier) throw invalidRequest(`tier must be an index of suggested_tiers (0 to ${view.suggested_tiers.length - 1})`, { field: 'tier' });

      const mine = admin ? sql.fragment`` : sql.fragment`AND user_id = ${p.userId}`;
      const [orgIdentities, ruleRows, pending, pastCalls] = await Promise.all([
        identities.listOrgIdentities(pool, p.orgId),
        pool.any(sql.type(identities.ruleRow)`SELECT * FROM permission_rules WHERE org_id = ${p.orgId} AND revoked_at IS NULL`),
        pool.any(sql.type(pendingRow)`
          SELECT id, requester_id, permission_keys, risk, status, action_description, created_at, expires_at FROM approvals
          WHERE org_id = ${p.orgId} AND status IN ('pending', 'bubbled') AND id <> ${approvalId} ${mine}
          ORDER BY created_at DESC LIMIT ${MAX_PENDING}`),
        pool.any(sql.type(callRow)`
          SELECT DISTINCT ON (call_id) call_id, identity_chain, permission_keys FROM audit_log
          WHERE org_id = ${p.orgId} AND at > now() - make_interval(days => ${AUDIT_WINDOW_DAYS})
            AND event IN ('call.called', 'call.denied', 'approval.raised') AND call_id IS NOT NULL
            AND call_id <> (SELECT call_id FROM approvals WHERE id = ${approvalId}) ${mine}
          ORDER BY call_id, at LIMIT ${MAX_CALLS}`),
      ]);
      const byId = new Map(orgIdentities.map((r) => [r.id, identities.toChainIdentity(r)]));
      const names = new Map(orgIdentities.map((r) => [r.id, r]));
      const rules: Rule[] = ruleRows.map((r) => ({ id: r.id, identityId: r.identity_id, effect: r.effect, pattern: r.pattern, expiresAt: r.expires_at }));
      const result = blastRadius({
        identities: byId,
        rules,
        approval: { id: view.id, requesterId: view.requester_id, keys: view.permission_keys },
        resolverId: p.identityId,
        tierKeys: tier.keys,
        pending: pending.map((a) => ({ id: a.id, requesterId: a.requester_id, keys: a.permission_keys })),
        pastCalls: pastCalls
          .filter((c) => c.identity_chain.length > 0)
          .map((c) => ({ id: c.call_id, requesterId: c.identity_chain[0]!, keys: c.permission_keys })),
        now: new Date(),
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
          calls_scanned: pastCalls.length,
          calls_covered: result.coveredCallIds.length,
          truncated: pastCalls.length >= MAX_CALLS,
        },
      };
    },
  };
}

export type BlastRadiusService = ReturnType<typeof createBlastRadiusService>;
