// Ephemeral answers to a Slack interaction, POSTed to its response_url: only to Slack's own host
// (core/notifications/slack-response-url.ts) and through the outbound client with the gateway's
// address policy, like every other request the gateway makes for someone else. Never throws: an
// answer that cannot be sent is logged.
import { checkResponseUrl } from '../../core/notifications/slack-response-url.ts';
import { escapeMrkdwn } from '../../core/notifications/slack-mrkdwn.ts';
import type { AddressPolicy } from '../../core/execution/address-policy.ts';
import { sendOutbound } from '../execution/http-client.ts';
import type { Logger } from '../logger.ts';

export interface SlackResponderDeps {
  logger: Logger;
  /** GATEWAY_SLACK_API_URL: its origin is trusted like the Web API calls made to it. */
  slackApiUrl: string;
  policy: AddressPolicy;
}

const TIMEOUT_MS = 10_000;
const MAX_ANSWER_BYTES = 64 * 1024;

export function createSlackResponder(deps: SlackResponderDeps) {
  return {
    async ephemeral(responseUrl: string | undefined, text: string): Promise<void> {
      if (!responseUrl) return;
      const checked = checkResponseUrl(responseUrl, deps.slackApiUrl);
      if ('refused' in checked) {
        deps.logger.warn({ reason: checked.refused }, 'Slack response_url refused');
        return;
      }
      try {
        const res = await sendOutbound(
          {
            method: 'POST',
            url: checked.url,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ response_type: 'ephemeral', replace_original: false, text: escapeMrkdwn(text) }),
          },
          // Slack's response_url answers directly: a redirect would lead somewhere else.
          { timeoutMs: TIMEOUT_MS, maxResponseBytes: MAX_ANSWER_BYTES, maxRedirects: 0, policy: deps.policy, trustedHosts: new Set(checked.trusted ? [checked.url.hostname.toLowerCase()] : []) },
        );
        if (res.status >= 400) deps.logger.warn({ status: res.status }, 'Slack refused an interaction answer');
      } catch (err) {
        deps.logger.warn({ err: (err as Error).message }, 'could not answer a Slack interaction');
      }
    },
  };
}
export type SlackResponder = ReturnType<typeof createSlackResponder>;
