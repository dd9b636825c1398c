// A real SMTP server on loopback (the `smtp-server` package) that captures every message it
// accepts, with AUTH PLAIN/LOGIN checked against one user. No TLS: the gateway's channel is set
// with starttls false for it.
import type { AddressInfo, Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface CapturedMail {
  from: string;
  to: string[];
  /** The whole message as received (headers and MIME parts). */
  raw: string;
  /** The text/plain part, quoted-printable decoded. */
  text: string;
}

export interface SmtpCapture {
  host: string;
  port: number;
  user: string;
  password: string;
  messages: CapturedMail[];
  /** Logins refused (a wrong password shows here). */
  refusedLogins: number;
  /**
   * The next this many messages are taken (captured) but never confirmed: the connection drops
   * before the server's `250`, as when a server crashes right after queueing a message.
   */
  loseAnswers: number;
  /** When set, only messages whose text contains this are lost (other tests' late notices go through). */
  loseAnswersOf?: string | undefined;
  close(): Promise<void>;
}

/** Decodes quoted-printable: soft line breaks and =XX escapes (UTF-8 bytes). */
function decodeQuotedPrintable(s: string): string {
  const joined = s.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    const m = /^=([0-9A-F]{2})/.exec(joined.slice(i, i + 3));
    if (m) {
      bytes.push(parseInt(m[1]!, 16));
      i += 2;
    } else bytes.push(...Buffer.from(joined[i]!, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** A message that is one text/plain part: its encoding (7bit when unnamed) and its body. */
function singlePart(raw: string): [string, string, string] | null {
  const split = raw.search(/\r?\n\r?\n/);
  if (split < 0) return null;
  const headers = raw.slice(0, split);
  if (!/^Content-Type: text\/plain/im.test(headers)) return null;
  const encoding = /^Content-Transfer-Encoding: ([\w-]+)/im.exec(headers)?.[1] ?? '7bit';
  return ['', encoding, raw.slice(split).replace(/^\r?\n\r?\n/, '').replace(/\r?\n\.?\r?\n?$/, '')];
}

function textPart(raw: string): string {
  const m =
    /Content-Type: text\/plain[^\r\n]*\r?\n(?:[^\r\n]+\r?\n)*?Content-Transfer-Encoding: ([\w-]+)\r?\n\r?\n([\s\S]*?)\r?\n--/i.exec(raw) ?? singlePart(raw);
  if (!m) return '';
  const [, encoding, body] = m;
  if (encoding!.toLowerCase() === 'quoted-printable') return decodeQuotedPrintable(body!);
  if (encoding!.toLowerCase() === 'base64') return Buffer.from(body!.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body!;
}

export async function startSmtpCapture(): Promise<SmtpCapture> {
  const user = 'gateway';
  const password = `smtp-pass-${Math.random().toString(36).slice(2)}`;
  const capture: SmtpCapture = { host: '127.0.0.1', port: 0, user, password, messages: [], refusedLogins: 0, loseAnswers: 0, close: async () => undefined };
  // The client's sockets by their port: how a message's answer is lost.
  const sockets = new Map<number, Socket>();
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth, _session, cb) {
      if (auth.username === user && auth.password === password) return cb(null, { user });
      capture.refusedLogins++;
      cb(new Error('invalid credentials'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const text = textPart(raw);
        capture.messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          text,
        });
        if (capture.loseAnswers > 0 && (capture.loseAnswersOf === undefined || text.includes(capture.loseAnswersOf))) {
          capture.loseAnswers--;
          sockets.get(session.remotePort)?.destroy();
          return;
        }
        cb();
      });
    },
  });
  server.server.on('connection', (socket: Socket) => {
    const port = socket.remotePort!;
    sockets.set(port, socket);
    socket.once('close', () => sockets.delete(port));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  capture.port = (server.server.address() as AddressInfo).port;
  capture.close = () => new Promise((r) => server.close(() => r()));
  return capture;
}
