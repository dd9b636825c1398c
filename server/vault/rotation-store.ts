// SQL for master-key (KEK) rotation (rotate.ts): the statements reach every envelope column, in the
// vault's own table and in the others that keep an envelope, all inside the rotation's one
// transaction. Rows are read and written as stored: no cryptography here.
import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Envelope } from '../../core/vault/envelope.ts';

type Db = CommonQueryMethods;

/** The envelope columns of `connections` (OAuth tokens and the pending PKCE verifier). */
export const CONNECTION_ENVELOPE_COLUMNS = ['access_token', 'refresh_token', 'pkce_verifier'] as const;

/** Every other envelope column: webhook signing secrets and the encrypted request of each call. */
export const OTHER_ENVELOPE_COLUMNS = [
  { table: 'webhooks', column: 'secret_envelope' },
  { table: 'calls', column: 'request_envelope' },
  { table: 'oauth_keys', column: 'envelope' },
  // Slack bot tokens, signing secrets and SMTP passwords of approval notices (issue 30).
  { table: 'notification_channels', column: 'secret_envelope' },
  // The private half of the key that signs the gateway's messages to call workflows.
  { table: 'message_signing_keys', column: 'envelope' },
] as const;

/** Writers wait until the rotation commits (SHARE ROW EXCLUSIVE lets reads through). */
export async function lockEnvelopeTables(db: Db): Promise<void> {
  await db.query(sql.unsafe`LOCK TABLE secret_versions, connections, webhooks, calls, oauth_keys, notification_channels, message_signing_keys IN SHARE ROW EXCLUSIVE MODE`);
}

/** Secret versions whose envelope or kek_id column is not (yet) the KEK's. */
export const secretVersionsNotUnder = (db: Db, kekId: string) =>
  db.any(sql.type(z.object({ secret_id: z.string(), version: z.number(), envelope: z.unknown() }))`
    SELECT secret_id, version, envelope FROM secret_versions
    WHERE envelope->>'kekId' IS DISTINCT FROM ${kekId} OR kek_id <> ${kekId}
    ORDER BY secret_id, version`);

export async function setSecretVersionEnvelope(db: Db, v: { secretId: string; version: number; envelope: Envelope; kekId: string }): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE secret_versions SET envelope = ${sql.jsonb({ ...v.envelope })}, kek_id = ${v.kekId}
    WHERE secret_id = ${v.secretId} AND version = ${v.version}`);
}

/** Rows of `table` whose envelope in `column` is not under the KEK (null columns left out). */
export function envelopesNotUnder(db: Db, table: string, column: string, kekId: string) {
  const col = sql.identifier([column]);
  return db.any(sql.type(z.object({ id: z.string(), envelope: z.unknown() }))`
    SELECT id, ${col} AS envelope FROM ${sql.identifier([table])}
    WHERE ${col} IS NOT NULL AND ${col}->>'kekId' IS DISTINCT FROM ${kekId}
    ORDER BY id`);
}

export async function setEnvelope(db: Db, table: string, column: string, id: string, envelope: Envelope): Promise<void> {
  const col = sql.identifier([column]);
  await db.query(sql.unsafe`UPDATE ${sql.identifier([table])} SET ${col} = ${sql.jsonb({ ...envelope })} WHERE id = ${id}`);
}

/** How many envelopes, in every envelope column, the KEK already wraps. */
export function countEnvelopesUnder(db: Db, kekId: string): Promise<number> {
  const columnCounts = [
    ...CONNECTION_ENVELOPE_COLUMNS.map((c) => sql.fragment`(SELECT count(*) FROM connections WHERE ${sql.identifier([c])}->>'kekId' = ${kekId})`),
    ...OTHER_ENVELOPE_COLUMNS.map((o) => sql.fragment`(SELECT count(*) FROM ${sql.identifier([o.table])} WHERE ${sql.identifier([o.column])}->>'kekId' = ${kekId})`),
  ];
  return db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT ((SELECT count(*) FROM secret_versions WHERE envelope->>'kekId' = ${kekId} AND kek_id = ${kekId})
            + ${sql.join(columnCounts, sql.fragment` + `)})::int AS n`);
}

/** Whether the database has the vault's tables yet (`gateway migrate` creates them). */
export async function hasVaultTables(pool: DatabasePool): Promise<boolean> {
  return pool.oneFirst(sql.type(z.object({ ok: z.boolean() }))`SELECT to_regclass('public.secret_versions') IS NOT NULL AS ok`);
}
