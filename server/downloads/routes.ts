import type { Router } from 'express';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { apiRouter } from '../http/api-router.ts';
import { isAncestor } from '../../core/permissions/chain.ts';
import { principalOf } from '../auth/middleware.ts';
import { notFound } from '../errors.ts';
import { getChain, toChainIdentity } from '../identities/store.ts';
import { getDownload } from './store.ts';

// Not a UUID is "not found", not a validation error: the id is opaque to callers.
const downloadParams = z.object({ id: z.string().describe('The download id of a binary result.') });

/** GET /v1/downloads/{id}: the requester, its ancestors and org admins may fetch it until it expires. */
export function downloadRoutes(pool: DatabasePool): Router {
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
    },
    async (req, res) => {
    const p = principalOf(req);
    const id = z.uuid().safeParse(req.params.id);
    if (!id.success) throw notFound('download');
    const d = await getDownload(pool, id.data);
    if (!d || d.org_id !== p.orgId) throw notFound('download');
    const admin = p.type === 'user' && p.role === 'admin';
    if (!admin && d.requester_id && d.requester_id !== p.identityId) {
      const chain = (await getChain(pool, d.requester_id)).map(toChainIdentity);
      if (!isAncestor(chain, p.identityId, d.requester_id)) throw notFound('download');
    }
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
