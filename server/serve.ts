// Starts a gateway process: embedded PostgreSQL and Temporal when nothing external is configured,
// migrations, the Temporal worker and/or the HTTP API. `stop()` undoes it all in reverse order so
// nothing is left running: close HTTP → drain the worker → close clients → stop children.
import http from 'node:http';
import { leaderLock } from './db/leader-lock.ts';
import { startMcpServerWatcher } from './mcp-servers/watcher.ts';
import path from 'node:path';
import type { LocalExchange } from './temporal/local-exchange.ts';
import type { WorkerInterceptors } from '@temporalio/worker';
import type { AddressInfo } from 'node:net';
import { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import type { Express } from 'express';
import { createApp } from './app.ts';
import { bootstrapFirstAdmin } from './identities/bootstrap.ts';
import { createServices, type ServiceDeps } from './services.ts';
import { loadServiceDirectories } from './registry/loader.ts';
import { createCatalog } from '../core/registry/catalog.ts';
import type { Config } from './config.ts';
import { createDatabasePool } from './db/pool.ts';
import { stopDisclosePool } from './execution/disclose.ts';
import { migrate } from './db/migrate.ts';
import type { Logger } from './logger.ts';
import { checkReadiness } from './readiness.ts';
import { acquireDataDirLock, ensureDataDir, loadOrCreateMasterKey } from './embedded/data-dir.ts';
import { startEmbeddedPostgres } from './embedded/embedded-postgres.ts';
import { databaseUrlError, listenError, temporalAddressError } from './embedded/startup-error.ts';
import { cachedCliPath, resolveTemporalCli, TemporalCliUnavailableError } from './embedded/temporal-cli.ts';
import { startTemporalDevServer, startTemporalViaSdkDownload } from './embedded/temporal-dev-server.ts';
import { connectTemporalClient } from './temporal/client.ts';
import { watchTemporal } from './temporal/health.ts';
import { ensureSearchAttributes } from './temporal/search-attributes.ts';
import { readInstanceId } from './temporal/instance-store.ts';
import { claimTaskQueue } from './temporal/queue-owner.ts';
import { connectWorker, createGatewayWorker, installRuntimeWithMetrics, type GatewayWorker } from './temporal/worker.ts';
import { createMetrics } from './metrics/metrics.ts';
import { startMetricsListener } from './metrics/listener.ts';
import { pendingApprovalsReader, poolStateReader } from './metrics/sources.ts';
import { freePort } from './embedded/processes.ts';
import { answerClientErrors } from './http/client-error.ts';
import { TASK_QUEUE } from '../workflows/definitions.ts';
import { startTracing, type Tracing } from './telemetry/tracing.ts';
import { withTracing } from './telemetry/worker-tracing.ts';

export type Role = 'api' | 'worker' | 'all';

export interface Gateway {
  url: string;
  databaseUrl: string;
  temporalAddress: string;
  temporalUiUrl: string | undefined;
  pool: DatabasePool;
  temporal: Client;
  /** The Express application (tests enumerate its routes). */
  app: Express;
  /** What this process's API and worker hand each other (tests read its counts). */
  exchange: LocalExchange;
  /** Resolves when the worker stops on its own (a fatal error); never resolves for api-only. */
  workerDone: Promise<void>;
  stop(): Promise<void>;
}

export interface StartOptions {
  config: Config;
  role: Role;
  logger: Logger;
  /** Tests share one Temporal server: each file gets its own task queue. */
  taskQueue?: string;
  /** The worker's SDK interceptors (the crash tests inject their faults here, from the harness). */
  workerInterceptors?: WorkerInterceptors | undefined;
  /** The moment budget windows are taken at (ServiceDeps.budgetClock); tests pin it. */
  budgetClock?: (() => Date) | undefined;
}

/** The advisory lock key of the MCP server watcher's leader (unique among the gateway's session locks). */
const MCP_SERVER_WATCHER_LOCK = 7242031n;

export async function startGateway({ config, role, logger, taskQueue = config.temporal.taskQueue ?? TASK_QUEUE, workerInterceptors, budgetClock }: StartOptions): Promise<Gateway> {
  const cleanups: Array<{ name: string; run: () => Promise<void> }> = [];
  const onStop = (name: string, run: () => Promise<void>) => cleanups.unshift({ name, run });
  const stop = async () => {
    for (const { name, run } of cleanups.splice(0)) {
      try {
        await run();
      } catch (err) {
        logger.error({ err, step: name }, 'error during shutdown');
      }
    }
  };

  try {
    // Traces (OTEL_EXPORTER_OTLP_ENDPOINT): started before any Temporal client, stopped last so
    // the spans of the shutdown itself are exported. Unset: nothing loaded, nothing registered.
    let tracing: Tracing | undefined;
    if (config.tracing) {
      tracing = await startTracing(config.tracing);
      onStop('tracing', tracing.shutdown);
      logger.info({ endpoint: new URL(config.tracing.endpoint).origin, service: config.tracing.serviceName }, 'tracing: spans exported by OTLP');
    }
    const embedded = !config.databaseUrl || !config.temporal.address;
    if (embedded || !config.masterKey) await ensureDataDir(config.dataDir);
    if (embedded) onStop('data-dir lock', await acquireDataDirLock(config.dataDir));

    // The vault key is loaded here so a production start without one fails before anything runs.
    const masterKey = config.masterKey ?? (await loadOrCreateMasterKey(config.dataDir, logger));

    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      const pg = await startEmbeddedPostgres({ dataDir: config.dataDir, logger });
      onStop('embedded PostgreSQL', pg.stop);
      databaseUrl = pg.url;
    }
    // An external DATABASE_URL nobody answers at, or that refuses the login: one line naming it.
    const namingDatabaseUrl = (err: unknown) => {
      throw (config.databaseUrl && databaseUrlError(config.databaseUrl, err)) || err;
    };
    const pool = await createDatabasePool(databaseUrl, { preparedStatements: config.databasePreparedStatements }).catch(namingDatabaseUrl);
    onStop('database pool', () => pool.end());
    const applied = await migrate(databaseUrl, { log: (m) => logger.info(m) }).catch(namingDatabaseUrl);
    if (applied.length) logger.info({ applied }, 'migrations applied');
    await bootstrapFirstAdmin(pool, config, logger);

    let temporalAddress = config.temporal.address;
    let temporalUiUrl: string | undefined;
    if (!temporalAddress) {
      const devOpts = { dataDir: config.dataDir, namespace: config.temporal.namespace, port: config.temporal.port, uiPort: config.temporal.uiPort, logger };
      const cliPath = await resolveTemporalCli({ explicitPath: config.temporal.cliPath, progress: (l) => logger.info(l) }).catch((err: unknown) => {
        if (err instanceof TemporalCliUnavailableError) return null;
        throw err;
      });
      const dev = cliPath
        ? await startTemporalDevServer({ cliPath, ...devOpts })
        : await startTemporalViaSdkDownload({ ...devOpts, downloadDir: path.join(path.dirname(path.dirname(cachedCliPath())), 'sdk-download') });
      onStop('Temporal dev server', dev.stop);
      temporalAddress = dev.address;
      temporalUiUrl = dev.uiUrl;
    }
    const temporalConn = await connectTemporalClient(temporalAddress, config.temporal.namespace, tracing?.clientInterceptors).catch((err: unknown) => {
      throw config.temporal.address ? temporalAddressError(config.temporal.address, err) : err;
    });
    onStop('Temporal client', temporalConn.close);
    const temporalHealth = watchTemporal(temporalConn.client, logger);
    onStop('Temporal health probe', async () => temporalHealth.stop());
    await ensureSearchAttributes({
      connection: temporalConn.client.connection,
      namespace: config.temporal.namespace,
      register: config.temporal.registerSearchAttributes,
      logger,
    });
    await claimTaskQueue({ connection: temporalConn.client.connection, namespace: config.temporal.namespace, taskQueue, address: temporalAddress, instanceId: await readInstanceId(pool), logger });

    // Metrics (METRICS_PORT): the gateway's registry, and in a worker the SDK's own series, served
    // by the SDK on a free loopback port of its own and merged into this listener's /metrics.
    const metrics = createMetrics();
    metrics.watch({ pool: poolStateReader(pool), pendingApprovals: pendingApprovalsReader(pool) });
    let temporalMetricsUrl: string | null = null;
    if (config.metrics && role !== 'api') temporalMetricsUrl = installRuntimeWithMetrics(logger, `127.0.0.1:${await freePort()}`);
    if (config.metrics) {
      const listener = await startMetricsListener({ ...config.metrics, metrics, temporalMetricsUrl: () => temporalMetricsUrl, logger });
      onStop('metrics listener', listener.stop);
      logger.info({ metrics: listener.url }, `metrics at ${listener.url}`);
    }

    const loaded = await loadServiceDirectories(config.serviceDirs, logger);
    logger.info({ services: loaded.services.length, skipped: loaded.errors.length }, 'service definitions loaded');
    const catalog = createCatalog(loaded.services);
    // Role `all`: the worker's connection is opened first, so calls can start their workflows
    // eagerly on it and take their first answer in this process (issue 28).
    const workerConnection = role !== 'api' ? await connectWorker(temporalAddress, logger) : undefined;
    const eagerClient = role === 'all' && workerConnection ? new Client({ connection: workerConnection, namespace: config.temporal.namespace, ...(tracing ? { interceptors: { workflow: tracing.clientInterceptors } } : {}) }) : undefined;
    const serviceDeps: ServiceDeps = { config, logger, pool, temporal: temporalConn.client, taskQueue, masterKey, catalog, temporalHealth, metrics, ...(eagerClient ? { eagerClient } : {}), ...(budgetClock ? { budgetClock } : {}) };
    const services = createServices(serviceDeps);
    onStop('disclose pool', stopDisclosePool);
    onStop('call cancellation listener', async () => services.callCancels.stop());

    let worker: GatewayWorker | undefined;
    let workerDone: Promise<void> = new Promise(() => undefined);
    if (role !== 'api') {
      worker = await createGatewayWorker({
        address: temporalAddress,
        ...(workerConnection ? { connection: workerConnection } : {}),
        namespace: config.temporal.namespace,
        deps: { pool, logger, keyring: services.keyring, temporal: temporalConn.client, taskQueue, services },
        logger,
        taskQueue,
        ...withTracing(tracing, { interceptors: workerInterceptors, bundlePath: config.temporal.workflowBundlePath, logger }),
      });
      workerDone = worker.run();
      onStop('Temporal worker', worker.shutdown);
    }

    // Connected MCP servers' tool lists kept current (list_changed, schedule): background work of
    // the worker role, by one process of the deployment (leader lock).
    if (role !== 'api') {
      const lock = leaderLock(databaseUrl, MCP_SERVER_WATCHER_LOCK, (err) => logger.warn({ err: (err as Error).message }, 'MCP server watcher lock connection failed'));
      const watcher = startMcpServerWatcher({ servers: services.mcpServers, lock, logger, relistMinutes: config.mcpServerRelistMinutes, connectTimeoutMs: Math.min(15_000, config.outbound.timeoutMs) });
      onStop('MCP server watcher', watcher.stop);
    }

    const app = createApp({
      logger,
      ...(role !== 'worker' ? { api: { deps: serviceDeps, services } } : {}),
      role,
      tracing: tracing !== undefined,
      readiness: () => checkReadiness({ pool, temporal: temporalHealth }),
    });
    const server = http.createServer(app);
    answerClientErrors(server);
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => reject(listenError('PORT', config.port, config.host, err) ?? err));
      // HOST picks the interface (the cluster: loopback); unset, every interface as before.
      if (config.host) server.listen(config.port, config.host, () => resolve());
      else server.listen(config.port, () => resolve());
    });
    onStop('HTTP server', () => closeServer(server));
    const port = (server.address() as AddressInfo).port;
    const url = `http://localhost:${port}`;
    // The address people and agents use (PUBLIC_URL), not the local listener.
    // The start's summary: where to go, and (embedded) where the data lives.
    logger.info({ url: config.publicUrl, port, role, temporal: temporalAddress, temporalUi: temporalUiUrl ?? null, ...(embedded ? { data: config.dataDir } : {}) }, `gateway ready at ${config.publicUrl}`);

    return { url, databaseUrl, temporalAddress, temporalUiUrl, pool, temporal: temporalConn.client, app, exchange: services.exchange, workerDone, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    // Long-lived streams (SSE) would hold close() open forever: give them a moment, then cut.
    setTimeout(() => server.closeAllConnections(), 5_000).unref();
  });
}
