// Shared between the approval-notice workflow and the rest of the gateway: its input, its id and
// its retry policy (issue 30). The input carries ids only: never a secret, never the request.

export interface ApprovalNoticesInput {
  approvalId: string;
  /** `raised`, `bubbled`, `reminder-<n>`: announce; `outcome`: update the Slack messages in place. */
  purpose: string;
  /** One delivery's retries (from the gateway's config): exponential from the first wait. */
  retry: { initialIntervalMs: number; maximumAttempts: number };
}

/** One workflow per approval and occasion: starting it twice is a no-op. */
export const approvalNoticesWorkflowId = (approvalId: string, occasion: string) => `notices-${approvalId}-${occasion}`;

/** Error types no retry can fix: the recipient or the channel cannot be reached as configured. */
export const NOTICE_NON_RETRYABLE = ['UndeliverableNotice', 'PermanentSlackError'] as const;
