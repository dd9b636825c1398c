// The call service wired to PostgreSQL and Temporal: its preparer, starter and replay built over the
// pool and client, and its reads bound to the calls store. The service itself (service.ts) sees
// only these parts.
import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { approvalViewReader } from '../approvals/store.ts';
import type { CallWorkflows } from '../approvals/workflow-port.ts';
import type { Config } from '../config.ts';
import type { ConnectionService } from '../connections/service.ts';
import type { ExecutorDeps } from '../execution/execute.ts';
import { coverageCheck } from '../identities/chain-check.ts';
import type { ChainReader } from '../identities/readers.ts';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from '../metrics/metrics.ts';
import type { OrgReader } from '../orgs/readers.ts';
import type { RegistryService } from '../registry/service.ts';
import type { TemporalHealth } from '../temporal/health.ts';
import type { LocalExchange } from '../temporal/local-exchange.ts';
import type { MessageSigner } from '../temporal/message-signer.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import { settleIfNeverStarted } from './never-started.ts';
import { createCallPreparer } from './prepare.ts';
import { enforceRateLimit } from './rate-limit.ts';
import { createCallReplay } from './replay.ts';
import { createCallService, type CallReads } from './service.ts';
import { createCallStarter } from './start.ts';
import * as store from './store.ts';
import { createWorkflowGoneSettler } from './workflow-gone.ts';

export interface CallServiceDeps {
  pool: DatabasePool;
  temporal: Client;
  taskQueue: string;
  registry: RegistryService;
  keyring: VaultKeyring;
  masterKey: Buffer;
  /** Signs what the API sends a call's workflow (resumes); the spec carries its public keys. */
  signer: MessageSigner;
  /** Decisions and cancels sent to a call's workflow (server/approvals/workflow-port.ts). */
  workflows: Pick<CallWorkflows, 'cancel'>;
  config: Pick<Config, 'publicUrl' | 'executionWindowSeconds' | 'rateLimitPerMinute'> & Partial<Pick<Config, 'eagerAnswerPatienceMs'>>;
  /** Credentials and outbound client for `resolve` lookups; without it ids stay as they are. */
  executor?: ExecutorDeps;
  /** Refuses Temporal operations at once while Temporal is down (503 instead of a long hang). */
  temporalHealth?: TemporalHealth;
  /** Turns a missing or unauthorized connection into its typed error (with an auth_url). */
  connections: Pick<ConnectionService, 'credentialError' | 'refOf'>;
  /** What calls read of identities and orgs (readers bound in server/services.ts). */
  chains: ChainReader;
  orgs: Pick<OrgReader, 'getOrg'>;
  logger: Logger;
  /** A client on this process's own worker connection (role `all`): see start.ts. */
  eagerClient?: Client;
  /** What this process's API and worker hand each other directly. */
  exchange: LocalExchange;
  /** Rate-limit refusals and the gateway's overhead on synchronous answers. */
  metrics?: Pick<GatewayMetrics, 'rateLimited' | 'overheadSeconds'>;
}

/** The stored-call reads of the call service, over the pool. */
export function callReads(deps: Pick<CallServiceDeps, 'pool' | 'temporal' | 'chains' | 'config'>): CallReads {
  const { pool } = deps;
  return {
    settleIfNeverStarted: (call) => settleIfNeverStarted({ pool, temporal: deps.temporal, chains: deps.chains }, call),
    callAsOfNow: (callId) => store.callAsOfNow(pool, callId),
    openApprovalsOf: (ids) => store.openApprovalsOf(pool, ids),
    admit: (identityId) => enforceRateLimit(pool, identityId, deps.config.rateLimitPerMinute),
  };
}

export function createCallServiceOver(deps: CallServiceDeps) {
  const settleWithoutWorkflow = createWorkflowGoneSettler(deps);
  const starter = createCallStarter(deps);
  return createCallService({
    reads: callReads(deps),
    approvals: approvalViewReader(deps.pool),
    workflows: deps.workflows,
    chains: deps.chains,
    preparer: createCallPreparer({ ...deps, covers: coverageCheck(deps.pool) }),
    start: (p, prepared, requestId, opts) => starter.start(p, prepared, requestId, opts),
    replay: createCallReplay({ ...deps, settleWithoutWorkflow }),
    settleWithoutWorkflow,
    logger: deps.logger,
    metrics: deps.metrics,
  });
}
