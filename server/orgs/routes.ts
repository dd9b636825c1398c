// Org settings REST: strict parsing over the org service.
import { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import type { OrgService } from './service.ts';

const settingsBody = z
  .strictObject({
    approval_ttl_seconds: z.number().int().min(1).max(7 * 24 * 3600).optional(),
    approval_auto_bubble_seconds: z.number().int().min(1).max(7 * 24 * 3600).nullable().optional(),
    max_pending_per_agent: z.number().int().min(1).max(1000).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one setting');

export function orgRoutes(orgs: OrgService): Router {
  const r = Router();
  r.get('/org/settings', async (req, res) => {
    res.json(await orgs.settings(principalOf(req)));
  });
  r.patch('/org/settings', async (req, res) => {
    const p = principalOf(req);
    res.json(await orgs.updateSettings(p, settingsBody.parse(req.body)));
  });
  return r;
}
