// The embedded Temporal: `temporal server start-dev` with its SQLite file under DATA_DIR, so
// workflows survive a restart, the gateway's search attributes registered, and updates enabled.
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { CALL_SEARCH_ATTRIBUTES } from '../../workflows/definitions.ts';
import type { Logger } from '../logger.ts';
import { forgetChild, reapOrphan, recordChild } from './data-dir.ts';
import { freePort, listensOn, portIsFree, releaseChild, superviseChild, terminate, waitForPort } from './processes.ts';
import { startReadOnlyUi, type ReadOnlyUi } from './read-only-ui.ts';
import { portInUseError } from './startup-error.ts';
import { superviseRestarts, type RunningChild } from './supervisor.ts';

/** Search attributes the Temporal UI filters calls by (DESIGN.md §4). */
export const SEARCH_ATTRIBUTES: Readonly<Record<string, 'Keyword'>> = Object.fromEntries(
  Object.values(CALL_SEARCH_ATTRIBUTES).map((key) => [key.name, 'Keyword' as const]),
);

export const DYNAMIC_CONFIG = [
  'frontend.enableUpdateWorkflowExecution=true',
  'frontend.enableExecuteMultiOperation=true',
  // One partition per task queue: with a handful of pollers, several partitions only add
  // forwarding hops between them (latency of every workflow and activity task).
  'matching.numTaskqueueReadPartitions=1',
  'matching.numTaskqueueWritePartitions=1',
  // The dev server has one history shard whose transfer-queue reader polls at most 20 times a
  // second by default: every workflow and activity task then waits for a 50 ms slot. Raised, the
  // reader follows the tasks as they come (docs/decisions.md → Performance).
  'history.transferProcessorMaxPollRPS=1000',
  // A workflow task that schedules an activity gets that activity's task back in the same answer
  // when its worker has a free slot (an approved call's send step starts without a matching hop).
  'system.enableActivityEagerExecution=true',
];

export interface DevServerOptions {
  cliPath: string;
  /** Folder that holds temporal.db; omit for an in-memory server (tests). */
  dataDir?: string;
  namespace: string;
  port?: number;
  /** 0 or undefined: no Web UI. The UI answers here read-only (read-only-ui.ts). */
  uiPort?: number;
  logger: Logger;
  /** Name used for the pid file under DATA_DIR/run (embedded mode only). */
  pidName?: string;
}

export interface DevServer {
  address: string;
  uiUrl: string | undefined;
  /** Null when the SDK runs the server (the download fallback). */
  pid: number | null;
  stop(): Promise<void>;
}

export function devServerArgs(opts: { dbFile?: string | undefined; namespace: string; port: number; uiPort?: number | undefined }): string[] {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--log-level', 'warn'];
  if (opts.dbFile) {
    // WAL with NORMAL sync: durable across process crashes (the gateway's concern), far fewer
    // fsyncs than the default rollback journal, which otherwise dominates call latency.
    args.push('--db-filename', opts.dbFile, '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal');
  }
  if (opts.uiPort) args.push('--ui-port', String(opts.uiPort));
  else args.push('--headless');
  if (opts.namespace !== 'default') args.push('--namespace', opts.namespace);
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);
  for (const kv of DYNAMIC_CONFIG) args.push('--dynamic-config-value', kv);
  return args;
}

export async function startTemporalDevServer(opts: DevServerOptions): Promise<DevServer> {
  const { logger } = opts;
  const port = opts.port || (await freePort());
  let dbFile: string | undefined;
  if (opts.dataDir) {
    await reapOrphan(opts.dataDir, opts.pidName ?? 'temporal', 'start-dev', logger);
    await mkdir(path.join(opts.dataDir, 'temporal'), { recursive: true });
    dbFile = path.join(opts.dataDir, 'temporal', 'temporal.db');
  }
  // The dev server's own UI listens on an internal port; the read-only proxy takes TEMPORAL_UI_PORT.
  const innerUiPort = opts.uiPort ? await freePort() : undefined;
  const args = devServerArgs({ dbFile, namespace: opts.namespace, port, uiPort: innerUiPort });
  logger.info({ port, uiPort: opts.uiPort || null, dbFile: dbFile ?? ':memory:' }, 'starting Temporal dev server');
  /** One dev server on this database file and port; resolves once it accepts connections. */
  const launch = async (): Promise<RunningChild> => {
    // Another Temporal on this port (a second gateway's) would answer our readiness probe: the
    // gateway would then run against it. Refuse before starting, and check who listens after.
    if (!(await portIsFree(port))) throw portInUseError('TEMPORAL_PORT', port);
    // Own process group: a Ctrl-C in the terminal reaches the gateway, which stops this in order.
    const child = spawn(opts.cliPath, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    let exited = false;
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString()).slice(-4000);
    });
    const exitedP = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    void exitedP.then(() => (exited = true));
    if (!child.pid) throw new Error(`could not start ${opts.cliPath}`);
    const pid = child.pid;
    superviseChild(pid, 'SIGTERM');
    void exitedP.then(() => releaseChild(pid));
    if (opts.dataDir) await recordChild(opts.dataDir, opts.pidName ?? 'temporal', pid);
    try {
      await waitForPort('127.0.0.1', port, 60_000, () => exited);
      if (innerUiPort) await waitForPort('127.0.0.1', innerUiPort, 30_000, () => exited);
    } catch (err) {
      await terminate(pid, 'SIGTERM', 5_000);
      throw new Error(`Temporal dev server did not start: ${(err as Error).message}\n${stderr.trim()}`, { cause: err });
    }
    if (!(await listensOn(pid, port))) {
      await terminate(pid, 'SIGTERM', 5_000);
      throw portInUseError('TEMPORAL_PORT', port);
    }
    return { pid, exited: exitedP };
  };
  // Both ports before anything starts, TEMPORAL_PORT first: a second gateway with the defaults
  // hears about the Temporal it would otherwise have joined.
  if (!(await portIsFree(port))) throw portInUseError('TEMPORAL_PORT', port);
  if (opts.uiPort && !(await portIsFree(opts.uiPort))) throw portInUseError('TEMPORAL_UI_PORT', opts.uiPort);
  const first = await launch();
  // With a database file, a dev server that dies is started again on the same file and port
  // (issue 11): clients and workers reconnect to the same address. In memory there is nothing
  // to come back to, so it is not restarted.
  const supervision = opts.dataDir
    ? superviseRestarts({ name: 'Temporal dev server', logger, first, restart: launch, stopLate: (pid) => terminate(pid, 'SIGTERM', 15_000) })
    : { pid: () => first.pid, release: () => undefined };
  const stopServer = async () => {
    supervision.release();
    await terminate(supervision.pid(), 'SIGTERM', 15_000);
    releaseChild(supervision.pid());
    if (opts.dataDir) await forgetChild(opts.dataDir, opts.pidName ?? 'temporal');
  };
  const ui = opts.uiPort && innerUiPort ? await readOnlyUiOrStop(opts.uiPort, innerUiPort, stopServer) : undefined;
  return {
    address: `127.0.0.1:${port}`,
    uiUrl: ui ? `http://127.0.0.1:${ui.port}` : undefined,
    get pid() {
      return supervision.pid();
    },
    async stop() {
      await ui?.close();
      await stopServer();
    },
  };
}

/** The read-only UI on TEMPORAL_UI_PORT; when it cannot listen, the dev server is stopped again. */
async function readOnlyUiOrStop(uiPort: number, innerUiPort: number, stopServer: () => Promise<void>): Promise<ReadOnlyUi> {
  try {
    return await startReadOnlyUi({ port: uiPort, upstreamPort: innerUiPort });
  } catch (err) {
    await stopServer();
    throw (err as NodeJS.ErrnoException).code === 'EADDRINUSE' ? portInUseError('TEMPORAL_UI_PORT', uiPort) : err;
  }
}

/** The CLI path's flags minus `server start-dev` and those the SDK sets itself (ip, ports, log level, UI). */
export function sdkExtraArgs(port: number, uiPort: number | undefined): string[] {
  const all = devServerArgs({ dbFile: undefined, namespace: 'default', port, uiPort }).slice(2);
  const owned = new Set(['--ip', '--port', '--log-level', '--headless', '--ui-port']);
  const out: string[] = [];
  for (let i = 0; i < all.length; i++) {
    const a = all[i]!;
    if (owned.has(a)) {
      if (a !== '--headless') i++; // skip its value too
      continue;
    }
    out.push(a);
  }
  return out;
}

/**
 * Last resort on an online machine without the CLI or Go: the TypeScript SDK downloads the same
 * dev server (cached under ~/.cache) and runs it with our database file, search attributes and
 * dynamic config. It cannot be exercised on an offline machine.
 */
export async function startTemporalViaSdkDownload(opts: Omit<DevServerOptions, 'cliPath'> & { downloadDir: string }): Promise<DevServer> {
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const port = opts.port || (await freePort());
  let dbFile: string | undefined;
  if (opts.dataDir) {
    await mkdir(path.join(opts.dataDir, 'temporal'), { recursive: true });
    dbFile = path.join(opts.dataDir, 'temporal', 'temporal.db');
  }
  if (!(await portIsFree(port))) throw portInUseError('TEMPORAL_PORT', port);
  if (opts.uiPort && !(await portIsFree(opts.uiPort))) throw portInUseError('TEMPORAL_UI_PORT', opts.uiPort);
  // As with the CLI: its UI on an internal port, the read-only proxy on TEMPORAL_UI_PORT.
  const innerUiPort = opts.uiPort ? await freePort() : undefined;
  const extraArgs = sdkExtraArgs(port, innerUiPort);
  opts.logger.info({ port, downloadDir: opts.downloadDir }, 'starting the Temporal dev server through the SDK download');
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'cached-download', downloadDir: opts.downloadDir },
      ip: '127.0.0.1',
      port,
      ...(innerUiPort ? { ui: true, uiPort: innerUiPort } : { ui: false }),
      ...(dbFile ? { dbFilename: dbFile } : {}),
      namespace: opts.namespace,
      extraArgs: dbFile ? [...extraArgs, '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal'] : extraArgs,
    },
  });
  const ui = opts.uiPort && innerUiPort ? await readOnlyUiOrStop(opts.uiPort, innerUiPort, () => env.teardown()) : undefined;
  return {
    address: env.address,
    uiUrl: ui ? `http://127.0.0.1:${ui.port}` : undefined,
    pid: null,
    async stop() {
      await ui?.close();
      await env.teardown();
    },
  };
}
