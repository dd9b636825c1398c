// Org settings: the approval clocks of DESIGN.md §5. Everyone in the org reads them; admins change them.
import type { DatabasePool } from 'slonik';
import type { Principal } from '../auth/principal.ts';
import { forbidden } from '../errors.ts';
import { getOrg, updateOrgSettings, type OrgRow, type OrgSettingsPatch } from './store.ts';

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
      return view(await updateOrgSettings(pool, p.orgId, patch), rateLimitPerMinute);
    },
  };
}

export type OrgService = ReturnType<typeof createOrgService>;
