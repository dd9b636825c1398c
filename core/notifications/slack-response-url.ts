// Which response_url a Slack interaction may make the gateway POST to. The URL arrives inside the
// signed payload, but a signature proves only who signed, not where the answer should go: only
// Slack's own hooks host (https://hooks.slack.com) or the configured Slack API's origin (where an
// operator pointed GATEWAY_SLACK_API_URL, e.g. a test double) are accepted. Pure.

export const SLACK_HOOKS_HOST = 'hooks.slack.com';

/** The URL to answer, or why it is refused. `trusted`: the operator's own Slack API origin. */
export function checkResponseUrl(raw: string, slackApiUrl: string): { url: URL; trusted: boolean } | { refused: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { refused: 'not a URL' };
  }
  if (url.username || url.password) return { refused: 'credentials in the URL' };
  if (url.origin === new URL(slackApiUrl).origin) return { url, trusted: true };
  if (url.protocol === 'https:' && url.hostname === SLACK_HOOKS_HOST && url.port === '') return { url, trusted: false };
  return { refused: `${url.origin} is not Slack's` };
}
