// Binary results: stored for a short time and served to the requester's chain.
import { createHash } from 'node:crypto';
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

export const DOWNLOAD_TTL_SECONDS = 15 * 60;

const meta = z.object({ id: z.string(), org_id: z.string(), requester_id: z.string().nullable(), content_type: z.string(), size: z.number(), sha256: z.string(), expires_at: z.date() });

export interface NewDownload {
  orgId: string;
  requesterId: string | undefined;
  contentType: string;
  data: Buffer;
}

export async function saveDownload(db: CommonQueryMethods, d: NewDownload) {
  const sha256 = createHash('sha256').update(d.data).digest('hex');
  // Expired downloads are removed as new ones arrive: no separate sweeper needed.
  await db.query(sql.unsafe`DELETE FROM downloads WHERE expires_at < now()`);
  return db.one(sql.type(meta)`
    INSERT INTO downloads (org_id, requester_id, content_type, size, sha256, data, expires_at)
    VALUES (${d.orgId}, ${d.requesterId ?? null}, ${d.contentType}, ${d.data.length}, ${sha256}, ${sql.binary(d.data)},
            now() + make_interval(secs => ${DOWNLOAD_TTL_SECONDS}))
    RETURNING id, org_id, requester_id, content_type, size, sha256, expires_at`);
}

export const getDownload = (db: CommonQueryMethods, id: string) =>
  db.maybeOne(sql.type(meta.extend({ data: z.instanceof(Buffer) }))`
    SELECT id, org_id, requester_id, content_type, size, sha256, expires_at, data FROM downloads WHERE id = ${id} AND expires_at > now()`);
