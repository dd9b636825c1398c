// The Temporal worker for the gateway's task queue. Workflow code is bundled once per process
// (or taken from a prebuilt bundle, as the tests do) and activities get their deps injected.
import path from 'node:path';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  DefaultLogger,
  NativeConnection,
  type InjectedSinks,
  Runtime,
  makeTelemetryFilterString,
  type WorkerInterceptors,
} from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities/index.ts';
import { TASK_QUEUE } from '../../workflows/definitions.ts';
import type { Logger } from '../logger.ts';
import { createWatchedWorker } from './workflow-threads.ts';

export const WORKFLOWS_PATH = path.resolve(import.meta.dirname, '..', '..', 'workflows', 'index.ts');

const cachedBundles = new Map<string, Promise<{ code: string }>>();

/**
 * The workflow bundle, built once per process in a short-lived child process (bundle-child.ts);
 * `interceptorModules`: workflow interceptors to include (tracing's), a bundle of its own.
 */
export function workflowBundle(interceptorModules: string[] = []): Promise<{ code: string }> {
  const key = interceptorModules.join('\n');
  let bundle = cachedBundles.get(key);
  if (!bundle) cachedBundles.set(key, (bundle = bundleInChild(interceptorModules)));
  return bundle;
}

function bundleInChild(interceptorModules: string[]): Promise<{ code: string }> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./bundle-child.ts', import.meta.url)), [WORKFLOWS_PATH, ...interceptorModules], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], execArgv: [] });
    let settled = false;
    child.once('message', (msg: { ok: true; code: string; messages: string[] } | { ok: false; message: string; messages: string[] }) => {
      settled = true;
      for (const line of msg.messages) process.stderr.write(line + '\n');
      if (msg.ok) resolve({ code: msg.code });
      else reject(new Error(`bundling the workflow code failed: ${msg.message}`));
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (!settled) reject(new Error(`the workflow bundler exited (${code}) without a bundle`));
    });
  });
}

let runtimeInstalled = false;
/** Where this process's Temporal runtime serves its Prometheus metrics (null: it does not). */
let runtimeMetricsUrl: string | null = null;

/**
 * Installs the SDK's runtime once per process: its own logs (warnings and up) into the gateway's
 * log, and, with `prometheusBind` (host:port on loopback), its metrics (`temporal_*`) served there
 * for the gateway's /metrics to merge. Returns where those metrics are, if anywhere.
 */
function installRuntime(logger: Logger, prometheusBind?: string): string | null {
  if (runtimeInstalled) return runtimeMetricsUrl;
  runtimeInstalled = true;
  try {
    Runtime.install({
      logger: new DefaultLogger('WARN', ({ level, message, meta }) => {
        const fn = level === 'ERROR' ? logger.error.bind(logger) : logger.warn.bind(logger);
        fn({ temporal: meta ?? {} }, message);
      }),
      telemetryOptions: {
        logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} },
        ...(prometheusBind ? { metrics: { prometheus: { bindAddress: prometheusBind, useSecondsForDurations: true } } } : {}),
      },
    });
    runtimeMetricsUrl = prometheusBind ? `http://${prometheusBind}/metrics` : null;
  } catch {
    // Already installed by someone else in this process (tests): keep theirs.
  }
  return runtimeMetricsUrl;
}

export interface GatewayWorker {
  run(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface WorkerOptions {
  address: string;
  /** An open connection (connectWorker) to run on; the worker closes it when it stops. */
  connection?: NativeConnection;
  namespace: string;
  deps: ActivityDeps;
  logger: Logger;
  bundle?: { code: string } | { codePath: string };
  taskQueue?: string;
  /** The SDK's interceptors (a test harness injects faults through them; tracing adds its own). */
  interceptors?: WorkerInterceptors | undefined;
  /** Sinks the workflow code calls out to (tracing's span exporter). */
  sinks?: InjectedSinks<Record<string, never>> | undefined;
  /** Workflow interceptor modules the bundle built at start includes (tracing's). */
  workflowInterceptorModules?: string[] | undefined;
}

/**
 * The worker's connection, opened before the worker so the API in the same process can start
 * workflows on it too: the server hands an eagerly started workflow's first task only to a worker
 * on the starting client's own connection.
 */
export async function connectWorker(address: string, logger: Logger): Promise<NativeConnection> {
  installRuntime(logger);
  return NativeConnection.connect({ address });
}

/**
 * Installs the runtime with its Prometheus exporter on `bind` (before any connection is opened);
 * the URL of the SDK's metrics, or null when the runtime was already installed without them.
 */
export function installRuntimeWithMetrics(logger: Logger, bind: string): string | null {
  return installRuntime(logger, bind);
}

export async function createGatewayWorker(opts: WorkerOptions): Promise<GatewayWorker> {
  const connection = opts.connection ?? (await connectWorker(opts.address, opts.logger));
  // The workflow sandbox without the SDK's per-entry watchdog, its threads watched instead.
  const { worker, stuck, stopWatching } = await createWatchedWorker({
    connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue ?? TASK_QUEUE,
    workflowBundle: opts.bundle ?? (await workflowBundle(opts.workflowInterceptorModules)),
    activities: createActivities(opts.deps),
    ...(opts.interceptors ? { interceptors: opts.interceptors } : {}),
    ...(opts.sinks ? { sinks: opts.sinks } : {}),
    // Drain: running activities get this long to finish on SIGTERM before they are cancelled.
    shutdownGraceTime: '10 seconds',
    // A local activity still retrying (e.g. its database is down) would hold the workflow task,
    // and with it the shutdown, for good: past this the worker gives up, and the process exits.
    // Nothing is lost: the task times out on the server and runs again on a live worker.
    shutdownForceTime: '15 seconds',
  });
  let running: Promise<void> | undefined;
  return {
    run() {
      const ran = worker.run().finally(() => {
        stopWatching();
        return connection.close();
      });
      // A stuck workflow thread fails the worker (the process stops and is restarted).
      running = Promise.race([ran, stuck]);
      return running;
    },
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}
