// GET /v1/approvals/{id}/blast-radius?tier=N: what remembering suggested tier N would also cover.
import { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import type { BlastRadiusService } from './blast-radius.ts';

const params = z.object({ id: z.uuid({ error: 'must be a UUID' }) });
const query = z.strictObject({
  tier: z
    .string()
    .regex(/^\d{1,2}$/, 'must be the index of one of the approval\'s suggested_tiers')
    .transform(Number),
});

export function blastRadiusRoutes(service: BlastRadiusService): Router {
  const r = Router();
  r.get('/approvals/:id/blast-radius', async (req, res) => {
    const { id } = params.parse(req.params);
    res.json(await service.forTier(principalOf(req), id, query.parse(req.query).tier));
  });
  return r;
}
