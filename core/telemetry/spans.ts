// The gateway's own spans, named for the call's steps (check, send, audit in the activities; wait
// and decision in the workflow). Only the OpenTelemetry api: safe in the workflow sandbox, where
// the SDK's workflow interceptors provide the tracer. With tracing off the api's tracer is a
// no-op: nothing is recorded.
import { context, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';

export const TRACER_NAME = 'agent-gateway';

/**
 * Runs `fn` inside a span `name` (the active span while it runs, so what it calls nests under it).
 * A failure marks the span as an error by the error's name only: messages may quote a request.
 * `startTime` (unix ms): when the step really began, if before now (a workflow's clock is its
 * task's time, earlier than the local activities that ran in that task).
 */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, startTime?: number): Promise<T> {
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, { attributes, ...(startTime !== undefined ? { startTime } : {}) }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.name ?? 'Error' });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Whether a span records here (tracing on, inside a trace): describe a step only then. */
export function isTraced(): boolean {
  return trace.getActiveSpan()?.isRecording() === true;
}

/** The context (the active span) now: a workflow keeps its own to run later steps in its trace. */
export function activeContext(): Context {
  return context.active();
}

/** Runs `fn` with `ctx` as the active context: what it starts joins that trace. */
export function inContext<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}
