// The approval-notice feature, composed once (server/services.ts): the admin service, the
// deliveries the notice workflow's activities run, and the two ways a person decides outside the
// dashboard (Slack, email), both through the approvals' own resolve path.
import type { Principal } from '../auth/principal.ts';
import { hkdfSync } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import type { Config } from '../config.ts';
import { createAuditWriter } from '../audit/writer.ts';
import type { Logger } from '../logger.ts';
import { readApproval, readVisibleApproval } from '../approvals/read.ts';
import { approvalViewReader } from '../approvals/store.ts';
import type { ApprovalService } from '../approvals/service.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import { emitWebhookEvent } from '../webhooks/emit.ts';
import { createDeliveries } from './deliveries.ts';
import { createEmailDecisions } from './email-decisions.ts';
import { createNotificationService } from './service.ts';
import { createSlackInteractions } from './slack-interactions.ts';
import { createSlackResponder } from './slack-response.ts';

export interface NoticeDeps {
  pool: DatabasePool;
  logger: Logger;
  keyring: VaultKeyring;
  masterKey: Buffer;
  config: Pick<Config, 'publicUrl' | 'notices' | 'outbound'>;
  temporal: Client;
  taskQueue: string;
  approvals: Pick<ApprovalService, 'resolve'>;
}

/** Email links are signed with a key of their own, derived from the master key. */
const linkKeyOf = (masterKey: Buffer) => Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'gateway email decision links v1', 32));

export function createNotices(deps: NoticeDeps) {
  const { pool, logger } = deps;
  const audit = createAuditWriter(pool);
  const linkKey = linkKeyOf(deps.masterKey);
  const deliveries = createDeliveries({
    pool,
    audit,
    keyring: deps.keyring,
    logger,
    publicUrl: deps.config.publicUrl,
    slackApiUrl: deps.config.notices.slackApiUrl,
    linkKey,
    emitWebhook: async (event) => {
      await emitWebhookEvent({ pool, temporal: deps.temporal, taskQueue: deps.taskQueue }, event);
    },
  });
  const by = (channel: 'slack' | 'email') => (p: Principal, id: string, body: { decision: 'allow_once' | 'deny'; reason?: string }) => deps.approvals.resolve(p, id, body, undefined, channel);
  return {
    service: createNotificationService({ pool, keyring: deps.keyring, readVisibleApproval: (p, id) => readVisibleApproval(approvalViewReader(pool), p, id) }),
    deliveries,
    slack: createSlackInteractions({
      pool,
      audit,
      logger,
      deliveries,
      responder: createSlackResponder({
        logger,
        slackApiUrl: deps.config.notices.slackApiUrl,
        policy: { allowPrivate: deps.config.outbound.allowPrivate, allowHosts: deps.config.outbound.allowHosts },
      }),
      resolve: by('slack'),
      mayResolve: async (p, id) => (await readApproval(approvalViewReader(pool), p, id))?.authority.resolve ?? false,
    }),
    email: createEmailDecisions({ pool, audit, linkKey, resolve: by('email') }),
    retry: { initialIntervalMs: deps.config.notices.retryInitialMs, maximumAttempts: deps.config.notices.maxAttempts },
  };
}
export type Notices = ReturnType<typeof createNotices>;
