// The authorization server's keys, persisted in PostgreSQL so every replica signs and verifies with
// the same ones and a restart invalidates nothing: RS256 signing keys (JWKS) and the secrets that
// sign the provider's cookies. Private halves are sealed by the vault master key.
//
// Generated on first start (under an advisory lock, so concurrent starts agree). Rotation adds a
// new key of each use and retires the previous one: a retired signing key no longer signs but
// still verifies (it stays in the JWKS with key_ops ["verify"]) until pruned, a retired cookie key
// still verifies cookies. Running processes pick up a rotation when they restart; verification
// (verify.ts) reloads the public keys whenever it meets an unknown kid.
import { randomBytes, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { DatabasePool } from 'slonik';
import { VaultDecryptError } from '../../core/vault/envelope.ts';
import type { Logger } from '../logger.ts';
import { envelopeSchema } from '../vault/envelope-schema.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import * as store from './store.ts';

export const SIGNING_ALG = 'RS256';
/** Retired keys are dropped after this long: far beyond any access token (10 min) or cookie. */
export const KEY_RETENTION_SECONDS = 7 * 24 * 3600;

export interface OAuthKeys {
  /** Private JWKs for the provider: the signing one first, retired ones marked verify-only. */
  jwks: { keys: JWK[] };
  /** Cookie-signing secrets, the signing one first. */
  cookieKeys: string[];
}

export const keyAad = (id: string) => `oauth-key:${id}`;

async function newSigningKey(keyring: VaultKeyring) {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { modulusLength: 2048, extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk: JWK = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG, use: 'sig' };
  return {
    id: kid,
    use: 'sig' as const,
    publicJwk: { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' },
    envelope: keyring.encrypt(JSON.stringify(privateJwk), keyAad(kid)),
    privateJwk,
  };
}

function newCookieKey(keyring: VaultKeyring) {
  const id = `cookie-${randomUUID()}`;
  const secret = randomBytes(32).toString('base64url');
  return { id, use: 'cookie' as const, publicJwk: null, envelope: keyring.encrypt(secret, keyAad(id)), secret };
}

function open(keyring: VaultKeyring, row: store.KeyRow): string {
  return keyring.decrypt(envelopeSchema.parse(row.envelope), keyAad(row.id)).toString('utf8');
}

/**
 * Loads the keys, creating what is missing. A key the master key cannot open (the master key was
 * replaced without re-wrapping it) is retired and replaced, with a warning: tokens it signed stop
 * verifying, nothing else is lost.
 */
export async function loadOrCreateKeys(pool: DatabasePool, keyring: VaultKeyring, logger: Logger): Promise<OAuthKeys> {
  return pool.transaction(async (tx) => {
    await store.lockKeys(tx);
    const sigs: Array<{ jwk: JWK; live: boolean }> = [];
    const cookies: Array<{ secret: string; live: boolean }> = [];
    // Newest first, so the first live key of each use is the newest one.
    for (const row of await store.listKeys(tx)) {
      let material: string;
      try {
        material = open(keyring, row);
      } catch (err) {
        if (!(err instanceof VaultDecryptError)) throw err;
        logger.warn({ key_id: row.id, use: row.use, reason: err.reason }, 'an OAuth key cannot be opened with the master key; retiring it');
        if (!row.retired_at) await store.retireKey(tx, row.id);
        continue;
      }
      if (row.use === 'sig') sigs.push({ jwk: JSON.parse(material) as JWK, live: !row.retired_at });
      else cookies.push({ secret: material, live: !row.retired_at });
    }
    if (!sigs.some((s) => s.live)) {
      const key = await newSigningKey(keyring);
      await store.insertKey(tx, key);
      sigs.unshift({ jwk: key.privateJwk, live: true });
      logger.info({ kid: key.id }, 'generated an OAuth signing key');
    }
    if (!cookies.some((c) => c.live)) {
      const key = newCookieKey(keyring);
      await store.insertKey(tx, key);
      cookies.unshift({ secret: key.secret, live: true });
    }
    const signer = sigs.find((s) => s.live)!;
    const cookieSigner = cookies.find((c) => c.live)!;
    return {
      jwks: { keys: [signer.jwk, ...sigs.filter((s) => s !== signer).map((s) => ({ ...s.jwk, key_ops: ['verify'] }))] },
      cookieKeys: [cookieSigner.secret, ...cookies.filter((c) => c !== cookieSigner).map((c) => c.secret)],
    };
  });
}

/**
 * Rotates both key kinds: new ones sign from the next start on, the previous ones keep verifying
 * for KEY_RETENTION_SECONDS. Returns the new signing key id.
 */
export async function rotateOAuthKeys(pool: DatabasePool, keyring: VaultKeyring, retentionSeconds = KEY_RETENTION_SECONDS): Promise<{ kid: string }> {
  return pool.transaction(async (tx) => {
    await store.lockKeys(tx);
    const sig = await newSigningKey(keyring);
    const cookie = newCookieKey(keyring);
    await store.insertKey(tx, sig);
    await store.insertKey(tx, cookie);
    await store.retireKeys(tx, 'sig', sig.id);
    await store.retireKeys(tx, 'cookie', cookie.id);
    await store.pruneRetiredKeys(tx, retentionSeconds);
    return { kid: sig.id };
  });
}
