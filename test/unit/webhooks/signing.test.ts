import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, sign, signatureHeaders, verify, verifyDetailed, WebhookSecretError } from '../../../core/webhooks/signing.ts';

// A fixed key (32 bytes 0x00..0x1f) so the vector below is reproducible by hand.
const KEY = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
const SECRET = `whsec_${KEY.toString('base64')}`;
const ID = 'evt_2f1c9a1e-7a0b-4a53-8d7e-0c1f1b1a2b3c';
const TS = 1_700_000_000;
const BODY = '{"id":"evt_2f1c9a1e-7a0b-4a53-8d7e-0c1f1b1a2b3c","type":"approval.raised","created_at":"2023-11-14T22:13:20.000Z","data":{"n":1}}';
const NOW = TS * 1000;

/** Computed independently of the module under test. */
const expectedSignature = `v1,${createHmac('sha256', KEY).update(`${ID}.${TS}.${BODY}`).digest('base64')}`;

describe('Standard Webhooks signing', () => {
  it('matches an independently computed HMAC-SHA256 vector', () => {
    expect(SECRET).toBe('whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=');
    expect(sign({ id: ID, timestamp: TS, body: BODY }, SECRET)).toBe(expectedSignature);
    // The reference libraries accept the secret without its prefix too.
    expect(sign({ id: ID, timestamp: TS, body: BODY }, KEY.toString('base64'))).toBe(expectedSignature);
  });

  it('matches the published Standard Webhooks test vector', () => {
    // From the standard-webhooks reference test suite.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const sig = sign({ id: 'msg_p5jXN8AQM9LWM0D4loKWxJek', timestamp: 1614265330, body: '{"test": 2432232314}' }, secret);
    expect(sig).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('verifies its own signatures, with any header casing or container', () => {
    const headers = signatureHeaders({ id: ID, timestamp: TS, body: BODY }, SECRET);
    expect(verify(headers, BODY, SECRET, 300, NOW)).toBe(true);
    expect(verify(new Headers(headers), BODY, SECRET, 300, NOW)).toBe(true);
    const upper = { 'Webhook-Id': ID, 'Webhook-Timestamp': String(TS), 'Webhook-Signature': headers['webhook-signature'] };
    expect(verify(upper, BODY, SECRET, 300, NOW)).toBe(true);
  });

  it('accepts any matching signature of a space-separated list (secret rotation)', () => {
    const other = generateWebhookSecret();
    const list = `${sign({ id: ID, timestamp: TS, body: BODY }, other)} v2,ignored ${expectedSignature}`;
    expect(verify({ 'webhook-id': ID, 'webhook-timestamp': String(TS), 'webhook-signature': list }, BODY, SECRET, 300, NOW)).toBe(true);
  });

  it('rejects a tampered body, id, timestamp, signature or the wrong secret', () => {
    const h = signatureHeaders({ id: ID, timestamp: TS, body: BODY }, SECRET);
    const fail = (headers: Record<string, string>, body = BODY, secret = SECRET) => verifyDetailed(headers, body, secret, 300, NOW);
    expect(fail(h, BODY.replace('"n":1', '"n":2'))).toEqual({ ok: false, reason: 'invalid_signature' });
    expect(fail({ ...h, 'webhook-id': `${ID}x` })).toEqual({ ok: false, reason: 'invalid_signature' });
    expect(fail({ ...h, 'webhook-timestamp': String(TS + 1) })).toEqual({ ok: false, reason: 'invalid_signature' });
    const sig = h['webhook-signature'];
    const flipped = `v1,${sig[3] === 'A' ? 'B' : 'A'}${sig.slice(4)}`;
    expect(fail({ ...h, 'webhook-signature': flipped })).toEqual({ ok: false, reason: 'invalid_signature' });
    expect(fail({ ...h, 'webhook-signature': `v2,${sig.slice(3)}` })).toEqual({ ok: false, reason: 'invalid_signature' });
    expect(fail({ ...h, 'webhook-signature': 'v1,' })).toEqual({ ok: false, reason: 'invalid_signature' });
    expect(fail(h, BODY, generateWebhookSecret())).toEqual({ ok: false, reason: 'invalid_signature' });
  });

  it('enforces the timestamp tolerance in both directions', () => {
    const at = (timestamp: number) => signatureHeaders({ id: ID, timestamp, body: BODY }, SECRET);
    expect(verifyDetailed(at(TS - 300), BODY, SECRET, 300, NOW)).toEqual({ ok: true });
    expect(verifyDetailed(at(TS + 300), BODY, SECRET, 300, NOW)).toEqual({ ok: true });
    expect(verifyDetailed(at(TS - 301), BODY, SECRET, 300, NOW)).toEqual({ ok: false, reason: 'timestamp_too_old' });
    expect(verifyDetailed(at(TS + 301), BODY, SECRET, 300, NOW)).toEqual({ ok: false, reason: 'timestamp_too_new' });
    expect(verifyDetailed(at(TS - 1000), BODY, SECRET, 3600, NOW)).toEqual({ ok: true });
    // Default clock: a signature made now verifies, one from ten minutes ago does not.
    const now = Math.floor(Date.now() / 1000);
    expect(verify(at(now), BODY, SECRET)).toBe(true);
    expect(verify(at(now - 600), BODY, SECRET)).toBe(false);
  });

  it('rejects missing or malformed headers', () => {
    const h = signatureHeaders({ id: ID, timestamp: TS, body: BODY }, SECRET);
    const { 'webhook-id': _id, ...noId } = h;
    expect(verifyDetailed(noId, BODY, SECRET, 300, NOW)).toEqual({ ok: false, reason: 'missing_headers' });
    expect(verifyDetailed({ ...h, 'webhook-timestamp': '17e8' }, BODY, SECRET, 300, NOW)).toEqual({ ok: false, reason: 'invalid_timestamp' });
    expect(verifyDetailed({ ...h, 'webhook-timestamp': '-5' }, BODY, SECRET, 300, NOW)).toEqual({ ok: false, reason: 'invalid_timestamp' });
  });

  it('generates whsec_ secrets of 32 random bytes', () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
  });

  it('refuses secrets that are not base64 or too short', () => {
    expect(() => sign({ id: ID, timestamp: TS, body: BODY }, 'whsec_not base64!')).toThrow(WebhookSecretError);
    expect(() => sign({ id: ID, timestamp: TS, body: BODY }, `whsec_${Buffer.alloc(8).toString('base64')}`)).toThrow(WebhookSecretError);
    expect(() => sign({ id: ID, timestamp: 1.5, body: BODY }, SECRET)).toThrow(RangeError);
  });
});
