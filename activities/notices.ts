// Activities of approval notices: start the notice workflow for an occasion (idempotent by its
// id), plan, deliver one (one attempt; the workflow's policy retries), record a final failure,
// update the Slack messages once decided. Secrets are opened inside server/notifications only.
import type { GatewayMetrics } from '../server/metrics/metrics.ts';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { Logger } from '../server/logger.ts';
import { UndeliverableNotice, type Deliveries } from '../server/notifications/deliveries.ts';
import { isPermanentSlackError } from '../server/notifications/slack-api.ts';
import { noticeStarter } from '../server/notifications/start.ts';
import type { ApprovalNoticesInput } from '../workflows/notice-definitions.ts';

export { noticeStarter };

export interface NoticeActivityDeps {
  logger: Logger;
  temporal: Client;
  taskQueue: string;
  deliveries: Deliveries;
  retry: ApprovalNoticesInput['retry'];
  metrics: Pick<GatewayMetrics, 'notice'>;
}

export function createNoticeActivities(deps: NoticeActivityDeps) {
  const { deliveries } = deps;
  const start = noticeStarter(deps);
  return {
    planNotices: (input: { approvalId: string; purpose: string }) => deliveries.plan(input.approvalId, input.purpose),

    async deliverNotice(input: { deliveryId: string }): Promise<string> {
      try {
        // A retry may follow an attempt that reached Slack or the mail server but crashed before recording it.
        const out = await deliveries.deliver(input.deliveryId, { retry: Context.current().info.attempt > 1 });
        if (out === 'delivered') deps.metrics.notice('delivered');
        return out;
      } catch (err) {
        if (err instanceof UndeliverableNotice) throw ApplicationFailure.nonRetryable(err.message, 'UndeliverableNotice');
        if (isPermanentSlackError(err)) throw ApplicationFailure.nonRetryable((err as Error).message, 'PermanentSlackError');
        throw ApplicationFailure.retryable(err instanceof Error ? err.message : String(err), 'NoticeDeliveryFailed');
      }
    },

    /** A delivery whose retries ran out (or that no retry can fix): failed for good. */
    async failNotice(input: { deliveryId: string; reason: string }): Promise<void> {
      await deliveries.fail(input.deliveryId, input.reason);
      deps.metrics.notice('failed');
    },

    updateNoticeMessages: (input: { approvalId: string }) => deliveries.updateSlackMessages(input.approvalId),

    /** From the call workflow's reminder timer. */
    remindResolver: (input: { approvalId: string; n: number }) => start(input.approvalId, `reminder-${input.n}`),
  };
}
