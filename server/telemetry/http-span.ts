// The span of an HTTP request to the gateway (REST and MCP), the root of a call's trace; named
// `METHOD route` once the router matched one (never the raw path: ids and link secrets stay out).
import type { NextFunction, Request, Response } from 'express';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { TRACER_NAME } from '../../core/telemetry/spans.ts';
import { inCallScope } from './log-context.ts';
import { isHealthPoll } from '../http/request-context.ts';

/**
 * Every request runs in a call scope of its own (what names its call for the log lines), and,
 * with tracing on, inside its server span. A caller's `traceparent` is honoured as the parent.
 */
export function requestSpan(tracing: boolean) {
  if (!tracing) return (_req: Request, _res: Response, next: NextFunction) => inCallScope(next);
  const tracer = trace.getTracer(TRACER_NAME);
  return (req: Request, res: Response, next: NextFunction) => {
    // An orchestrator's polls every few seconds would each be a trace of their own.
    if (isHealthPoll(req.path)) return inCallScope(next);
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracer.startSpan(`${req.method}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } }, parent);
    res.once('finish', () => {
      const route = matchedRoute(req);
      if (route) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(trace.setSpan(parent, span), () => inCallScope(next));
  };
}

/** The route pattern that answered (its routers' mount paths joined), if any did. */
function matchedRoute(req: Request): string | undefined {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? `${req.baseUrl}${path}` : undefined;
}
