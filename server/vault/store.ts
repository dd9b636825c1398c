// SQL for vault secrets and their versions. No authorization and no cryptography here: the
// service decides who may do what and seals values; this module only reads and writes rows.
// Every query that takes a secret id is scoped by org, so another tenant's id simply finds nothing.
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Envelope } from '../../core/vault/envelope.ts';
import { envelopeSchema } from './envelope-schema.ts';

export const secretRow = z.object({
  id: z.string(),
  org_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  current_version: z.number(),
  created_by: z.string().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
  deleted_at: z.date().nullable(),
  /** Hosts raw HTTP may inject it toward; null = service templates only. */
  allowed_hosts: z.array(z.string()).nullable(),
  /** null = the org's secret; otherwise the user whose own secret it is. */
  owner_id: z.string().nullable(),
});
export type SecretRow = z.infer<typeof secretRow>;

export const versionRow = z.object({
  secret_id: z.string(),
  version: z.number(),
  kek_id: z.string(),
  restored_from: z.number().nullable(),
  created_by: z.string().nullable(),
  created_at: z.date(),
  allowed_hosts: z.array(z.string()).nullable(),
});
export type VersionRow = z.infer<typeof versionRow>;

const versionWithEnvelopeRow = versionRow.extend({ envelope: envelopeSchema });

const SECRET_COLUMNS = sql.fragment`id, org_id, name, description, current_version, created_by, created_at, updated_at, deleted_at, allowed_hosts, owner_id`;
const VERSION_COLUMNS = sql.fragment`secret_id, version, kek_id, restored_from, created_by, created_at, allowed_hosts`;

type Db = CommonQueryMethods;

const lock = (forUpdate: boolean) => (forUpdate ? sql.fragment`FOR UPDATE` : sql.fragment``);

/** A live (not deleted) secret of the org. `forUpdate` serialises version bumps. */
export const getSecret = (db: Db, orgId: string, id: string, forUpdate = false) =>
  db.maybeOne(sql.type(secretRow)`
    SELECT ${SECRET_COLUMNS} FROM secrets WHERE id = ${id} AND org_id = ${orgId} AND deleted_at IS NULL ${lock(forUpdate)}`);

export const findSecretByName = (db: Db, orgId: string, name: string, forUpdate = false) =>
  db.maybeOne(sql.type(secretRow)`
    SELECT ${SECRET_COLUMNS} FROM secrets WHERE org_id = ${orgId} AND name = ${name} AND deleted_at IS NULL ${lock(forUpdate)}`);

export const listSecrets = (db: Db, orgId: string) =>
  db.any(sql.type(secretRow)`
    SELECT ${SECRET_COLUMNS} FROM secrets WHERE org_id = ${orgId} AND deleted_at IS NULL ORDER BY name`);

/**
 * Inserts a secret with no versions yet (current_version 0). Null when a live secret of that
 * name already exists — including one committed meanwhile by a concurrent insert.
 */
export const insertSecret = (
  db: Db,
  s: { orgId: string; name: string; description: string | null; createdBy: string; allowedHosts: readonly string[] | null; ownerId: string | null },
) =>
  db.maybeOne(sql.type(secretRow)`
    INSERT INTO secrets (org_id, name, description, created_by, allowed_hosts, owner_id)
    VALUES (${s.orgId}, ${s.name}, ${s.description}, ${s.createdBy}, ${s.allowedHosts ? sql.array(s.allowedHosts, 'text') : null}, ${s.ownerId})
    ON CONFLICT (org_id, name) WHERE deleted_at IS NULL DO NOTHING
    RETURNING ${SECRET_COLUMNS}`);

/**
 * Reserves the next version number; call with the row locked. `description` / `allowedHosts`
 * undefined keep what is there (`allowedHosts` null clears the list: templates only).
 */
export const bumpVersion = (db: Db, id: string, description: string | undefined, allowedHosts?: readonly string[] | null) =>
  db.one(sql.type(secretRow)`
    UPDATE secrets SET current_version = current_version + 1, updated_at = now()
      ${description !== undefined ? sql.fragment`, description = ${description}` : sql.fragment``}
      ${allowedHosts !== undefined ? sql.fragment`, allowed_hosts = ${allowedHosts ? sql.array(allowedHosts, 'text') : null}` : sql.fragment``}
    WHERE id = ${id}
    RETURNING ${SECRET_COLUMNS}`);

export async function insertVersion(
  db: Db,
  v: { secretId: string; version: number; envelope: Envelope; restoredFrom: number | null; createdBy: string; allowedHosts: readonly string[] | null },
): Promise<VersionRow> {
  return db.one(sql.type(versionRow)`
    INSERT INTO secret_versions (secret_id, version, envelope, kek_id, restored_from, created_by, allowed_hosts)
    VALUES (${v.secretId}, ${v.version}, ${sql.jsonb({ ...v.envelope })}, ${v.envelope.kekId}, ${v.restoredFrom}, ${v.createdBy},
            ${v.allowedHosts ? sql.array(v.allowedHosts, 'text') : null})
    RETURNING ${VERSION_COLUMNS}`);
}

export const listVersions = (db: Db, secretId: string) =>
  db.any(sql.type(versionRow)`
    SELECT ${VERSION_COLUMNS} FROM secret_versions WHERE secret_id = ${secretId} ORDER BY version DESC`);

export const getVersion = (db: Db, secretId: string, version: number) =>
  db.maybeOne(sql.type(versionWithEnvelopeRow)`
    SELECT ${VERSION_COLUMNS}, envelope FROM secret_versions WHERE secret_id = ${secretId} AND version = ${version}`);

const currentEnvelopeRow = z.object({
  org_id: z.string(),
  owner_id: z.string().nullable(),
  allowed_hosts: z.array(z.string()).nullable(),
  secret_id: z.string(),
  version: z.number(),
  envelope: envelopeSchema,
});

export type CurrentEnvelope = z.infer<typeof currentEnvelopeRow>;

const currentEnvelopeSelect = (orgId: string, name: string) => sql.fragment`
    SELECT s.org_id, s.owner_id, s.allowed_hosts, v.secret_id, v.version, v.envelope
    FROM secrets s JOIN secret_versions v ON v.secret_id = s.id AND v.version = s.current_version
    WHERE s.org_id = ${orgId} AND s.name = ${name} AND s.deleted_at IS NULL AND s.current_version > 0`;

/** The current version's envelope of a live secret, by name, in one round trip (the executor). */
export const currentEnvelopeByName = (db: Db, orgId: string, name: string) =>
  db.maybeOne(sql.type(currentEnvelopeRow)`${currentEnvelopeSelect(orgId, name)}`);

/**
 * The same read as one JSON value (NULL: no such secret), for a statement the call path already
 * makes (the covered call's check and send mark, issue 28); `parseCurrentEnvelope` reads it back.
 */
export const currentEnvelopeJson = (orgId: string, name: string) => sql.fragment`(SELECT row_to_json(e) FROM (${currentEnvelopeSelect(orgId, name)}) e)`;

export const parseCurrentEnvelope = (value: unknown): CurrentEnvelope | null => (value === null || value === undefined ? null : currentEnvelopeRow.parse(value));

/** Soft delete: versions stay (history, audit), the name becomes free for a new secret. */
export async function softDelete(db: Db, orgId: string, id: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE secrets SET deleted_at = now(), updated_at = now() WHERE id = ${id} AND org_id = ${orgId} AND deleted_at IS NULL`);
  return r.rowCount > 0;
}
