// Master-key (KEK) rotation: every stored envelope gets its data key re-wrapped under the new
// KEK, in one transaction. Ciphertexts are untouched, so no AAD is needed and no plaintext is
// ever produced. Envelopes already wrapped by the new KEK are skipped, so a re-run is harmless.
//
// Writers are locked out for the duration (SHARE ROW EXCLUSIVE lets reads through) so that no
// envelope is sealed under the old key behind the rotation's back. A gateway process still
// running with the old key would seal new rows under it after the commit: stop the gateway
// processes first (embedded mode enforces this through the DATA_DIR lock).
import type { DatabasePool, DatabaseTransactionConnection } from 'slonik';
import { makeKek, rewrapDataKey, VaultDecryptError, type Envelope, type Kek, type Keyring } from '../../core/vault/envelope.ts';
import { envelopeSchema } from './envelope-schema.ts';
import type { VaultKeyring } from './keyring.ts';
import * as store from './rotation-store.ts';

// The CLI (`gateway vault rotate-master-key`) asks this before rotating; it reaches no store itself.
export { hasVaultTables } from './rotation-store.ts';

export interface RotationResult {
  /** Id of the new KEK, now wrapping every data key. */
  kekId: string;
  /** Secret versions re-wrapped. */
  secretVersions: number;
  /** Connection envelopes (tokens, PKCE verifiers) re-wrapped. */
  connectionEnvelopes: number;
  /** Webhook secrets and stored call requests re-wrapped. */
  otherEnvelopes: number;
  /** Envelopes already wrapped by the new KEK, left alone. */
  skipped: number;
}

/** An envelope the old keyring cannot open; names the row, never its content. */
export class VaultRotationError extends Error {
  override name = 'VaultRotationError';
}

function rewrap(raw: unknown, oldKeyring: Keyring, newKek: Kek, where: string): Envelope {
  const parsed = envelopeSchema.safeParse(raw);
  if (!parsed.success) throw new VaultRotationError(`${where}: not a vault envelope`);
  try {
    return rewrapDataKey(parsed.data, oldKeyring, newKek);
  } catch (err) {
    if (err instanceof VaultDecryptError) throw new VaultRotationError(`${where}: ${err.message}`);
    throw err;
  }
}

async function rotateSecretVersions(tx: DatabaseTransactionConnection, oldKeyring: Keyring, newKek: Kek) {
  const rows = await store.secretVersionsNotUnder(tx, newKek.id);
  for (const row of rows) {
    const envelope = rewrapIfNeeded(row.envelope, oldKeyring, newKek, `secret ${row.secret_id} version ${row.version}`);
    await store.setSecretVersionEnvelope(tx, { secretId: row.secret_id, version: row.version, envelope, kekId: newKek.id });
  }
  return rows.length;
}

/** An envelope already under the new KEK (only its kek_id column was stale) is kept as is. */
function rewrapIfNeeded(raw: unknown, oldKeyring: Keyring, newKek: Kek, where: string): Envelope {
  const parsed = envelopeSchema.safeParse(raw);
  if (parsed.success && parsed.data.kekId === newKek.id) return parsed.data;
  return rewrap(raw, oldKeyring, newKek, where);
}

async function rotateEnvelopeColumn(tx: DatabaseTransactionConnection, table: string, column: string, oldKeyring: Keyring, newKek: Kek) {
  const rows = await store.envelopesNotUnder(tx, table, column, newKek.id);
  for (const row of rows) {
    const envelope = rewrap(row.envelope, oldKeyring, newKek, `${table} ${row.id} ${column}`);
    await store.setEnvelope(tx, table, column, row.id, envelope);
  }
  return rows.length;
}

/**
 * Re-wraps every vault envelope (secret versions and connection tokens) under `newKey`, in one
 * transaction: either every envelope moves to the new KEK or none does. `oldKeyring` must know
 * every KEK currently in use; an envelope it cannot open aborts the whole rotation.
 */
export async function rotateMasterKey(
  pool: DatabasePool,
  oldKeyring: Pick<VaultKeyring, 'keyring'>,
  newKey: Buffer,
): Promise<RotationResult> {
  const newKek = makeKek(newKey);
  return pool.transaction(async (tx) => {
    await store.lockEnvelopeTables(tx);
    const skipped = await store.countEnvelopesUnder(tx, newKek.id);
    const secretVersions = await rotateSecretVersions(tx, oldKeyring.keyring, newKek);
    let connectionEnvelopes = 0;
    for (const column of store.CONNECTION_ENVELOPE_COLUMNS) {
      connectionEnvelopes += await rotateEnvelopeColumn(tx, 'connections', column, oldKeyring.keyring, newKek);
    }
    let otherEnvelopes = 0;
    for (const { table, column } of store.OTHER_ENVELOPE_COLUMNS) {
      otherEnvelopes += await rotateEnvelopeColumn(tx, table, column, oldKeyring.keyring, newKek);
    }
    return { kekId: newKek.id, secretVersions, connectionEnvelopes, otherEnvelopes, skipped };
  });
}
