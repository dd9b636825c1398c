// Announces one approval on one occasion: plan the deliveries (the routing rules), then each one
// as its own activity with retries; when a delivery's retries run out it is recorded `failed`
// with the reason. Started fire-and-forget by the call's activities (never awaited by the call's
// workflow), so a channel that is down never blocks or delays the approval.
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { createNoticeActivities } from '../activities/notices.ts';
import { NOTICE_NON_RETRYABLE, type ApprovalNoticesInput } from './notice-definitions.ts';

type NoticeActivities = ReturnType<typeof createNoticeActivities>;

const bookkeeping = proxyActivities<NoticeActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 10, nonRetryableErrorTypes: [...NOTICE_NON_RETRYABLE] },
});

/** Why the last attempt failed, as recorded on the delivery. */
function reasonOf(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure || cause instanceof Error) return cause.message;
  return 'the delivery failed';
}

export async function approvalNoticesWorkflow(input: ApprovalNoticesInput): Promise<{ delivered: number; failed: number }> {
  const { approvalId, purpose } = input;
  if (purpose === 'outcome') {
    // Best effort: a Slack message that cannot be updated keeps its buttons, which then answer
    // that the approval is decided.
    try {
      await bookkeeping.updateNoticeMessages({ approvalId });
    } catch {
      /* recorded in the activity's log */
    }
    return { delivered: 0, failed: 0 };
  }
  const sending = proxyActivities<NoticeActivities>({
    startToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: input.retry.initialIntervalMs,
      backoffCoefficient: 2,
      maximumInterval: '5 minutes',
      maximumAttempts: input.retry.maximumAttempts,
      nonRetryableErrorTypes: [...NOTICE_NON_RETRYABLE],
    },
  });
  const ids = await bookkeeping.planNotices({ approvalId, purpose });
  let delivered = 0;
  let failed = 0;
  await Promise.all(
    ids.map(async (deliveryId) => {
      try {
        await sending.deliverNotice({ deliveryId });
        delivered++;
      } catch (err) {
        failed++;
        await bookkeeping.failNotice({ deliveryId, reason: reasonOf(err) });
      }
    }),
  );
  return { delivered, failed };
}
