// Standard Webhooks signing (https://www.standardwebhooks.com): every delivery carries
// `webhook-id`, `webhook-timestamp` (unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256
// of "${id}.${timestamp}.${body}">`, keyed by the base64-decoded part of a `whsec_…` secret.
// Pure: no I/O, no clock unless the caller omits `now`.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;

export interface SignInput {
  id: string;
  /** Unix seconds. */
  timestamp: number;
  body: string;
}

export class WebhookSecretError extends Error {
  override name = 'WebhookSecretError';
}

/** `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/** The HMAC key of a secret: the base64 part after `whsec_` (the prefix is optional, as in the reference libraries). */
export function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw new WebhookSecretError('the webhook secret is not base64');
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
    throw new WebhookSecretError(`the webhook secret must decode to ${MIN_KEY_BYTES}-${MAX_KEY_BYTES} bytes`);
  }
  return key;
}

/** `v1,<base64 HMAC-SHA256>` of `${id}.${timestamp}.${body}`. */
export function sign(input: SignInput, secret: string): string {
  if (!Number.isSafeInteger(input.timestamp) || input.timestamp < 0) throw new RangeError('timestamp must be unix seconds');
  const mac = createHmac('sha256', secretKey(secret)).update(`${input.id}.${input.timestamp}.${input.body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of one delivery attempt. */
export function signatureHeaders(input: SignInput, secret: string): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return { 'webhook-id': input.id, 'webhook-timestamp': String(input.timestamp), 'webhook-signature': sign(input, secret) };
}

/** Fetch `Headers`, Node's `IncomingHttpHeaders`, or a plain record (names matched case-insensitively). */
export type HeaderSource = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export type VerifyFailure = 'missing_headers' | 'invalid_timestamp' | 'timestamp_too_old' | 'timestamp_too_new' | 'invalid_signature';
export type VerifyResult = { ok: true } | { ok: false; reason: VerifyFailure };

function header(headers: HeaderSource, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === name) return typeof v === 'string' || v === undefined ? v : v.join(' ');
  }
  return undefined;
}

/**
 * Checks a delivery: headers present, timestamp within `toleranceSeconds` of `now` (either way,
 * against replays), and at least one `v1,` signature of the space-separated list matching,
 * compared in constant time.
 */
export function verifyDetailed(headers: HeaderSource, body: string, secret: string, toleranceSeconds = 300, now = Date.now()): VerifyResult {
  const id = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !ts || !signatures) return { ok: false, reason: 'missing_headers' };
  if (!/^\d{1,15}$/.test(ts)) return { ok: false, reason: 'invalid_timestamp' };
  const timestamp = Number(ts);
  const nowSeconds = Math.floor(now / 1000);
  if (timestamp < nowSeconds - toleranceSeconds) return { ok: false, reason: 'timestamp_too_old' };
  if (timestamp > nowSeconds + toleranceSeconds) return { ok: false, reason: 'timestamp_too_new' };
  const expected = Buffer.from(sign({ id, timestamp, body }, secret).slice(3), 'base64');
  for (const candidate of signatures.split(' ')) {
    const comma = candidate.indexOf(',');
    if (comma < 0 || candidate.slice(0, comma) !== 'v1') continue;
    const given = Buffer.from(candidate.slice(comma + 1), 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true };
  }
  return { ok: false, reason: 'invalid_signature' };
}

export function verify(headers: HeaderSource, body: string, secret: string, toleranceSeconds = 300, now = Date.now()): boolean {
  return verifyDetailed(headers, body, secret, toleranceSeconds, now).ok;
}
