// Wiring proof: start a real workflow whose activity writes a row, and wait for its result.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { Router } from 'express';
import { z } from 'zod';
import { diagnosticPingWorkflowId, TASK_QUEUE, type DiagnosticPingResult } from '../../workflows/definitions.ts';

const pingBody = z.strictObject({ message: z.string().min(1).max(200).default('ping') });

export function diagnosticsRoutes(temporal: Client): Router {
  const router = Router();
  router.post('/diagnostics/ping', async (req, res) => {
    const body = pingBody.parse(req.body ?? {});
    const workflowId = diagnosticPingWorkflowId(randomUUID());
    const result = await temporal.workflow.execute<(i: { message: string }) => Promise<DiagnosticPingResult>>('diagnosticPingWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId,
      args: [{ message: body.message }],
      workflowExecutionTimeout: '1 minute',
    });
    res.status(201).json({ workflow_id: result.workflowId, row_id: result.rowId });
  });
  return router;
}
