// OpenTelemetry traces, started only when OTEL_EXPORTER_OTLP_ENDPOINT is set: a tracer provider
// exporting by OTLP/HTTP (JSON), and the Temporal SDK's interceptors that carry the trace from the
// client's start or update through the workflow to its activities. Without an endpoint none of
// this is loaded: the api's tracer stays the no-op one and no interceptor is registered.
import { createRequire } from 'node:module';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';

export interface TracingSettings {
  /** The OTLP base URL; spans go to `<endpoint>/v1/traces`. */
  endpoint: string;
  serviceName: string;
}

export interface Tracing {
  /** For every Temporal client: a workflow started, updated or signalled carries the active trace. */
  clientInterceptors: WorkflowClientInterceptor[];
  /** For the worker: activity spans (the workflow's own come from `workflowModules` in its bundle). */
  workerInterceptors: WorkerInterceptors;
  /** The sink the workflow sandbox hands its finished spans to. */
  sinks: InjectedSinks<Record<string, never>>;
  /** The workflow interceptor modules the worker's bundle must include. */
  workflowModules: string[];
  /** Exports what is still buffered, then stops. */
  shutdown(): Promise<void>;
}

let started: Promise<Tracing> | undefined;

/** Starts tracing once per process (the provider is global); later calls get the same one. */
export function startTracing(settings: TracingSettings): Promise<Tracing> {
  started ??= load(settings).catch((err: unknown) => {
    started = undefined;
    throw err;
  });
  return started;
}

/** The OTLP/HTTP traces URL for an endpoint given as the standard base URL. */
export function tracesUrl(endpoint: string): string {
  return new URL('v1/traces', endpoint.endsWith('/') ? endpoint : `${endpoint}/`).toString();
}

async function load(settings: TracingSettings): Promise<Tracing> {
  const [api, { NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { Resource }, otel] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@temporalio/interceptors-opentelemetry'),
  ]);
  const resource = new Resource({ 'service.name': settings.serviceName });
  // The batch processor reads its delays and sizes from the standard OTEL_BSP_* variables.
  const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(settings.endpoint) }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  // Global: the api's tracer, an AsyncLocalStorage context manager and W3C trace context.
  provider.register();
  const workflowModule = createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');
  return {
    clientInterceptors: [new otel.OpenTelemetryWorkflowClientInterceptor()],
    workerInterceptors: {
      workflowModules: [workflowModule],
      activity: [(ctx) => ({ inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx), outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx) })],
    },
    sinks: { exporter: otel.makeWorkflowExporter(processor, resource) } as unknown as InjectedSinks<Record<string, never>>,
    workflowModules: [workflowModule],
    async shutdown() {
      started = undefined;
      await provider.shutdown();
      // Back to the api's no-ops, so a later start in this process (tests) registers afresh.
      api.trace.disable();
      api.context.disable();
      api.propagation.disable();
    },
  };
}
