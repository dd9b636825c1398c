// The few Slack Web API methods approvals use, over fetch: JSON bodies, `Authorization: Bearer
// <bot token>`, and Slack's `{ok, error}` answer. The base URL is configurable (tests run a
// loopback fake). The token is passed per call and never logged.
import type { NoticeMetadata } from '../../core/notifications/delivery-identity.ts';

export class SlackApiError extends Error {
  override name = 'SlackApiError';
  /** A Slack error code (`users_not_found`, `channel_not_found`, …) or `http_<status>`. */
  readonly code: string;
  constructor(message: string, code: string) {
    super(message);
    this.code = code;
  }
}

/** Answers no retry can change (the configuration or the person is wrong). */
const PERMANENT = new Set(['invalid_auth', 'not_authed', 'account_inactive', 'token_revoked', 'channel_not_found', 'users_not_found', 'not_in_channel', 'missing_scope']);
export const isPermanentSlackError = (err: unknown) => err instanceof SlackApiError && PERMANENT.has(err.code);

const TIMEOUT_MS = 10_000;
/** conversations.history pages read while looking for one message (newest first, 200 a page). */
const HISTORY_PAGES = 5;
/** conversations.list pages read while looking for a channel by name (1000 a page). */
const LIST_PAGES = 10;

/** A message as conversations.history returns it (with `include_all_metadata`). */
export interface HistoryMessage {
  ts: string;
  metadata?: unknown;
}

export function slackApi(baseUrl: string, token: string) {
  // Write methods take JSON; read methods (users.*, conversations.history/list) only form-encoded
  // arguments, as Slack documents.
  async function call<T extends Record<string, unknown>>(method: string, body: Record<string, unknown>, form = false): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${baseUrl}/${method}`, {
        method: 'POST',
        headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json; charset=utf-8', authorization: `Bearer ${token}` },
        body: form ? new URLSearchParams(body as Record<string, string>).toString() : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw new SlackApiError(`Slack ${method}: ${err instanceof Error ? err.message : String(err)}`, 'network');
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new SlackApiError(`Slack ${method} answered HTTP ${res.status}`, `http_${res.status}`);
    }
    const answer = (await res.json().catch(() => null)) as (T & { ok?: boolean; error?: string }) | null;
    if (!answer || answer.ok !== true) throw new SlackApiError(`Slack ${method} failed: ${answer?.error ?? 'no answer'}`, answer?.error ?? 'bad_answer');
    return answer;
  }
  return {
    postMessage: (channel: string, text: string, blocks: unknown[], metadata?: NoticeMetadata) =>
      call<{ channel: string; ts: string }>('chat.postMessage', { channel, text, blocks, ...(metadata ? { metadata } : {}) }),
    update: (channel: string, ts: string, text: string, blocks: unknown[]) => call('chat.update', { channel, ts, text, blocks }),
    lookupByEmail: async (email: string) => (await call<{ user: { id: string } }>('users.lookupByEmail', { email }, true)).user.id,
    /** The presser's email (scope users:read.email): interactions carry only the user id. */
    userEmail: async (user: string) => (await call<{ user: { profile?: { email?: string } } }>('users.info', { user }, true)).user.profile?.email ?? null,
    openView: (triggerId: string, view: unknown) => call('views.open', { trigger_id: triggerId, view }),
    /** The id of a channel named `name` (no #), or null (scopes channels:read, groups:read). */
    async channelId(name: string): Promise<string | null> {
      let cursor = '';
      for (let page = 0; page < LIST_PAGES; page++) {
        const args = { types: 'public_channel,private_channel', exclude_archived: 'true', limit: '1000', ...(cursor ? { cursor } : {}) };
        const answer = await call<{ channels?: { id: string; name: string }[]; response_metadata?: { next_cursor?: string } }>('conversations.list', args, true);
        const found = (answer.channels ?? []).find((c) => c.name === name);
        if (found) return found.id;
        cursor = answer.response_metadata?.next_cursor ?? '';
        if (!cursor) return null;
      }
      return null;
    },
    /** The id of the bot's direct-message conversation with a user (scope im:write). */
    dmChannel: async (user: string) => (await call<{ channel: { id: string } }>('conversations.open', { users: user })).channel.id,
    /**
     * The newest message of a conversation since `oldest` (Unix seconds) that `matches`, or null
     * (scopes channels:history, groups:history, im:history; the bot must be in the channel).
     */
    async findMessage(channel: string, oldest: number, matches: (m: HistoryMessage) => boolean): Promise<HistoryMessage | null> {
      let cursor = '';
      for (let page = 0; page < HISTORY_PAGES; page++) {
        const args = { channel, oldest: String(oldest), include_all_metadata: 'true', limit: '200', ...(cursor ? { cursor } : {}) };
        const answer = await call<{ messages?: HistoryMessage[]; response_metadata?: { next_cursor?: string } }>('conversations.history', args, true);
        const found = (answer.messages ?? []).find(matches);
        if (found) return found;
        cursor = answer.response_metadata?.next_cursor ?? '';
        if (!cursor) return null;
      }
      return null;
    },
  };
}
export type SlackApi = ReturnType<typeof slackApi>;
