// Wiring proof: start a real workflow whose activity writes a row, and wait for its result; read
// it back from both PostgreSQL and Temporal (used by the restart test and by operators).
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { Router } from 'express';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { notFound } from '../errors.ts';
import { diagnosticPingWorkflowId, type DiagnosticPingResult } from '../../workflows/definitions.ts';

const pingBody = z.strictObject({ message: z.string().min(1).max(200).default('ping') });
const pingRow = z.object({ id: z.string(), workflow_id: z.string(), message: z.string(), created_at: z.date() });

export function diagnosticsRoutes(temporal: Client, pool: DatabasePool, taskQueue: string): Router {
  const router = Router();
  router.post('/ping', async (req, res) => {
    const body = pingBody.parse(req.body ?? {});
    const workflowId = diagnosticPingWorkflowId(randomUUID());
    const result = await temporal.workflow.execute<(i: { message: string }) => Promise<DiagnosticPingResult>>('diagnosticPingWorkflow', {
      taskQueue,
      workflowId,
      args: [{ message: body.message }],
      workflowExecutionTimeout: '1 minute',
    });
    res.status(201).json({ workflow_id: result.workflowId, row_id: result.rowId });
  });
  router.get('/ping/:workflowId', async (req, res) => {
    const row = await pool.maybeOne(sql.type(pingRow)`
      SELECT id, workflow_id, message, created_at FROM diagnostic_pings WHERE workflow_id = ${req.params.workflowId}`);
    if (!row) throw notFound('ping');
    const description = await temporal.workflow.getHandle(row.workflow_id).describe();
    res.json({ row_id: row.id, workflow_id: row.workflow_id, message: row.message, created_at: row.created_at, workflow_status: description.status.name });
  });
  return router;
}
