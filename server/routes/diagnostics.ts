// Admin-only wiring proof: thin over the diagnostics service.
import type { NextFunction, Request, Response, Router } from 'express';
import { z } from 'zod';
import { requireHuman } from '../auth/middleware.ts';
import { AppError } from '../errors.ts';
import { apiRouter } from '../http/api-router.ts';
import type { DiagnosticsService } from '../diagnostics/service.ts';

const pingBody = z.strictObject({ message: z.string().min(1).max(200).default('ping') });
const readParams = z.object({ workflowId: z.string().min(1).max(200) });

const Ping = z.strictObject({ workflow_id: z.string(), row_id: z.string() });
const PingRead = z.strictObject({
  row_id: z.string(),
  workflow_id: z.string(),
  message: z.string(),
  created_at: z.iso.datetime(),
  workflow_status: z.string(),
});

function requireAdmin(req: Request, _res: Response, next: NextFunction): void {
  const p = requireHuman(req);
  if (p.role !== 'admin') throw new AppError('forbidden', 'admins only');
  next();
}

export function diagnosticsRoutes(diagnostics: DiagnosticsService): Router {
  const r = apiRouter({ tags: ['Diagnostics'], auth: 'human' });
  r.use('/diagnostics', requireAdmin);
  r.route(
    {
      method: 'post',
      path: '/diagnostics/ping',
      operationId: 'diagnosticsPing',
      summary: 'Run a workflow whose activity writes a row (admins)',
      body: pingBody,
      bodyOptional: true,
      responses: { 201: Ping },
    },
    async (_req, res, { body }) => {
      res.status(201).json(await diagnostics.ping(body.message));
    },
  );
  r.route(
    {
      method: 'get',
      path: '/diagnostics/ping/{workflowId}',
      operationId: 'diagnosticsReadPing',
      summary: 'The row a ping wrote and its workflow status (admins)',
      params: readParams,
      responses: { 200: PingRead },
      errors: ['not_found'],
    },
    async (_req, res, { params }) => {
      res.json(await diagnostics.read(params.workflowId));
    },
  );
  return r.router;
}
