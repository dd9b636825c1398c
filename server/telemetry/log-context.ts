// What every log line written while handling a call says about it: its `call_id`, and with
// tracing on the trace it belongs to. The call id lives in an AsyncLocalStorage scope that the
// code handling a call opens (a request, an activity) and names once the id is known; the trace
// comes from the active OpenTelemetry span (the api's no-op context when tracing is off).
import { AsyncLocalStorage } from 'node:async_hooks';
import { context, trace } from '@opentelemetry/api';

interface CallScope {
  callId?: string;
}

const scope = new AsyncLocalStorage<CallScope>();

/** Runs `fn` in a scope of its own; `nameCall` inside it names the call for every later line. */
export function inCallScope<T>(fn: () => T, callId?: string): T {
  return scope.run(callId ? { callId } : {}, fn);
}

/** The call the current scope handles, from now on (no scope: nothing to name). */
export function nameCall(callId: string): void {
  const current = scope.getStore();
  if (current) current.callId = callId;
}

/** The fields a log line adds (pino `mixin`): `call_id`, `trace_id` and `span_id` when known. */
export function logFields(): { call_id?: string; trace_id?: string; span_id?: string } {
  const callId = scope.getStore()?.callId;
  const span = trace.getSpanContext(context.active());
  if (!span) return callId ? { call_id: callId } : {};
  return { ...(callId ? { call_id: callId } : {}), trace_id: span.traceId, span_id: span.spanId };
}
