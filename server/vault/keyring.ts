// The process's view of the master key (KEK): encrypt with the current one, decrypt with any
// known one (during a rotation both are known). Plaintext never leaves the caller's scope.
//
// Data keys are kept briefly, because unwrapping or wrapping one costs as much as the sealing
// itself and every call seals its request and opens a secret: unwrapped data keys of envelopes
// opened in the last minute are kept (bounded), and call requests — short-lived envelopes of
// the gateway's own — share one data key for up to a minute (each with its own IV). Vault secret
// versions keep a fresh data key each. A kept data key is held as a KeyObject (the cipher's own
// form, see envelope.ts); the buffer it was unwrapped into is zeroed at once.
import { createSecretKey, type KeyObject } from 'node:crypto';
import {
  decryptSecret,
  encryptSecret,
  makeKek,
  makeKeyring,
  newDataKey,
  openWithDataKey,
  sealWithDataKey,
  unwrapDataKey,
  type DataKey,
  type Envelope,
  type Kek,
  type Keyring,
} from '../../core/vault/envelope.ts';

export interface VaultKeyring {
  current: Kek;
  keyring: Keyring;
  encrypt(plaintext: string | Buffer, aad: string): Envelope;
  /** For short-lived envelopes of the gateway's own (call requests): a data key shared for a minute. */
  encryptShortLived(plaintext: string | Buffer, aad: string): Envelope;
  decrypt(envelope: Envelope, aad: string): Buffer;
}

const DATA_KEY_TTL_MS = 60_000;
const SHARED_KEY_MAX_USES = 100_000;
const MAX_CACHED_KEYS = 256;

export function createVaultKeyring(masterKey: Buffer, previousKeys: readonly Buffer[] = []): VaultKeyring {
  const current = makeKek(masterKey);
  const keyring = makeKeyring([current, ...previousKeys.map(makeKek)]);
  let shared: { key: DataKey; at: number; uses: number } | undefined;
  const unwrapped = new Map<string, { key: KeyObject; at: number }>();

  function dataKeyOf(envelope: Envelope): KeyObject {
    const id = `${envelope.kekId}:${envelope.wrapIv}:${envelope.wrappedDataKey}`;
    const now = Date.now();
    const hit = unwrapped.get(id);
    if (hit && now - hit.at < DATA_KEY_TTL_MS) return hit.key;
    const raw = unwrapDataKey(envelope, keyring);
    const key = createSecretKey(raw);
    raw.fill(0);
    unwrapped.delete(id);
    unwrapped.set(id, { key, at: now });
    // Oldest first: drop the expired head and anything beyond the bound.
    for (const [k, v] of unwrapped) {
      if (unwrapped.size <= MAX_CACHED_KEYS && now - v.at < DATA_KEY_TTL_MS) break;
      unwrapped.delete(k);
    }
    return key;
  }

  return {
    current,
    keyring,
    encrypt: (plaintext, aad) => encryptSecret(plaintext, current, aad),
    encryptShortLived(plaintext, aad) {
      const now = Date.now();
      if (!shared || now - shared.at >= DATA_KEY_TTL_MS || shared.uses >= SHARED_KEY_MAX_USES) shared = { key: newDataKey(current), at: now, uses: 0 };
      shared.uses++;
      return sealWithDataKey(plaintext, shared.key, aad);
    },
    decrypt(envelope, aad) {
      // A data key of an unknown KEK or a malformed envelope fails exactly as before.
      if (!keyring.has(envelope.kekId)) return decryptSecret(envelope, keyring, aad);
      return openWithDataKey(envelope, dataKeyOf(envelope), aad);
    },
  };
}
