// Master-key (KEK) rotation: every stored envelope gets its data key re-wrapped under the new
// KEK, in one transaction. Ciphertexts are untouched, so no AAD is needed and no plaintext is
// ever produced. Envelopes already wrapped by the new KEK are skipped, so a re-run is harmless.
//
// Writers are locked out for the duration (SHARE ROW EXCLUSIVE lets reads through) so that no
// envelope is sealed under the old key behind the rotation's back. A gateway process still
// running with the old key would seal new rows under it after the commit: stop the gateway
// processes first (embedded mode enforces this through the DATA_DIR lock).
import { sql, type DatabasePool, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { makeKek, rewrapDataKey, VaultDecryptError, type Envelope, type Kek, type Keyring } from '../../core/vault/envelope.ts';
import type { VaultKeyring } from './keyring.ts';
import { envelopeSchema } from './store.ts';

/** The envelope columns of `connections` (OAuth tokens and the pending PKCE verifier). */
export const CONNECTION_ENVELOPE_COLUMNS = ['access_token', 'refresh_token', 'pkce_verifier'] as const;

/** Every other envelope column: webhook signing secrets and the encrypted request of each call. */
export const OTHER_ENVELOPE_COLUMNS = [
  { table: 'webhooks', column: 'secret_envelope' },
  { table: 'calls', column: 'request_envelope' },
  { table: 'oauth_keys', column: 'envelope' },
] as const;

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
  const rows = await tx.any(sql.type(z.object({ secret_id: z.string(), version: z.number(), envelope: z.unknown() }))`
    SELECT secret_id, version, envelope FROM secret_versions
    WHERE envelope->>'kekId' IS DISTINCT FROM ${newKek.id} OR kek_id <> ${newKek.id}
    ORDER BY secret_id, version`);
  for (const row of rows) {
    const envelope = rewrapIfNeeded(row.envelope, oldKeyring, newKek, `secret ${row.secret_id} version ${row.version}`);
    await tx.query(sql.unsafe`
      UPDATE secret_versions SET envelope = ${sql.jsonb({ ...envelope })}, kek_id = ${newKek.id}
      WHERE secret_id = ${row.secret_id} AND version = ${row.version}`);
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
  const col = sql.identifier([column]);
  const tbl = sql.identifier([table]);
  const rows = await tx.any(sql.type(z.object({ id: z.string(), envelope: z.unknown() }))`
    SELECT id, ${col} AS envelope FROM ${tbl}
    WHERE ${col} IS NOT NULL AND ${col}->>'kekId' IS DISTINCT FROM ${newKek.id}
    ORDER BY id`);
  for (const row of rows) {
    const envelope = rewrap(row.envelope, oldKeyring, newKek, `${table} ${row.id} ${column}`);
    await tx.query(sql.unsafe`UPDATE ${tbl} SET ${col} = ${sql.jsonb({ ...envelope })} WHERE id = ${row.id}`);
  }
  return rows.length;
}

async function countUnderKek(tx: DatabaseTransactionConnection, kekId: string): Promise<number> {
  const connectionCounts = [
    ...CONNECTION_ENVELOPE_COLUMNS.map((c) => sql.fragment`(SELECT count(*) FROM connections WHERE ${sql.identifier([c])}->>'kekId' = ${kekId})`),
    ...OTHER_ENVELOPE_COLUMNS.map((o) => sql.fragment`(SELECT count(*) FROM ${sql.identifier([o.table])} WHERE ${sql.identifier([o.column])}->>'kekId' = ${kekId})`),
  ];
  return tx.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT ((SELECT count(*) FROM secret_versions WHERE envelope->>'kekId' = ${kekId} AND kek_id = ${kekId})
            + ${sql.join(connectionCounts, sql.fragment` + `)})::int AS n`);
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
    await tx.query(sql.unsafe`LOCK TABLE secret_versions, connections, webhooks, calls, oauth_keys IN SHARE ROW EXCLUSIVE MODE`);
    const skipped = await countUnderKek(tx, newKek.id);
    const secretVersions = await rotateSecretVersions(tx, oldKeyring.keyring, newKek);
    let connectionEnvelopes = 0;
    for (const column of CONNECTION_ENVELOPE_COLUMNS) {
      connectionEnvelopes += await rotateEnvelopeColumn(tx, 'connections', column, oldKeyring.keyring, newKek);
    }
    let otherEnvelopes = 0;
    for (const { table, column } of OTHER_ENVELOPE_COLUMNS) {
      otherEnvelopes += await rotateEnvelopeColumn(tx, table, column, oldKeyring.keyring, newKek);
    }
    return { kekId: newKek.id, secretVersions, connectionEnvelopes, otherEnvelopes, skipped };
  });
}

/** Whether the database has the vault's tables yet (`gateway migrate` creates them). */
export async function hasVaultTables(pool: DatabasePool): Promise<boolean> {
  return pool.oneFirst(sql.type(z.object({ ok: z.boolean() }))`SELECT to_regclass('public.secret_versions') IS NOT NULL AS ok`);
}
