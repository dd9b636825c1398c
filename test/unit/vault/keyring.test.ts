import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decryptSecret, makeKek, makeKeyring, VaultDecryptError } from '../../../core/vault/envelope.ts';
import { createVaultKeyring } from '../../../server/vault/keyring.ts';

describe('vault keyring: short-lived data keys', () => {
  const master = randomBytes(32);
  const ring = createVaultKeyring(master);

  it('shares one wrapped data key between call requests, each with its own IV, all opening normally', () => {
    const a = ring.encryptShortLived('{"kind":"action","params":{"id":"1"}}', 'call:a:request');
    const b = ring.encryptShortLived('{"kind":"action","params":{"id":"2"}}', 'call:b:request');
    expect(a.wrappedDataKey).toBe(b.wrappedDataKey);
    expect(a.iv).not.toBe(b.iv);
    expect(ring.decrypt(a, 'call:a:request').toString()).toContain('"id":"1"');
    // Also without the process's cache: the envelope stands on its own.
    expect(decryptSecret(b, makeKeyring([makeKek(master)]), 'call:b:request').toString()).toContain('"id":"2"');
  });

  it('still refuses a wrong AAD or a tampered ciphertext when the data key is cached', () => {
    const e = ring.encrypt('sk_live_value', 'org:sec:1');
    expect(ring.decrypt(e, 'org:sec:1').toString()).toBe('sk_live_value');
    expect(() => ring.decrypt(e, 'org:sec:2')).toThrow(VaultDecryptError);
    const tampered = { ...e, ciphertext: Buffer.from('x'.repeat(13)).toString('base64') };
    expect(() => ring.decrypt(tampered, 'org:sec:1')).toThrow(VaultDecryptError);
  });

  it('keeps vault secrets on a fresh data key each and fails typed on an unknown master key', () => {
    const a = ring.encrypt('one', 'x');
    const b = ring.encrypt('two', 'x');
    expect(a.wrappedDataKey).not.toBe(b.wrappedDataKey);
    const other = createVaultKeyring(randomBytes(32));
    expect(() => other.decrypt(a, 'x')).toThrow(expect.objectContaining({ reason: 'unknown_kek' }));
  });
});
