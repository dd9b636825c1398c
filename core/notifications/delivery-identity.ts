// How one notice delivery is recognised again on a retry, so that an attempt the receiver carried
// out but never confirmed (the gateway crashed, the answer was lost) is not announced twice:
// - email: a Message-ID derived from the delivery's id, the same on every attempt, so mail
//   systems and clients drop the copies;
// - Slack: the post carries message metadata naming the delivery; a retry looks for it in the
//   conversation and updates it instead of posting again. Pure.

/** Slack's metadata event type of an approval notice (letters, digits and `_`, as Slack requires). */
export const NOTICE_EVENT_TYPE = 'gateway_approval_notice';

export interface NoticeMetadata {
  event_type: typeof NOTICE_EVENT_TYPE;
  event_payload: { delivery_id: string };
}

export const noticeMetadata = (deliveryId: string): NoticeMetadata => ({ event_type: NOTICE_EVENT_TYPE, event_payload: { delivery_id: deliveryId } });

/** Whether a message's metadata (as conversations.history returns it) is this delivery's. */
export function isNoticeOf(metadata: unknown, deliveryId: string): boolean {
  if (!metadata || typeof metadata !== 'object') return false;
  const m = metadata as { event_type?: unknown; event_payload?: { delivery_id?: unknown } };
  return m.event_type === NOTICE_EVENT_TYPE && m.event_payload?.delivery_id === deliveryId;
}

/** `<approval-notice.<delivery id>@<the sender's domain>>`: unique per delivery, stable across retries. */
export function noticeMessageId(deliveryId: string, from: string): string {
  const domain = from.slice(from.lastIndexOf('@') + 1) || 'gateway.invalid';
  return `<approval-notice.${deliveryId}@${domain}>`;
}

/**
 * How far back (seconds before the delivery was planned) a retry looks for the first attempt's
 * post: the post cannot be older than its delivery; the margin absorbs clock skew with Slack.
 */
export const EARLIER_POST_MARGIN_S = 120;
