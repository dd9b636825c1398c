// GET /v1/audit: strict query parsing (unknown or malformed parameters → 400), then one call.
import type { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import { apiRouter } from '../http/api-router.ts';
import { AuditPage } from './responses.ts';
import type { AuditService } from './service.ts';

const text = z.string().trim().min(1).max(200);
// Normalised to UTC (`toISOString`) for PostgreSQL, which refuses offsets beyond ±15:59 that
// ISO 8601 allows; years outside 1970-9999 are refused rather than sent to it.
const instant = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time with a time zone' })
  .refine((v) => {
    const t = Date.parse(v);
    return t >= 0 && t < Date.UTC(10000, 0, 1);
  }, 'must be between 1970 and 9999')
  .transform((v) => new Date(v).toISOString());

const listQuery = z
  .strictObject({
    identity: z.uuid({ error: 'must be a UUID' }).optional(),
    service: text.optional(),
    action: text.optional(),
    event: text.optional(),
    since: instant.optional(),
    until: instant.optional(),
    limit: z
      .string()
      .regex(/^\d{1,3}$/, 'must be an integer from 1 to 200')
      .transform(Number)
      .pipe(z.number().int().min(1, 'must be an integer from 1 to 200').max(200, 'must be an integer from 1 to 200'))
      .optional(),
    cursor: z.string().min(1).max(100).optional(),
  })
  .refine((q) => q.since === undefined || q.until === undefined || Date.parse(q.since) <= Date.parse(q.until), {
    message: 'since must not be after until',
    path: ['since'],
  });

export function auditRoutes(audit: AuditService): Router {
  const r = apiRouter({ tags: ['Audit'] });
  r.route({
    method: 'get',
    path: '/audit',
    operationId: 'listAudit',
    summary: 'Audit log entries the caller may see, newest first (cursor pagination)',
    query: listQuery,
    responses: { 200: AuditPage },
  }, async (req, res) => {
    res.json(await audit.list(principalOf(req), listQuery.parse(req.query)));
  });
  return r.router;
}
