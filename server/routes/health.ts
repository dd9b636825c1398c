import { Router } from 'express';
import type { ReadinessReport } from '../readiness.ts';

export function healthRoutes(readiness: () => Promise<ReadinessReport>): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const report = await readiness();
    if (!report.ready) res.setHeader('Retry-After', '2');
    res.status(report.ready ? 200 : 503).json({ status: report.ready ? 'ready' : 'not_ready', checks: report.checks, down: report.down });
  });
  return router;
}
