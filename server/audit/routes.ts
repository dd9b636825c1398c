// GET /v1/audit: strict query parsing (unknown or malformed parameters → 400), then one call.
// GET /v1/audit/export: the same filters, the whole result streamed as CSV or JSON Lines.
import type { Response, Router } from 'express';
import { z } from 'zod';
import { EXPORT_MEDIA_TYPES, exportFileName } from '../../core/audit/export-format.ts';
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

const filterShape = {
  identity: z.uuid({ error: 'must be a UUID' }).optional(),
  service: text.optional(),
  action: text.optional(),
  event: text.optional(),
  decision: text.optional().describe('The entry’s decision (its outcome): covered, pending, denied, executed, failed, …'),
  since: instant.optional(),
  until: instant.optional(),
};
const sinceNotAfterUntil = (q: { since?: string | undefined; until?: string | undefined }) =>
  q.since === undefined || q.until === undefined || Date.parse(q.since) <= Date.parse(q.until);

const listQuery = z
  .strictObject({
    ...filterShape,
    limit: z
      .string()
      .regex(/^\d{1,3}$/, 'must be an integer from 1 to 200')
      .transform(Number)
      .pipe(z.number().int().min(1, 'must be an integer from 1 to 200').max(200, 'must be an integer from 1 to 200'))
      .optional(),
    cursor: z.string().min(1).max(100).optional(),
  })
  .refine(sinceNotAfterUntil, { message: 'since must not be after until', path: ['since'] });

const exportQuery = z
  .strictObject({
    ...filterShape,
    format: z.enum(['csv', 'jsonl'], { error: 'must be csv or jsonl' }).default('csv'),
  })
  .refine(sinceNotAfterUntil, { message: 'since must not be after until', path: ['since'] });

/** Writes `chunks` to the response, waiting for the socket to drain (constant memory). */
async function streamTo(res: Response, chunks: AsyncIterable<string>): Promise<void> {
  for await (const chunk of chunks) {
    if (res.destroyed) return; // the client went away: stop reading the database
    if (!res.write(chunk)) await drained(res);
  }
  res.end();
}

/** Resolves when the socket takes more (or is gone); its listeners are removed either way. */
function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

export function auditRoutes(audit: AuditService): Router {
  const r = apiRouter({ tags: ['Audit'] });
  r.route({
    method: 'get',
    path: '/audit',
    operationId: 'listAudit',
    summary: 'Audit log entries the caller may see, newest first (cursor pagination)',
    query: listQuery,
    responses: { 200: AuditPage },
  }, async (req, res, { query }) => {
    res.json(await audit.list(principalOf(req), query));
  });
  r.route({
    method: 'get',
    path: '/audit/export',
    operationId: 'exportAudit',
    summary: 'Every audit entry matching the filters, streamed as CSV or JSON Lines (newest first)',
    description:
      'Same filters and visibility as GET /v1/audit, without paging: the server reads the log in keyset batches and writes ' +
      'them as it goes. CSV has a header row; lists of ids and keys are space-separated, `identity_chain_names` and ' +
      '`details` are JSON, names sit beside their ids (as they are when the export runs), and a text starting with ' +
      '`= + - @` is prefixed with `\'` so spreadsheets do not run it. JSON Lines has one GET /v1/audit entry object per line.',
    query: exportQuery,
    responses: {
      200: {
        description: 'The export as an attachment',
        contentType: [EXPORT_MEDIA_TYPES.csv.split(';')[0]!, EXPORT_MEDIA_TYPES.jsonl.split(';')[0]!],
        headers: { 'Content-Disposition': 'attachment; filename="audit_….csv" (or .jsonl)' },
      },
    },
  }, async (req, res, { query }) => {
    const { format, ...filters } = query;
    const chunks = audit.exportText(principalOf(req), filters, format);
    // The first batch is read before the headers go out, so a failure there is still an error envelope.
    const first = await chunks.next();
    res.setHeader('Content-Type', EXPORT_MEDIA_TYPES[format]);
    res.setHeader('Content-Disposition', `attachment; filename="${exportFileName(format, { service: filters.service, action: filters.action, event: filters.event, decision: filters.decision }, new Date())}"`);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (!first.done) res.write(first.value);
    try {
      await streamTo(res, chunks);
    } catch (err) {
      // Headers are gone: cut the connection so the client sees an incomplete download, not a short "complete" one.
      res.destroy(err instanceof Error ? err : new Error(String(err)));
      req.log?.error({ err }, 'audit export failed mid-stream');
    }
  });
  return r.router;
}
