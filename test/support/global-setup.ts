// One real PostgreSQL and one real Temporal dev server for the whole integration run. Each test
// file then makes its own database and task queue (test/support/gateway.ts), so files are isolated.
// Teardown stops every child even when tests fail; the processes module's exit hook covers crashes.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { createLogger } from '../../server/logger.ts';
import { createMigratedTemplate } from './template-database.ts';
import { ensureDatabase, startEmbeddedPostgres } from '../../server/embedded/embedded-postgres.ts';
import { resolveTemporalCli } from '../../server/embedded/temporal-cli.ts';
import { startTemporalDevServer } from '../../server/embedded/temporal-dev-server.ts';
import { WORKFLOWS_PATH } from '../../server/temporal/worker.ts';
import { WORKFLOW_PRELOAD_MODULES } from '../../server/temporal/bundle-options.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    temporalAddress: string;
    temporalCliPath: string;
    workflowBundlePath: string;
    /** A database with every migration applied, which each test database is cloned from. */
    pgTemplateDatabase: string;
  }
}

/** The migrated template each test file's database starts as a copy of (test/support/gateway.ts). */
const TEMPLATE_DATABASE = 'gateway_migrated_template';

export default async function setup(project: TestProject) {
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'warn');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-it-'));
  await chmod(dir, 0o755); // the embedded PostgreSQL runs as its own OS user
  const stops: Array<() => Promise<void>> = [];
  const teardown = async () => {
    for (const stop of stops.reverse()) await stop().catch((err: unknown) => console.error('teardown:', err));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const [pg, cliPath, bundle] = await Promise.all([
      startEmbeddedPostgres({ dataDir: dir, logger, database: 'postgres' }),
      resolveTemporalCli({ explicitPath: process.env.TEMPORAL_CLI_PATH }),
      bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, preloadModules: WORKFLOW_PRELOAD_MODULES, logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error } }),
    ]);
    stops.push(pg.stop);
    const temporal = await startTemporalDevServer({ cliPath, namespace: 'default', logger });
    stops.push(temporal.stop);
    const bundlePath = path.join(dir, 'workflow-bundle.js');
    await writeFile(bundlePath, bundle.code);
    await ensureDatabase(pg.url, 'postgres');
    await createMigratedTemplate(pg.url, TEMPLATE_DATABASE);
    project.provide('pgAdminUrl', pg.url);
    project.provide('pgTemplateDatabase', TEMPLATE_DATABASE);
    project.provide('temporalAddress', temporal.address);
    project.provide('temporalCliPath', cliPath);
    project.provide('workflowBundlePath', bundlePath);
  } catch (err) {
    await teardown();
    throw err;
  }
  return teardown;
}
