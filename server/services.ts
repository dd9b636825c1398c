// The composition root: every domain service built once from the process's dependencies.
// Routes, MCP tools and the CLI receive these, never the pool or clients directly.
import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { createAuthService } from './auth/service.ts';
import type { Config } from './config.ts';
import { createIdentityService } from './identities/service.ts';
import type { Logger } from './logger.ts';
import { createVaultKeyring } from './vault/keyring.ts';
import { createCallService } from './calls/service.ts';
import type { Catalog } from '../core/registry/catalog.ts';
import { createRegistryService } from './registry/service.ts';
import { createVaultService } from './vault/service.ts';
import { createConnectionService } from './connections/service.ts';
import { createWebhookService } from './webhooks/service.ts';
import { createAuditService } from './audit/service.ts';

export interface ServiceDeps {
  config: Config;
  logger: Logger;
  pool: DatabasePool;
  temporal: Client;
  taskQueue: string;
  masterKey: Buffer;
  /** Built-in templates, loaded once at start-up from config.serviceDirs. */
  catalog: Catalog;
}

export function createServices(deps: ServiceDeps) {
  const keyring = createVaultKeyring(deps.masterKey);
  const auth = createAuthService({ pool: deps.pool });
  const identities = createIdentityService({ pool: deps.pool });
  const registry = createRegistryService({ pool: deps.pool, catalog: deps.catalog });
  const vault = createVaultService({ pool: deps.pool, keyring });
  const connections = createConnectionService({ pool: deps.pool, keyring, vault, publicUrl: deps.config.publicUrl, logger: deps.logger });
  const webhooks = createWebhookService({ pool: deps.pool, keyring });
  const audit = createAuditService({ pool: deps.pool });
  const calls = createCallService({
    pool: deps.pool,
    temporal: deps.temporal,
    taskQueue: deps.taskQueue,
    registry,
    keyring,
    masterKey: deps.masterKey,
    config: deps.config,
  });
  return { keyring, auth, identities, registry, vault, connections, webhooks, audit, calls };
}

export type Services = ReturnType<typeof createServices>;
