// Envelope encryption for vault secrets: each secret version gets a fresh random data key
// (DEK); the secret is sealed with AES-256-GCM under the DEK and AAD naming the row, and the
// DEK is sealed with AES-256-GCM under the master key (KEK). Rotating the KEK re-wraps DEKs only.

import { createCipheriv, createDecipheriv, createHash, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
// Binds a wrapped DEK to the KEK id it claims, so an envelope cannot point at another key.
const WRAP_CONTEXT = 'gateway-vault/dek/v1:';

export interface Kek {
  id: string;
  key: Buffer;
}

export type Keyring = ReadonlyMap<string, Buffer>;

/** Stored form of one secret version; every binary field is base64. */
export interface Envelope {
  ciphertext: string;
  iv: string;
  tag: string;
  wrappedDataKey: string;
  wrapIv: string;
  wrapTag: string;
  kekId: string;
}

export type VaultDecryptReason = 'unknown_kek' | 'unwrap_failed' | 'decrypt_failed' | 'malformed';

/** Any failure to open an envelope: tampering, wrong AAD, wrong or missing KEK. */
export class VaultDecryptError extends Error {
  override name = 'VaultDecryptError';
  readonly reason: VaultDecryptReason;
  constructor(reason: VaultDecryptReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

export class VaultKeyError extends Error {
  override name = 'VaultKeyError';
}

function assertKey(key: Buffer, what: string): void {
  if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES) {
    throw new VaultKeyError(`${what} must be ${KEY_BYTES} bytes`);
  }
}

/** Stable, non-secret id of a KEK: a domain-separated SHA-256 prefix (64 bits). */
export function deriveKekId(key: Buffer): string {
  assertKey(key, 'KEK');
  return createHash('sha256').update('gateway-vault/kek-id/v1').update(key).digest('hex').slice(0, 16);
}

export function makeKek(key: Buffer): Kek {
  return { id: deriveKekId(key), key };
}

export function makeKeyring(keks: readonly Kek[]): Keyring {
  return new Map(keks.map((k) => [k.id, k.key]));
}

/** AAD for a secret version; parts are URI-encoded so the join stays unambiguous. */
export function secretAad(orgId: string, secretId: string, version: number | string): string {
  return [orgId, secretId, String(version)].map(encodeURIComponent).join(':');
}

/**
 * A key as the ciphers take it. Keys used again and again (a shared or cached data key) are passed
 * as KeyObjects: given a Buffer, Node first probes it for a CryptoKey and a KeyObject by throwing
 * and catching a TypeError each time, whose stack capture costs more than the AES-GCM itself.
 */
type KeyMaterial = Buffer | KeyObject;

function seal(key: KeyMaterial, plaintext: Buffer, aad: Buffer): { iv: Buffer; data: Buffer; tag: Buffer } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  const data = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, data, tag: cipher.getAuthTag() };
}

/** Returns null on any authentication failure. */
function open(key: KeyMaterial, iv: Buffer, data: Buffer, tag: Buffer, aad: Buffer): Buffer | null {
  try {
    // authTagLength pins the tag size: GCM would otherwise accept truncated tags.
    const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(data), decipher.final()]);
  } catch {
    return null;
  }
}

function wrapAad(kekId: string): Buffer {
  return Buffer.from(WRAP_CONTEXT + kekId, 'utf8');
}

function wrap(dataKey: Buffer, kek: Kek): Pick<Envelope, 'wrappedDataKey' | 'wrapIv' | 'wrapTag' | 'kekId'> {
  assertKey(kek.key, 'KEK');
  const sealed = seal(kek.key, dataKey, wrapAad(kek.id));
  return {
    wrappedDataKey: sealed.data.toString('base64'),
    wrapIv: sealed.iv.toString('base64'),
    wrapTag: sealed.tag.toString('base64'),
    kekId: kek.id,
  };
}

function decodeField(envelope: Envelope, field: keyof Envelope, bytes?: number): Buffer {
  const value = envelope[field];
  const buf = typeof value === 'string' ? Buffer.from(value, 'base64') : Buffer.alloc(0);
  if (typeof value !== 'string' || (bytes !== undefined && buf.length !== bytes)) {
    throw new VaultDecryptError('malformed', `envelope field ${field} is malformed`);
  }
  return buf;
}

function unwrap(envelope: Envelope, keyring: Keyring): Buffer {
  const kek = keyring.get(envelope.kekId);
  if (kek === undefined) {
    throw new VaultDecryptError('unknown_kek', `no master key with id ${envelope.kekId}`);
  }
  const dataKey = open(
    kek,
    decodeField(envelope, 'wrapIv', IV_BYTES),
    decodeField(envelope, 'wrappedDataKey', KEY_BYTES),
    decodeField(envelope, 'wrapTag', TAG_BYTES),
    wrapAad(envelope.kekId),
  );
  if (dataKey === null) throw new VaultDecryptError('unwrap_failed', 'data key could not be unwrapped');
  return dataKey;
}

export function encryptSecret(plaintext: Buffer | string, kek: Kek, aad: string): Envelope {
  const dataKey = randomBytes(KEY_BYTES);
  try {
    const body = typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext;
    const sealed = seal(dataKey, body, Buffer.from(aad, 'utf8'));
    return {
      ciphertext: sealed.data.toString('base64'),
      iv: sealed.iv.toString('base64'),
      tag: sealed.tag.toString('base64'),
      ...wrap(dataKey, kek),
    };
  } finally {
    dataKey.fill(0);
  }
}

/** Returns the plaintext bytes; callers decode (and may zero) them. */
export function decryptSecret(envelope: Envelope, keyring: Keyring, aad: string): Buffer {
  const dataKey = unwrap(envelope, keyring);
  try {
    return openWithDataKey(envelope, dataKey, aad);
  } finally {
    dataKey.fill(0);
  }
}

/** A data key and its wrapped form, for sealing several short-lived envelopes (see the keyring). */
export interface DataKey {
  key: KeyObject;
  wrapped: Pick<Envelope, 'wrappedDataKey' | 'wrapIv' | 'wrapTag' | 'kekId'>;
}

export function newDataKey(kek: Kek): DataKey {
  const key = randomBytes(KEY_BYTES);
  try {
    return { key: createSecretKey(key), wrapped: wrap(key, kek) };
  } finally {
    key.fill(0);
  }
}

/** Seals under an existing data key: a fresh IV per envelope, the same wrapped key. */
export function sealWithDataKey(plaintext: Buffer | string, dataKey: DataKey, aad: string): Envelope {
  const body = typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext;
  const sealed = seal(dataKey.key, body, Buffer.from(aad, 'utf8'));
  return { ciphertext: sealed.data.toString('base64'), iv: sealed.iv.toString('base64'), tag: sealed.tag.toString('base64'), ...dataKey.wrapped };
}

/** The envelope's data key, unwrapped by the KEK it names. */
export function unwrapDataKey(envelope: Envelope, keyring: Keyring): Buffer {
  return unwrap(envelope, keyring);
}

/** Opens an envelope with its (already unwrapped) data key. */
export function openWithDataKey(envelope: Envelope, dataKey: KeyMaterial, aad: string): Buffer {
  const plaintext = open(
    dataKey,
    decodeField(envelope, 'iv', IV_BYTES),
    decodeField(envelope, 'ciphertext'),
    decodeField(envelope, 'tag', TAG_BYTES),
    Buffer.from(aad, 'utf8'),
  );
  if (plaintext === null) throw new VaultDecryptError('decrypt_failed', 'secret could not be decrypted');
  return plaintext;
}

/** Master-key rotation: re-wraps the data key under `newKek`; the ciphertext is untouched. */
export function rewrapDataKey(envelope: Envelope, oldKeyring: Keyring, newKek: Kek): Envelope {
  const dataKey = unwrap(envelope, oldKeyring);
  try {
    return { ...envelope, ...wrap(dataKey, newKek) };
  } finally {
    dataKey.fill(0);
  }
}
