// Request ids and access logs. A caller-supplied X-Request-Id is kept when it looks sane, so one
// id can follow a request across systems; otherwise we mint one.
import { AsyncResource } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logger.ts';
import { loggableUrl } from './log-redaction.ts';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    log: Logger;
  }
}

const SANE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export function requestContext(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.get('x-request-id');
    req.id = incoming && SANE_ID.test(incoming) ? incoming : randomUUID();
    // The per-request child logger is built on first use: most requests never log but the access line.
    let child: Logger | undefined;
    Object.defineProperty(req, 'log', { configurable: true, enumerable: true, get: () => (child ??= logger.child({ request_id: req.id })) });
    res.setHeader('X-Request-Id', req.id);
    // Health polls (every few seconds from an orchestrator) go to debug: they would drown the log.
    const level = isHealthPoll(req.path) ? 'debug' : 'info';
    if (!logger.isLevelEnabled(level)) return next();
    const started = process.hrtime.bigint();
    // Bound to the request's async context: the line carries its call id and trace (log-context.ts).
    res.on('finish', AsyncResource.bind(() => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      // Paths and query strings can carry credentials (email decision links, OAuth codes, state).
      req.log[level]({ method: req.method, ...loggableUrl(req.originalUrl), status: res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request');
    }));
    next();
  };
}

/** `/healthz` and `/readyz`: what load balancers and Kubernetes probes poll. */
export function isHealthPoll(path: string): boolean {
  return path === '/healthz' || path === '/readyz';
}
