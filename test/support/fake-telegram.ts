// A loopback fake of Telegram's Bot API: a real HTTP server that, as Telegram does, reads the bot
// token from the path (`/bot<token>/<method>`), answers `{ok: false, error_code: 401}` for any
// other token and `{ok: true, result}` for the methods the catalog ships. It never echoes the token.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TelegramCall {
  method: string;
  /** The path as it arrived, token included (only the fake sees it). */
  rawPath: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  authorized: boolean;
}

export interface FakeTelegram {
  url: string;
  calls: TelegramCall[];
  close(): Promise<void>;
}

export async function startFakeTelegram(token: string): Promise<FakeTelegram> {
  const calls: TelegramCall[] = [];
  let nextMessageId = 1;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawPath = (req.url ?? '').split('?')[0]!;
      const match = /^\/bot([^/]*)\/([A-Za-z]+)$/.exec(rawPath);
      const text = Buffer.concat(chunks).toString('utf8');
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      const authorized = match !== null && decodeURIComponent(match[1]!) === token;
      calls.push({ method: match?.[2] ?? '', rawPath, headers: req.headers, body, authorized });
      const answer = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (!match) return answer(404, { ok: false, error_code: 404, description: 'Not Found' });
      if (!authorized) return answer(401, { ok: false, error_code: 401, description: 'Unauthorized' });
      switch (match[2]) {
        case 'getMe':
          return answer(200, { ok: true, result: { id: 1, is_bot: true, first_name: 'Gateway test bot', username: 'gateway_test_bot' } });
        case 'sendMessage':
          return answer(200, { ok: true, result: { message_id: nextMessageId++, chat: { id: body.chat_id }, text: body.text } });
        case 'deleteMessage':
          return answer(200, { ok: true, result: true });
        default:
          return answer(404, { ok: false, error_code: 404, description: 'Not Found: method not found' });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
