// Org settings: the approval clocks of DESIGN.md §5. Everyone in the org reads them; admins change them.
import { sql, type DatabasePool } from 'slonik';
import type { Principal } from '../auth/principal.ts';
import { forbidden } from '../errors.ts';
import { getOrg, orgRow, type OrgRow } from '../identities/store.ts';

export interface OrgSettingsPatch {
  approval_ttl_seconds?: number | undefined;
  approval_auto_bubble_seconds?: number | null | undefined;
  max_pending_per_agent?: number | undefined;
}

function view(o: OrgRow, rateLimitPerMinute: number) {
  return {
    id: o.id,
    name: o.name,
    approval_ttl_seconds: o.approval_ttl_seconds,
    approval_auto_bubble_seconds: o.approval_auto_bubble_seconds,
    max_pending_per_agent: o.max_pending_per_agent,
    // Deployment-wide, read-only here: set by GATEWAY_RATE_LIMIT_PER_MINUTE; identical pending
    // requests of one agent are always folded into one approval (no switch exists).
    rate_limit_per_minute: rateLimitPerMinute,
    pending_deduplication: true,
  };
}

export function createOrgService(deps: { pool: DatabasePool; rateLimitPerMinute: number }) {
  const { pool, rateLimitPerMinute } = deps;
  return {
    async settings(p: Principal) {
      return view(await getOrg(pool, p.orgId), rateLimitPerMinute);
    },

    async updateSettings(p: Principal, patch: OrgSettingsPatch) {
      if (p.type !== 'user' || p.role !== 'admin') throw forbidden('only admins may change org settings');
      const sets = [sql.fragment`id = id`];
      if (patch.approval_ttl_seconds !== undefined) sets.push(sql.fragment`approval_ttl_seconds = ${patch.approval_ttl_seconds}`);
      if (patch.approval_auto_bubble_seconds !== undefined) sets.push(sql.fragment`approval_auto_bubble_seconds = ${patch.approval_auto_bubble_seconds}`);
      if (patch.max_pending_per_agent !== undefined) sets.push(sql.fragment`max_pending_per_agent = ${patch.max_pending_per_agent}`);
      return view(await pool.one(sql.type(orgRow)`UPDATE orgs SET ${sql.join(sets, sql.fragment`, `)} WHERE id = ${p.orgId} RETURNING *`), rateLimitPerMinute);
    },
  };
}

export type OrgService = ReturnType<typeof createOrgService>;
