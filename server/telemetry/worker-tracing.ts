// What tracing adds to the worker: the SDK's activity interceptors after any the caller brings,
// the sink for the workflow's spans, and a bundle that includes the workflow interceptors.
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import type { Logger } from '../logger.ts';
import type { Tracing } from './tracing.ts';

export interface WorkerTracingOptions {
  interceptors?: WorkerInterceptors | undefined;
  sinks?: InjectedSinks<Record<string, never>>;
  /** Bundle the workflow code at start with these interceptor modules. */
  workflowInterceptorModules?: string[];
  bundle?: { codePath: string };
}

/**
 * The worker's options for tracing on or off. Off: the caller's interceptors and prebuilt bundle,
 * as they were. On: a prebuilt bundle (TEMPORAL_WORKFLOW_BUNDLE) lacks the workflow interceptors,
 * so the code is bundled at start with them instead, and the process says so once.
 */
export function withTracing(
  tracing: Tracing | undefined,
  o: { interceptors: WorkerInterceptors | undefined; bundlePath: string | undefined; logger: Logger },
): WorkerTracingOptions {
  if (!tracing) return { ...(o.interceptors ? { interceptors: o.interceptors } : {}), ...(o.bundlePath ? { bundle: { codePath: o.bundlePath } } : {}) };
  if (o.bundlePath) o.logger.info('tracing: the workflow code is bundled at start with its interceptors (TEMPORAL_WORKFLOW_BUNDLE is not used)');
  const base = o.interceptors ?? {};
  return {
    interceptors: { ...base, activity: [...tracing.workerInterceptors.activity!, ...(base.activity ?? [])] },
    sinks: tracing.sinks,
    workflowInterceptorModules: tracing.workflowModules,
  };
}
