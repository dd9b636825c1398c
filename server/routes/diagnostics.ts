// Admin-only wiring proof: thin over the diagnostics service.
import { Router } from 'express';
import { z } from 'zod';
import type { DiagnosticsService } from '../diagnostics/service.ts';

const pingBody = z.strictObject({ message: z.string().min(1).max(200).default('ping') });

export function diagnosticsRoutes(diagnostics: DiagnosticsService): Router {
  const router = Router();
  router.post('/ping', async (req, res) => {
    res.status(201).json(await diagnostics.ping(pingBody.parse(req.body ?? {}).message));
  });
  router.get('/ping/:workflowId', async (req, res) => {
    res.json(await diagnostics.read(req.params.workflowId));
  });
  return router;
}
