// Child process that bundles the workflow code (webpack + swc) and sends the bundle back over
// IPC. A process of its own because bundling grows the heap and the allocator's arenas by
// ~200 MB that a long-lived gateway would otherwise keep for its whole life (a worker thread
// does not give the allocator's part back); a child returns everything when it exits.
// Runnable by Node 24 directly (type stripping), like the disclose worker.
// The bundler module alone: the SDK's index would also load its native bridge.
import { bundleWorkflowCode } from '@temporalio/worker/lib/workflow/bundler.js';
import { WORKFLOW_PRELOAD_MODULES } from './bundle-options.ts';

const messages: string[] = [];
const keep = (level: string) => (msg: string) => messages.push(`[workflow-bundle] ${level}: ${msg}`);
const send = (msg: unknown) => new Promise<void>((resolve) => process.send!(msg, () => resolve()));

try {
  const bundle = await bundleWorkflowCode({
    workflowsPath: process.argv[2]!,
    // Any further arguments: workflow interceptor modules (tracing's), registered in every workflow.
    workflowInterceptorModules: process.argv.slice(3),
    preloadModules: WORKFLOW_PRELOAD_MODULES,
    logger: { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: keep('warn'), error: keep('error') },
  });
  await send({ ok: true, code: bundle.code, messages });
} catch (err) {
  await send({ ok: false, message: (err as Error)?.stack ?? String(err), messages });
}
process.disconnect?.();
