import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';

export function createDiagnosticActivities(deps: { pool: DatabasePool }) {
  return {
    /** Idempotent on the workflow id, so an activity retry never writes a second row. */
    async recordDiagnosticPing(input: { workflowId: string; message: string }): Promise<string> {
      return deps.pool.oneFirst(sql.type(z.object({ id: z.string() }))`
        INSERT INTO diagnostic_pings (workflow_id, message) VALUES (${input.workflowId}, ${input.message})
        ON CONFLICT (workflow_id) DO UPDATE SET message = diagnostic_pings.message
        RETURNING id`);
    },
  };
}
