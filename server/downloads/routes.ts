import type { Router } from 'express';
import { z } from 'zod';
import { apiRouter } from '../http/api-router.ts';
import { principalOf } from '../auth/middleware.ts';
import { notFound } from '../errors.ts';
import type { DownloadService } from './service.ts';

// Not a UUID is "not found", not a validation error: the id is opaque to callers.
const downloadParams = z.object({ id: z.string().describe('The download id of a binary result.') });

/** GET /v1/downloads/{id}: the requester, its ancestors and org admins may fetch it until it expires. */
export function downloadRoutes(downloads: DownloadService): Router {
  const r = apiRouter({ tags: ['Calls'] });
  r.route(
    {
      method: 'get',
      path: '/downloads/{id}',
      operationId: 'getDownload',
      summary: 'The file a binary action returned (requester, its ancestors, org admins; until it expires)',
      params: downloadParams,
      responses: {
        200: {
          description: 'The file, with the upstream content type',
          contentType: 'application/octet-stream',
          headers: { Digest: 'sha-256 of the file', 'Content-Disposition': 'attachment' },
        },
      },
      errors: ['not_found'],
      // A malformed id is "not found" like a missing one, not a 400 that tells them apart.
      validatesItself: true,
    },
    async (req, res) => {
    const p = principalOf(req);
    const id = z.uuid().safeParse(req.params.id);
    if (!id.success) throw notFound('download');
    const d = await downloads.get(p, id.data);
    res.setHeader('Content-Type', d.content_type);
    res.setHeader('Content-Length', String(d.size));
    res.setHeader('Content-Disposition', 'attachment');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Digest', `sha-256=${Buffer.from(d.sha256, 'hex').toString('base64')}`);
    res.end(d.data);
    },
  );
  return r.router;
}
