// The gateway's side of message proofs (core/decisions/proof.ts): it signs every update and signal
// it sends a call's workflow, once it has decided the sender may (the approvals and calls services
// check authority first). The key pair is made once per installation and kept in PostgreSQL, its
// private half sealed by the master key, so every replica signs with the same key and a master-key
// rotation re-wraps it instead of changing it (a call raised before a rotation stays decidable).
import { createPrivateKey, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { proofMessage, type ProofKind, type Proven } from '../../core/decisions/proof.ts';
import { envelopeSchema } from '../vault/envelope-schema.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import { insertSigningKey, readSigningKey } from './message-keys-store.ts';

export interface MessageSigner {
  /** The public keys (hex) a new call's workflow accepts messages from. */
  publicKeys(): Promise<string[]>;
  /** The message with a fresh single-use proof for that workflow. */
  sign<T extends object>(kind: ProofKind, workflowId: string, fields: T): Promise<Proven<T>>;
}

const KEY_ID = 'messages-v1';
const aad = (id: string) => `message-signing-key:${id}`;

interface LoadedKey {
  publicKey: string;
  privateKey: KeyObject;
}

function newKeyPair(keyring: VaultKeyring) {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const der = privateKey.export({ format: 'der', type: 'pkcs8' });
  return { publicKey: raw.toString('hex'), envelope: keyring.encrypt(der, aad(KEY_ID)) };
}

export function createMessageSigner(deps: { pool: DatabasePool; keyring: VaultKeyring }): MessageSigner {
  let loading: Promise<LoadedKey> | undefined;

  async function load(): Promise<LoadedKey> {
    let row = await readSigningKey(deps.pool, KEY_ID);
    if (!row) {
      const made = newKeyPair(deps.keyring);
      await insertSigningKey(deps.pool, { id: KEY_ID, ...made });
      row = await readSigningKey(deps.pool, KEY_ID);
      if (!row) throw new Error('the message-signing key was neither inserted nor found');
    }
    const der = deps.keyring.decrypt(envelopeSchema.parse(row.envelope), aad(KEY_ID));
    return { publicKey: row.public_key, privateKey: createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }) };
  }

  /** Loaded once per process; a failed load (PostgreSQL down) is tried again by the next caller. */
  function key(): Promise<LoadedKey> {
    loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
    return loading;
  }

  return {
    async publicKeys() {
      return [(await key()).publicKey];
    },
    async sign(kind, workflowId, fields) {
      const { privateKey } = await key();
      const nonce = randomUUID();
      const signature = sign(null, proofMessage(kind, workflowId, nonce, fields), privateKey).toString('hex');
      return { ...fields, proof: { nonce, signature } };
    },
  };
}
