// SQL for the wiring proof's rows (diagnostic_pings): written by the ping workflow's activity,
// read back by the diagnostics service.
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

const pingRow = z.object({ id: z.string(), workflow_id: z.string(), message: z.string(), created_at: z.date() });

/** Idempotent on the workflow id: a second write keeps the first row and returns its id. */
export const recordPing = (db: CommonQueryMethods, p: { workflowId: string; message: string }) =>
  db.oneFirst(sql.type(z.object({ id: z.string() }))`
    INSERT INTO diagnostic_pings (workflow_id, message) VALUES (${p.workflowId}, ${p.message})
    ON CONFLICT (workflow_id) DO UPDATE SET message = diagnostic_pings.message
    RETURNING id`);

export const getPing = (db: CommonQueryMethods, workflowId: string) =>
  db.maybeOne(sql.type(pingRow)`
    SELECT id, workflow_id, message, created_at FROM diagnostic_pings WHERE workflow_id = ${workflowId}`);
