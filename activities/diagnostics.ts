import type { DatabasePool } from 'slonik';
import { recordPing } from '../server/diagnostics/store.ts';

export function createDiagnosticActivities(deps: { pool: DatabasePool }) {
  return {
    /** Idempotent on the workflow id, so an activity retry never writes a second row. */
    async recordDiagnosticPing(input: { workflowId: string; message: string }): Promise<string> {
      return recordPing(deps.pool, input);
    },
  };
}
