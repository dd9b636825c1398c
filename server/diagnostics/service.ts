// Wiring proof (issue 2): a real workflow whose one activity writes a row, and the row read back
// from PostgreSQL with the workflow's status from Temporal (the restart test uses it).
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { notFound } from '../errors.ts';
import { diagnosticPingWorkflowId, type DiagnosticPingResult } from '../../workflows/definitions.ts';
import { getPing } from './store.ts';

export function createDiagnosticsService(deps: { temporal: Client; pool: DatabasePool; taskQueue: string }) {
  return {
    async ping(message: string) {
      const result = await deps.temporal.workflow.execute<(i: { message: string }) => Promise<DiagnosticPingResult>>('diagnosticPingWorkflow', {
        taskQueue: deps.taskQueue,
        workflowId: diagnosticPingWorkflowId(randomUUID()),
        args: [{ message }],
        workflowExecutionTimeout: '1 minute',
      });
      return { workflow_id: result.workflowId, row_id: result.rowId };
    },

    async read(workflowId: string) {
      const row = await getPing(deps.pool, workflowId);
      if (!row) throw notFound('ping');
      const description = await deps.temporal.workflow.getHandle(row.workflow_id).describe();
      return { row_id: row.id, workflow_id: row.workflow_id, message: row.message, created_at: row.created_at, workflow_status: description.status.name };
    },
  };
}

export type DiagnosticsService = ReturnType<typeof createDiagnosticsService>;
