// The two kinds of notification channel: what each stores in the clear (config) and sealed
// (secrets, AAD notification-channel:<id>). One schema each, used by the API to validate input
// (unknown fields refused) and by the deliveries to read what is stored.
import { z } from 'zod';

export const channelSecretAad = (channelId: string) => `notification-channel:${channelId}`;

/** A Slack channel id (C…, G…) or name (#approvals). */
const slackChannel = z.string().regex(/^(#[a-z0-9._-]{1,80}|[CGD][A-Z0-9]{2,30})$/, 'must be a Slack channel id (C0123ABC) or #name');

export const slackConfigInput = z.strictObject({
  channel: slackChannel.optional(),
  dm_resolver: z.boolean().default(true),
  bot_token: z.string().regex(/^xoxb-[A-Za-z0-9-]{10,250}$/, 'must be a Slack bot token (xoxb-…)'),
  signing_secret: z.string().regex(/^[0-9a-f]{32,64}$/, "must be the app's signing secret (hex)"),
});

export const emailConfigInput = z.strictObject({
  host: z.string().trim().min(1).max(253).regex(/^[A-Za-z0-9.-]+$/, 'must be a host name or IPv4 address'),
  port: z.number().int().min(1).max(65535),
  starttls: z.boolean(),
  user: z.string().max(200).optional(),
  password: z.string().min(1).max(500).optional(),
  from: z.email({ error: 'must be an email address' }),
});

export type SlackSecrets = { bot_token: string; signing_secret: string };
export type EmailSecrets = { password: string | null };

const slackStored = z.object({ channel: z.string().optional(), dm_resolver: z.boolean() });
const emailStored = z.object({ host: z.string(), port: z.number(), starttls: z.boolean(), user: z.string().optional(), from: z.string() });

export const readSlackConfig = (config: unknown) => slackStored.parse(config);
export const readEmailConfig = (config: unknown) => emailStored.parse(config);

/** Splits validated input into what is stored in the clear and what is sealed. */
export function splitSlack(input: z.output<typeof slackConfigInput>) {
  const { bot_token, signing_secret, ...config } = input;
  return { config, secrets: { bot_token, signing_secret } satisfies SlackSecrets };
}

export function splitEmail(input: z.output<typeof emailConfigInput>) {
  const { password, ...config } = input;
  if (config.user && !password) return { error: 'password is required with user' } as const;
  return { config, secrets: { password: password ?? null } satisfies EmailSecrets };
}
