// Activities do all I/O for workflows. One factory, narrowed dependencies (DESIGN.md §6).
import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import type { Logger } from '../server/logger.ts';
import type { VaultKeyring } from '../server/vault/keyring.ts';
import { createDiagnosticActivities } from './diagnostics.ts';
import { createWebhookActivities } from './webhooks.ts';
import { createCallActivities } from './calls.ts';
import type { Services } from '../server/services.ts';
import { emitWebhookEvent } from '../server/webhooks/emit.ts';
import { mcpRuntime } from '../server/execution/runtimes/mcp.ts';
import { createPlatformRuntime } from '../server/execution/runtimes/platform.ts';
import { createNoticeActivities, noticeStarter } from './notices.ts';
import { inCallScopes } from './call-scope.ts';

export interface ActivityDeps {
  pool: DatabasePool;
  logger: Logger;
  keyring: VaultKeyring;
  /** For activities that start workflows (webhook deliveries) on the worker's own task queue. */
  temporal: Client;
  taskQueue: string;
  /** The domain services the call activities reuse (registry, vault, connections). */
  services: Services;
}

export function createActivities(deps: ActivityDeps) {
  const { notices } = deps.services;
  const { metrics } = deps.services;
  const noticeDeps = { logger: deps.logger, temporal: deps.temporal, taskQueue: deps.taskQueue, deliveries: notices.deliveries, retry: notices.retry };
  const startNotices = noticeStarter(noticeDeps);
  return inCallScopes({
    ...createDiagnosticActivities(deps),
    ...createWebhookActivities({ ...deps, metrics }),
    ...createNoticeActivities({ ...noticeDeps, metrics }),
    ...createCallActivities({
      pool: deps.pool,
      logger: deps.logger,
      keyring: deps.keyring,
      temporal: deps.temporal,
      signer: deps.services.signer,
      registry: deps.services.registry,
      exchange: deps.services.exchange,
      metrics,
      budgetClock: deps.services.budgetClock,
      executor: {
        ...deps.services.executor,
        // Non-HTTP runtimes: tools on external MCP servers, and the gateway's own platform actions.
        runtimes: {
          mcp: mcpRuntime,
          platform: createPlatformRuntime({ chains: deps.services.chains, identities: deps.services.identities, approvals: deps.services.approvals }),
        },
      },
      emitEvent: async (event) => {
        // A decision or an execution ends the approval's Slack messages' buttons: update them in place.
        const approvalId = String(event.data.approval_id);
        if (event.type !== 'approval.raised' && (await notices.deliveries.hasSlackMessages(approvalId))) await startNotices(approvalId, 'outcome', `outcome-${event.id}`);
        await emitWebhookEvent({ pool: deps.pool, temporal: deps.temporal, taskQueue: deps.taskQueue }, event);
      },
      startNotices,
    }),
  });
}
