// Org settings: the approval clocks of DESIGN.md §5 (admins change them; everyone reads them).
import { Router } from 'express';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { principalOf, requireHuman } from '../auth/middleware.ts';
import { forbidden } from '../errors.ts';
import { getOrg, orgRow } from '../identities/store.ts';

const settingsBody = z
  .strictObject({
    approval_ttl_seconds: z.number().int().min(1).max(7 * 24 * 3600).optional(),
    approval_auto_bubble_seconds: z.number().int().min(1).max(7 * 24 * 3600).nullable().optional(),
    max_pending_per_agent: z.number().int().min(1).max(1000).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one setting');

function view(o: z.infer<typeof orgRow>) {
  return {
    id: o.id,
    name: o.name,
    approval_ttl_seconds: o.approval_ttl_seconds,
    approval_auto_bubble_seconds: o.approval_auto_bubble_seconds,
    max_pending_per_agent: o.max_pending_per_agent,
  };
}

export function orgRoutes(pool: DatabasePool): Router {
  const r = Router();
  r.get('/org/settings', async (req, res) => {
    res.json(view(await getOrg(pool, principalOf(req).orgId)));
  });
  r.patch('/org/settings', async (req, res) => {
    const p = requireHuman(req);
    if (p.role !== 'admin') throw forbidden('only admins may change org settings');
    const b = settingsBody.parse(req.body);
    const sets = [sql.fragment`id = id`];
    if (b.approval_ttl_seconds !== undefined) sets.push(sql.fragment`approval_ttl_seconds = ${b.approval_ttl_seconds}`);
    if (b.approval_auto_bubble_seconds !== undefined) sets.push(sql.fragment`approval_auto_bubble_seconds = ${b.approval_auto_bubble_seconds}`);
    if (b.max_pending_per_agent !== undefined) sets.push(sql.fragment`max_pending_per_agent = ${b.max_pending_per_agent}`);
    const row = await pool.one(sql.type(orgRow)`UPDATE orgs SET ${sql.join(sets, sql.fragment`, `)} WHERE id = ${p.orgId} RETURNING *`);
    res.json(view(row));
  });
  return r;
}
