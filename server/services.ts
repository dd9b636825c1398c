// The composition root: every domain service built once from the process's dependencies.
// Routes, MCP tools and the CLI receive these, never the pool or clients directly.
import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { createAuthService } from './auth/service.ts';
import type { Config } from './config.ts';
import { createIdentityService } from './identities/service.ts';
import type { Logger } from './logger.ts';
import { createVaultKeyring } from './vault/keyring.ts';

export interface ServiceDeps {
  config: Config;
  logger: Logger;
  pool: DatabasePool;
  temporal: Client;
  taskQueue: string;
  masterKey: Buffer;
}

export function createServices(deps: ServiceDeps) {
  const keyring = createVaultKeyring(deps.masterKey);
  const auth = createAuthService({ pool: deps.pool });
  const identities = createIdentityService({ pool: deps.pool });
  return { keyring, auth, identities };
}

export type Services = ReturnType<typeof createServices>;
