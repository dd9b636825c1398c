import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  VaultDecryptError,
  VaultKeyError,
  decryptSecret,
  deriveKekId,
  encryptSecret,
  makeKek,
  makeKeyring,
  rewrapDataKey,
  secretAad,
} from '../../../core/vault/envelope.ts';
import type { Envelope } from '../../../core/vault/envelope.ts';

const kek1 = makeKek(randomBytes(32));
const kek2 = makeKek(randomBytes(32));
const ring1 = makeKeyring([kek1]);
const aad = secretAad('org-1', 'sec-1', 1);
const SECRET = 'sk_live_super_secret_value_0123456789';

function flip(b64: string, index = 0): string {
  const buf = Buffer.from(b64, 'base64');
  buf[index % buf.length]! ^= 0x01;
  return buf.toString('base64');
}

function expectDecryptError(fn: () => unknown, reason: VaultDecryptError['reason']): void {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(VaultDecryptError);
    expect((err as VaultDecryptError).reason).toBe(reason);
    return;
  }
  throw new Error('expected VaultDecryptError');
}

describe('envelope encryption', () => {
  it('roundtrips strings and binary', () => {
    const env = encryptSecret(SECRET, kek1, aad);
    expect(decryptSecret(env, ring1, aad).toString('utf8')).toBe(SECRET);
    const bin = randomBytes(1000);
    expect(decryptSecret(encryptSecret(bin, kek1, aad), ring1, aad).equals(bin)).toBe(true);
    expect(decryptSecret(encryptSecret('', kek1, aad), ring1, aad).length).toBe(0);
  });

  it('uses a fresh data key and IV per encryption', () => {
    const a = encryptSecret(SECRET, kek1, aad);
    const b = encryptSecret(SECRET, kek1, aad);
    expect(a.ciphertext).not.toBe(b.ciphertext);
    expect(a.wrappedDataKey).not.toBe(b.wrappedDataKey);
    expect(a.iv).not.toBe(b.iv);
    expect(a.kekId).toBe(kek1.id);
  });

  it('ciphertext and envelope do not contain the plaintext', () => {
    const env = encryptSecret(SECRET, kek1, aad);
    const raw = Buffer.from(env.ciphertext, 'base64');
    expect(raw.includes(Buffer.from(SECRET))).toBe(false);
    expect(JSON.stringify(env)).not.toContain(SECRET);
    expect(JSON.stringify(env)).not.toContain(Buffer.from(SECRET).toString('base64'));
  });

  it('fails with a different AAD (row swap)', () => {
    const env = encryptSecret(SECRET, kek1, aad);
    expectDecryptError(() => decryptSecret(env, ring1, secretAad('org-1', 'sec-1', 2)), 'decrypt_failed');
    expectDecryptError(() => decryptSecret(env, ring1, secretAad('org-2', 'sec-1', 1)), 'decrypt_failed');
  });

  it.each(['ciphertext', 'iv', 'tag'] as const)('fails when %s is tampered', (field) => {
    const env = encryptSecret(SECRET, kek1, aad);
    expectDecryptError(() => decryptSecret({ ...env, [field]: flip(env[field], 3) }, ring1, aad), 'decrypt_failed');
  });

  it.each(['wrappedDataKey', 'wrapIv', 'wrapTag'] as const)('fails when %s is tampered', (field) => {
    const env = encryptSecret(SECRET, kek1, aad);
    expectDecryptError(() => decryptSecret({ ...env, [field]: flip(env[field], 5) }, ring1, aad), 'unwrap_failed');
  });

  it('rejects a truncated tag instead of accepting a short GCM tag', () => {
    const env = encryptSecret(SECRET, kek1, aad);
    const short = Buffer.from(env.tag, 'base64').subarray(0, 4).toString('base64');
    expectDecryptError(() => decryptSecret({ ...env, tag: short }, ring1, aad), 'malformed');
  });

  it('fails when the wrapped data key is swapped with another row', () => {
    const a = encryptSecret(SECRET, kek1, aad);
    const b = encryptSecret('other', kek1, aad);
    const swapped: Envelope = { ...a, wrappedDataKey: b.wrappedDataKey, wrapIv: b.wrapIv, wrapTag: b.wrapTag };
    expectDecryptError(() => decryptSecret(swapped, ring1, aad), 'decrypt_failed');
  });

  it('fails for an unknown or relabelled KEK', () => {
    const env = encryptSecret(SECRET, kek1, aad);
    expectDecryptError(() => decryptSecret(env, makeKeyring([kek2]), aad), 'unknown_kek');
    const relabelled = new Map([[kek1.id, kek2.key]]);
    expectDecryptError(() => decryptSecret(env, relabelled, aad), 'unwrap_failed');
    // Claiming another kek id breaks the wrap AAD even when that key is the right one.
    const both = new Map([
      [kek1.id, kek1.key],
      ['alias', kek1.key],
    ]);
    expectDecryptError(() => decryptSecret({ ...env, kekId: 'alias' }, both, aad), 'unwrap_failed');
  });

  it('rewrap moves the data key to the new KEK and leaves the ciphertext alone', () => {
    const env = encryptSecret(SECRET, kek1, aad);
    const rewrapped = rewrapDataKey(env, ring1, kek2);
    expect(rewrapped.kekId).toBe(kek2.id);
    expect(rewrapped.ciphertext).toBe(env.ciphertext);
    expect(rewrapped.iv).toBe(env.iv);
    expect(rewrapped.tag).toBe(env.tag);
    expect(rewrapped.wrappedDataKey).not.toBe(env.wrappedDataKey);
    // The old KEK is no longer needed.
    expect(decryptSecret(rewrapped, makeKeyring([kek2]), aad).toString()).toBe(SECRET);
    expectDecryptError(() => decryptSecret(rewrapped, ring1, aad), 'unknown_kek');
  });

  it('rewrap fails with the wrong old keyring', () => {
    const env = encryptSecret(SECRET, kek1, aad);
    expectDecryptError(() => rewrapDataKey(env, makeKeyring([kek2]), kek2), 'unknown_kek');
  });

  it('derives stable, distinct KEK ids and rejects bad key sizes', () => {
    expect(deriveKekId(kek1.key)).toBe(kek1.id);
    expect(deriveKekId(Buffer.from(kek1.key))).toBe(kek1.id);
    expect(kek1.id).not.toBe(kek2.id);
    expect(kek1.id).toMatch(/^[0-9a-f]{16}$/);
    expect(() => makeKek(randomBytes(16))).toThrow(VaultKeyError);
    expect(() => encryptSecret(SECRET, { id: 'x', key: randomBytes(31) }, aad)).toThrow(VaultKeyError);
  });

  it('builds unambiguous AADs', () => {
    expect(secretAad('o', 's', 3)).toBe('o:s:3');
    expect(secretAad('a:b', 'c', 1)).not.toBe(secretAad('a', 'b:c', 1));
  });
});
