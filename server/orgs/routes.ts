// Org settings REST: strict parsing over the org service.
import type { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import { apiRouter } from '../http/api-router.ts';
import { uuid } from '../http/openapi/common.ts';
import type { OrgService } from './service.ts';

const settingsBody = z
  .strictObject({
    approval_ttl_seconds: z.number().int().min(1).max(7 * 24 * 3600).optional(),
    approval_auto_bubble_seconds: z.number().int().min(1).max(7 * 24 * 3600).nullable().optional(),
    max_pending_per_agent: z.number().int().min(1).max(1000).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one setting');

const OrgSettings = z
  .strictObject({
    id: uuid,
    name: z.string(),
    approval_ttl_seconds: z.int(),
    approval_auto_bubble_seconds: z.int().nullable(),
    max_pending_per_agent: z.int(),
    rate_limit_per_minute: z.int().describe('Calls per minute per identity, for the whole deployment (GATEWAY_RATE_LIMIT_PER_MINUTE; 0 = off). Read-only.'),
    pending_deduplication: z.boolean().describe('Identical pending requests of one agent share one approval. Always on; read-only.'),
  })
  .meta({ id: 'OrgSettings' });

export function orgRoutes(orgs: OrgService): Router {
  const r = apiRouter({ tags: ['Org'] });
  r.route({
    method: 'get',
    path: '/org/settings',
    operationId: 'getOrgSettings',
    summary: 'The org’s approval clocks and limits',
    responses: { 200: OrgSettings },
  }, async (req, res) => {
    res.json(await orgs.settings(principalOf(req)));
  });
  r.route({
    method: 'patch',
    path: '/org/settings',
    operationId: 'updateOrgSettings',
    summary: 'Change approval clocks and limits (admins)',
    body: settingsBody,
    responses: { 200: OrgSettings },
    errors: ['forbidden'],
  }, async (req, res, { body }) => {
    const p = principalOf(req);
    res.json(await orgs.updateSettings(p, body));
  });
  return r.router;
}
