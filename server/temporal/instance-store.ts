// This database's gateway instance id (migration 0019): what a task queue's owner is recorded as.
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';

export async function readInstanceId(pool: DatabasePool): Promise<string> {
  return pool.oneFirst(sql.type(z.object({ id: z.string() }))`SELECT id::text AS id FROM gateway_instance`);
}
