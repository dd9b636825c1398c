// One SMTP connection per message, as an email channel's settings say (STARTTLS required when
// asked, implicit TLS on 465, plain otherwise), with bounded waits: a slow server fails the attempt
// and the caller's retry policy decides what comes next.
import nodemailer from 'nodemailer';
import type { readEmailConfig } from './channel-config.ts';

export function smtpTransport(cfg: ReturnType<typeof readEmailConfig>, password: string | null | undefined) {
  return nodemailer.createTransport({
    host: cfg.host,
    port: cfg.port,
    secure: cfg.port === 465,
    requireTLS: cfg.starttls,
    ignoreTLS: !cfg.starttls && cfg.port !== 465,
    ...(cfg.user ? { auth: { user: cfg.user, pass: password ?? '' } } : {}),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 15_000,
  });
}
