// GET /v1/approvals/{id}/blast-radius: loads what the pure computation in
// core/permissions/blast-radius.ts needs and names what it finds. Bounded by what the tier can
// touch, not by the org: the requester's chain with the rules its keys can need; then, side by
// side, the other open approvals of the rule targets' subtrees (at most 500) and the last 30 days
// of calls the viewer may see (the newest 5,000 rows, only those on a rule target's chain leave
// the database); of those, only the ones with a key the tier's patterns match, with their chains
// and the rules their keys can need (rule-scope.ts).
import type { DatabasePool } from 'slonik';
import { blastRadius, ruleTargetIds, touchesTier, type Gated } from '../../core/permissions/blast-radius.ts';
import type { Identity, Rule } from '../../core/permissions/chain.ts';
import { storedConditionRequest } from '../../core/permissions/conditions.ts';
import { NOT_IN_CHAIN_MESSAGE } from '../../core/permissions/authority.ts';
import type { AuditReader } from '../audit/readers.ts';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { AppError, invalidRequest } from '../errors.ts';
import type { ChainLink, IdentityReader } from '../identities/readers.ts';
import { readVisibleApproval } from './read.ts';
import type { ReadAlong } from '../auth/read-along.ts';
import { approvalViewReader, openApprovalsBelow, requestsToSend } from './store.ts';

export const AUDIT_WINDOW_DAYS = 30;
/** Bounds on what one request scans; the answer says when it stopped early. */
const MAX_PENDING = 500;
/**
 * Rows of the audit window weighed: enough for "how many of my recent calls would this have
 * covered" (the answer says `truncated` past it), and O(5,000) however big the org's log.
 */
const MAX_CALLS = 5_000;

const toIdentity = (l: ChainLink): Identity => ({ id: l.id, kind: l.kind, parentId: l.parent_id, inheritPermissions: l.inherit_permissions });

/** Two reads' identities and rules as one (a rule or identity read by both counts once). */
function merged(reads: ReadonlyArray<{ identities: ChainLink[]; rules: Rule[] }>) {
  const links = new Map(reads.flatMap((r) => r.identities.map((l) => [l.id, l] as const)));
  const rules = new Map(reads.flatMap((r) => r.rules.map((rule) => [rule.id, rule] as const)));
  return { links, identities: new Map([...links.values()].map((l) => [l.id, toIdentity(l)])), rules: [...rules.values()] };
}

export function createBlastRadiusService(deps: {
  pool: DatabasePool;
  identities: Pick<IdentityReader, 'chainsWithRules'>;
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
      const approval = { id: view.id, requesterId: view.requester_id, keys: view.permission_keys };
      const own = await deps.identities.chainsWithRules(p.orgId, [view.requester_id], view.permission_keys);
      const now = new Date();
      const targetIds = ruleTargetIds({ identities: merged([own]).identities, rules: own.rules, approval, resolverId: p.identityId, now });
      // A remembered rule covers only what has a target on its chain: of the open approvals, only
      // those of the targets' subtrees are read; of the recent calls, only those on a target's
      // chain leave the database (the others are counted).
      const [pending, recent] = await Promise.all([
        targetIds.length === 0 ? [] : openApprovalsBelow(pool, { orgId: p.orgId, userId, exceptId: approvalId, below: targetIds, limit: MAX_PENDING }),
        deps.audit.recentCallKeys({ orgId: p.orgId, userId, days: AUDIT_WINDOW_DAYS, exceptApprovalId: approvalId, limit: MAX_CALLS, onChainsOf: targetIds }),
      ]);
      // Only what has a key the tier's patterns match can be covered through the new rules.
      const touched = (g: Gated) => touchesTier(tier.keys, g.keys);
      const pendingTouched = pending.map((a) => ({ id: a.id, requesterId: a.requester_id, keys: a.permission_keys })).filter(touched);
      const pastTouched = recent.on_chains
        .filter((c) => c.identity_chain.length > 0)
        .map((c) => ({ id: c.call_id, requesterId: c.identity_chain[0]!, keys: c.permission_keys }))
        .filter(touched);
      const weighed = [...pendingTouched, ...pastTouched];
      const [theirs, requests] = await Promise.all([
        deps.identities.chainsWithRules(p.orgId, [...new Set(weighed.map((g) => g.requesterId))], [...new Set(weighed.flatMap((g) => g.keys))]),
        pendingTouched.length === 0 ? [] : requestsToSend(pool, p.orgId, pendingTouched.map((g) => g.id)),
      ]);
      const requestOf = new Map(requests.map((r) => [r.id, storedConditionRequest(r.request)]));
      const read = merged([own, theirs]);
      const result = blastRadius({
        identities: read.identities,
        rules: read.rules,
        approval,
        resolverId: p.identityId,
        tierKeys: tier.keys,
        tierCondition: tier.condition ?? null,
        pending: pendingTouched.map((g) => ({ ...g, request: requestOf.get(g.id) ?? null })),
        pastCalls: pastTouched,
        now,
      });
      const who = (id: string) => {
        const r = read.links.get(id);
        return r ? { id, kind: r.kind, name: r.name } : { id, kind: null, name: null };
      };
      const covered = new Set(result.coveredPendingIds);
      return {
        approval_id: view.id,
        tier: { index: tierIndex, keys: tier.keys, description: tier.description, ...(tier.condition ? { condition: tier.condition } : {}) },
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
          truncated: recent.rows_read >= MAX_CALLS,
        },
        // Past calls are weighed by the tier's keys: the audit log keeps no request to judge a condition on.
        condition_not_weighed_for_past_calls: Boolean(tier.condition),
      };
    },
  };
}

export type BlastRadiusService = ReturnType<typeof createBlastRadiusService>;
