// SQL for the message-signing key (message-signer.ts): read it, or insert it once.
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

const keyRow = z.object({ public_key: z.string(), envelope: z.unknown() });

export const readSigningKey = (db: CommonQueryMethods, id: string) =>
  db.maybeOne(sql.type(keyRow)`SELECT public_key, envelope FROM message_signing_keys WHERE id = ${id}`);

/** Inserts the key unless one with the id exists (two processes starting at once keep the first). */
export async function insertSigningKey(db: CommonQueryMethods, k: { id: string; publicKey: string; envelope: object }): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO message_signing_keys (id, public_key, envelope) VALUES (${k.id}, ${k.publicKey}, ${sql.jsonb(k.envelope as never)})
    ON CONFLICT (id) DO NOTHING`);
}
