// SQL for orgs: the row and its approval clocks (DESIGN.md §5). No authorization here: the org
// service decides who may change what; this module only reads and writes rows.
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

export const orgRow = z.object({
  id: z.string(),
  name: z.string(),
  approval_ttl_seconds: z.number(),
  approval_auto_bubble_seconds: z.number().nullable(),
  max_pending_per_agent: z.number(),
  created_at: z.date(),
});
export type OrgRow = z.infer<typeof orgRow>;

type Db = CommonQueryMethods;

export const countOrgs = (db: Db) => db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM orgs`);

export const createOrg = (db: Db, name: string) => db.one(sql.type(orgRow)`INSERT INTO orgs (name) VALUES (${name}) RETURNING *`);

export const getOrg = (db: Db, id: string) => db.one(sql.type(orgRow)`SELECT * FROM orgs WHERE id = ${id}`);

/** First start: two processes starting at once (api + worker) must not both create an org. */
export async function lockFirstStart(db: Db): Promise<void> {
  await db.query(sql.unsafe`SELECT pg_advisory_xact_lock(7242002)`);
}

export interface OrgSettingsPatch {
  approval_ttl_seconds?: number | undefined;
  approval_auto_bubble_seconds?: number | null | undefined;
  max_pending_per_agent?: number | undefined;
}

/** The org's approval clocks; absent fields stay as they are. */
export async function updateOrgSettings(db: Db, orgId: string, patch: OrgSettingsPatch): Promise<OrgRow> {
  const sets = [sql.fragment`id = id`];
  if (patch.approval_ttl_seconds !== undefined) sets.push(sql.fragment`approval_ttl_seconds = ${patch.approval_ttl_seconds}`);
  if (patch.approval_auto_bubble_seconds !== undefined) sets.push(sql.fragment`approval_auto_bubble_seconds = ${patch.approval_auto_bubble_seconds}`);
  if (patch.max_pending_per_agent !== undefined) sets.push(sql.fragment`max_pending_per_agent = ${patch.max_pending_per_agent}`);
  return db.one(sql.type(orgRow)`UPDATE orgs SET ${sql.join(sets, sql.fragment`, `)} WHERE id = ${orgId} RETURNING *`);
}
