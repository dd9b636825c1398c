// GET /v1/approvals/{id}/blast-radius?tier=N: what remembering suggested tier N would also cover.
import type { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import { apiRouter } from '../http/api-router.ts';
import { BlastRadius } from './responses.ts';
import type { BlastRadiusService } from './blast-radius.ts';

const params = z.object({ id: z.uuid({ error: 'must be a UUID' }) });
const query = z.strictObject({
  tier: z
    .string()
    .regex(/^\d{1,2}$/, 'must be the index of one of the approval\'s suggested_tiers')
    .transform(Number),
});

export function blastRadiusRoutes(service: BlastRadiusService): Router {
  const r = apiRouter({ tags: ['Approvals'] });
  r.route({
    method: 'get',
    path: '/approvals/{id}/blast-radius',
    operationId: 'getBlastRadius',
    summary: 'What remembering suggested tier N would also cover: other pending approvals, calls of the last 30 days',
    params,
    query,
    responses: { 200: BlastRadius },
    errors: ['not_found', 'not_in_your_chain', 'invalid_request'],
  }, async (req, res) => {
    const { id } = params.parse(req.params);
    res.json(await service.forTier(principalOf(req), id, query.parse(req.query).tier));
  });
  return r.router;
}
