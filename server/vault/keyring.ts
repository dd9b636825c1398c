// The process's view of the master key (KEK): encrypt with the current one, decrypt with any
// known one (during a rotation both are known). Plaintext never leaves the caller's scope.
import { decryptSecret, encryptSecret, makeKek, makeKeyring, type Envelope, type Kek, type Keyring } from '../../core/vault/envelope.ts';

export interface VaultKeyring {
  current: Kek;
  keyring: Keyring;
  encrypt(plaintext: string | Buffer, aad: string): Envelope;
  decrypt(envelope: Envelope, aad: string): Buffer;
}

export function createVaultKeyring(masterKey: Buffer, previousKeys: readonly Buffer[] = []): VaultKeyring {
  const current = makeKek(masterKey);
  const keyring = makeKeyring([current, ...previousKeys.map(makeKek)]);
  return {
    current,
    keyring,
    encrypt: (plaintext, aad) => encryptSecret(plaintext, current, aad),
    decrypt: (envelope, aad) => decryptSecret(envelope, keyring, aad),
  };
}
