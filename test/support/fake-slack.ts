// A loopback fake of the Slack Web API: a real HTTP server answering `chat.postMessage` (with
// message `metadata`), `chat.update`, `conversations.history` (metadata only with
// `include_all_metadata`), `conversations.open`, `conversations.list` (the channels posted to by
// #name, each given an id as Slack has one), `users.lookupByEmail`, `users.info` and
// `views.open` as Slack does (`{ok, …}`, bearer bot token, JSON or form arguments), plus the
// `response_url` Slack hands an interaction.
// `interact` sends interaction payloads the way Slack does: form-encoded `payload=<json>`, signed
// with the app's signing secret (X-Slack-Signature: v0=HMAC-SHA256 of "v0:<ts>:<body>").
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlackMessage {
  channel: string;
  ts: string;
  text: string;
  blocks: any[];
  /** What chat.postMessage carried as `metadata` ({event_type, event_payload}). */
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
  updates: { text: string; blocks: any[] }[];
}

export interface FakeSlack {
  /** The Web API base URL (GATEWAY_SLACK_API_URL). */
  apiUrl: string;
  botToken: string;
  signingSecret: string;
  messages: SlackMessage[];
  views: { trigger_id: string; view: any }[];
  /** What the gateway posted to response_url (ephemeral answers). */
  responses: any[];
  /** Every Web API call, method names in order. */
  calls: string[];
  /** Slack down: every Web API method answers HTTP 500. */
  failing: boolean;
  /**
   * The next this many chat.postMessage calls are carried out (the message is posted) but their
   * answer is lost: the connection drops before the gateway hears `ok`.
   */
  losePostAnswers: number;
  addUser(email: string): string;
  /** Sends a signed interaction; `timestamp` and `signature` override what Slack would send. */
  interact(gatewayUrl: string, payload: unknown, o?: { timestamp?: number; signature?: string }): Promise<{ status: number; body: any; raw: { body: string; headers: Record<string, string> } }>;
  /** A button press on a message, as Slack's block_actions payload (`responseUrl`: another response_url than Slack's). */
  press(gatewayUrl: string, o: { userId: string; message: SlackMessage; actionId: 'allow_once' | 'deny' | 'open'; responseUrl?: string }): Promise<{ status: number; body: any; raw: { body: string; headers: Record<string, string> } }>;
  /** The Deny modal submitted with a reason, as Slack's view_submission payload. */
  submitDeny(gatewayUrl: string, o: { userId: string; view: any; reason: string }): ReturnType<FakeSlack['interact']>;
  close(): Promise<void>;
}

export async function startFakeSlack(): Promise<FakeSlack> {
  const botToken = `xoxb-${randomBytes(12).toString('hex')}`;
  const signingSecret = randomBytes(16).toString('hex');
  const users = new Map<string, { id: string; email: string }>();
  const messages: SlackMessage[] = [];
  const views: FakeSlack['views'] = [];
  const responses: any[] = [];
  const calls: string[] = [];
  /** Channels posted to by #name, and the id Slack knows each by. */
  const channelIds = new Map<string, string>();
  let tsCounter = 0;
  let base = '';

  const api = (method: string, args: Record<string, any>): Record<string, unknown> => {
    switch (method) {
      case 'users.lookupByEmail': {
        const u = [...users.values()].find((x) => x.email.toLowerCase() === String(args.email).toLowerCase());
        return u ? { ok: true, user: { id: u.id, profile: { email: u.email } } } : { ok: false, error: 'users_not_found' };
      }
      case 'users.info': {
        const u = users.get(String(args.user));
        return u ? { ok: true, user: { id: u.id, profile: { email: u.email } } } : { ok: false, error: 'user_not_found' };
      }
      case 'chat.postMessage': {
        if (!args.channel) return { ok: false, error: 'channel_not_found' };
        // A DM to a user id opens (or reuses) the IM channel, as Slack answers it; a #name is answered with its id.
        const named = String(args.channel).startsWith('#') ? String(args.channel).slice(1) : null;
        if (named && !channelIds.has(named)) channelIds.set(named, `C${randomBytes(5).toString('hex').toUpperCase()}`);
        const channel = named ? channelIds.get(named)! : String(args.channel).startsWith('U') ? `D${String(args.channel).slice(1)}` : String(args.channel);
        const ts = `${Math.floor(Date.now() / 1000)}.${String(++tsCounter).padStart(6, '0')}`;
        const metadata = args.metadata && typeof args.metadata === 'object' ? args.metadata : undefined;
        messages.push({ channel, ts, text: String(args.text ?? ''), blocks: args.blocks ?? [], ...(metadata ? { metadata } : {}), updates: [] });
        return { ok: true, channel, ts };
      }
      case 'conversations.open': {
        const user = String(args.users ?? '');
        return users.has(user) ? { ok: true, channel: { id: `D${user.slice(1)}` } } : { ok: false, error: 'user_not_found' };
      }
      case 'conversations.list':
        return { ok: true, channels: [...channelIds].map(([name, id]) => ({ id, name, is_archived: false })), response_metadata: { next_cursor: '' } };
      case 'conversations.history': {
        // Newest first, from `oldest` on, `limit` a page; metadata only when asked for, as Slack does.
        const oldest = Number(args.oldest ?? 0);
        const limit = Math.min(Number(args.limit ?? 100), 999);
        const from = Number(args.cursor ?? 0);
        const all = messages.filter((m) => m.channel === args.channel && Number(m.ts) >= oldest).reverse();
        const withMetadata = String(args.include_all_metadata) === 'true';
        const page = all.slice(from, from + limit).map((m) => {
          const latest = m.updates.at(-1) ?? m;
          return { type: 'message', ts: m.ts, text: latest.text, blocks: latest.blocks, ...(withMetadata && m.metadata ? { metadata: m.metadata } : {}) };
        });
        const more = from + limit < all.length;
        return { ok: true, messages: page, has_more: more, response_metadata: { next_cursor: more ? String(from + limit) : '' } };
      }
      case 'chat.update': {
        const m = messages.find((x) => x.channel === args.channel && x.ts === args.ts);
        if (!m) return { ok: false, error: 'message_not_found' };
        m.updates.push({ text: String(args.text ?? ''), blocks: args.blocks ?? [] });
        return { ok: true, channel: m.channel, ts: m.ts };
      }
      case 'views.open':
        views.push({ trigger_id: String(args.trigger_id), view: args.view });
        return { ok: true, view: { id: `V${views.length}` } };
      default:
        return { ok: false, error: 'unknown_method' };
    }
  };

  const fake: FakeSlack = {
    apiUrl: '',
    botToken,
    signingSecret,
    messages,
    views,
    responses,
    calls,
    failing: false,
    losePostAnswers: 0,
    addUser(email) {
      const id = `U${randomBytes(5).toString('hex').toUpperCase()}`;
      users.set(id, { id, email });
      return id;
    },
    async interact(gatewayUrl, payload, o = {}) {
      const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
      const timestamp = String(o.timestamp ?? Math.floor(Date.now() / 1000));
      const signature = o.signature ?? `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
      const headers = { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature };
      return sendSigned(gatewayUrl, body, headers);
    },
    press(gatewayUrl, o) {
      const approvalId = o.message.blocks.find((b) => b.type === 'actions')?.elements.find((e: any) => e.action_id === o.actionId)?.value;
      return fake.interact(gatewayUrl, {
        type: 'block_actions',
        user: { id: o.userId, username: 'someone', name: 'someone', team_id: 'T0FAKE' },
        api_app_id: 'A0FAKE',
        token: 'deprecated-verification-token',
        container: { type: 'message', message_ts: o.message.ts, channel_id: o.message.channel, is_ephemeral: false },
        trigger_id: `${Date.now()}.${randomBytes(4).toString('hex')}`,
        team: { id: 'T0FAKE', domain: 'fake' },
        channel: { id: o.message.channel, name: 'approvals' },
        message: { type: 'message', ts: o.message.ts, text: o.message.text, blocks: o.message.blocks },
        response_url: o.responseUrl ?? `${base}/response/${responses.length + 1}`,
        actions: [{ action_id: o.actionId, block_id: `approval:${approvalId}`, type: 'button', value: approvalId, action_ts: `${Date.now() / 1000}` }],
      });
    },
    submitDeny(gatewayUrl, o) {
      return fake.interact(gatewayUrl, {
        type: 'view_submission',
        team: { id: 'T0FAKE', domain: 'fake' },
        user: { id: o.userId, username: 'someone', name: 'someone', team_id: 'T0FAKE' },
        api_app_id: 'A0FAKE',
        trigger_id: `${Date.now()}.${randomBytes(4).toString('hex')}`,
        view: {
          ...o.view,
          id: 'V0FAKE',
          state: { values: { reason: { reason: { type: 'plain_text_input', value: o.reason } } } },
        },
      });
    },
    close: () => new Promise((r) => server.close(() => r())),
  };

  async function sendSigned(gatewayUrl: string, body: string, headers: Record<string, string>) {
    const res = await fetch(`${gatewayUrl}/v1/integrations/slack/interactions`, { method: 'POST', headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed, raw: { body, headers } };
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = req.url ?? '';
      if (url.startsWith('/response/')) {
        responses.push(JSON.parse(raw));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        return;
      }
      const method = url.replace(/^\/api\//, '').split('?')[0]!;
      calls.push(method);
      if (fake.failing) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error');
        return;
      }
      const answer = (o: unknown) => res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(o));
      if (req.headers.authorization !== `Bearer ${botToken}`) return answer({ ok: false, error: 'invalid_auth' });
      const type = req.headers['content-type'] ?? '';
      const args = type.startsWith('application/json') ? JSON.parse(raw || '{}') : Object.fromEntries(new URLSearchParams(raw));
      const result = api(method, args);
      if (method === 'chat.postMessage' && result.ok && fake.losePostAnswers > 0) {
        fake.losePostAnswers--;
        req.socket.destroy();
        return;
      }
      answer(result);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.apiUrl = `${base}/api`;
  return fake;
}
