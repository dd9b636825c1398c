// Slack's request signing, exactly as Slack documents it ("Verifying requests from Slack"): the
// `X-Slack-Signature` header is `v0=` + hex HMAC-SHA256, keyed by the app's signing secret, of
// `v0:<X-Slack-Request-Timestamp>:<raw body>`; a timestamp more than 5 minutes from now is a
// replay and refused. Pure: the caller passes the clock.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SLACK_MAX_AGE_SECONDS = 5 * 60;

export function slackSignature(signingSecret: string, timestamp: string, rawBody: string): string {
  return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`;
}

export type SlackVerdict = { ok: true } | { ok: false; reason: 'missing' | 'stale' | 'mismatch' };

/** Checks the timestamp first (a stale request is refused whatever its signature). */
export function verifySlackRequest(
  signingSecret: string,
  headers: { timestamp: string | undefined; signature: string | undefined },
  rawBody: string,
  nowSeconds: number,
): SlackVerdict {
  const { timestamp, signature } = headers;
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'missing' };
  if (Math.abs(nowSeconds - Number(timestamp)) > SLACK_MAX_AGE_SECONDS) return { ok: false, reason: 'stale' };
  const expected = Buffer.from(slackSignature(signingSecret, timestamp, rawBody));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, reason: 'mismatch' };
  return { ok: true };
}
