// Forward-only migrations: every `migrations/NNNN_name.sql` runs once, in order, in its own
// transaction, under a Postgres advisory lock so concurrent starts never race. A file changed
// after it was applied stops start-up: history is never rewritten silently.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';

export const MIGRATIONS_DIR = path.resolve(import.meta.dirname, '..', '..', 'migrations');
const LOCK_KEY = 7_242_001; // arbitrary, constant: "gateway migrations"

export class MigrationChangedError extends Error {
  constructor(name: string) {
    super(`migration ${name} was changed after it was applied; migrations are forward-only: restore the file and add a new one`);
    this.name = 'MigrationChangedError';
  }
}

export interface MigrationFile {
  name: string;
  checksum: string;
  body: string;
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const names = (await readdir(dir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  return Promise.all(
    names.map(async (name) => {
      const body = await readFile(path.join(dir, name), 'utf8');
      return { name, body, checksum: createHash('sha256').update(body).digest('hex') };
    }),
  );
}

const appliedRow = z.object({ name: z.string(), checksum: z.string() });

const CREATE_TABLE = sql.unsafe`
  CREATE TABLE IF NOT EXISTS schema_migrations (
    name text PRIMARY KEY,
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`;

/** A whole SQL file as one simple-protocol query (no parameters, so several statements run). */
function rawSql(text: string) {
  const strings = Object.freeze(Object.assign([text], { raw: Object.freeze([text]) })) as unknown as TemplateStringsArray;
  return sql.unsafe(strings);
}

export async function migrate(pool: DatabasePool, opts: { dir?: string; log?: (msg: string) => void } = {}): Promise<string[]> {
  const files = await readMigrations(opts.dir);
  const appliedNow: string[] = [];
  await pool.connect(async (conn) => {
    await conn.query(sql.unsafe`SELECT pg_advisory_lock(${LOCK_KEY})`);
    try {
      await conn.query(CREATE_TABLE);
      const applied = new Map(
        (await conn.any(sql.type(appliedRow)`SELECT name, checksum FROM schema_migrations`)).map((r) => [r.name, r.checksum]),
      );
      for (const file of files) {
        const known = applied.get(file.name);
        if (known === file.checksum) continue;
        if (known !== undefined) throw new MigrationChangedError(file.name);
        await conn.transaction(async (tx) => {
          await tx.query(rawSql(file.body));
          await tx.query(sql.unsafe`INSERT INTO schema_migrations (name, checksum) VALUES (${file.name}, ${file.checksum})`);
        });
        opts.log?.(`applied migration ${file.name}`);
        appliedNow.push(file.name);
      }
    } finally {
      await conn.query(sql.unsafe`SELECT pg_advisory_unlock(${LOCK_KEY})`);
    }
  });
  return appliedNow;
}

/** Names of migrations on disk not yet applied (for /readyz). Changed files count as pending. */
export async function pendingMigrations(pool: DatabasePool, dir?: string): Promise<string[]> {
  const files = await readMigrations(dir);
  const exists = await pool.oneFirst(sql.type(z.object({ t: z.boolean() }))`SELECT to_regclass('schema_migrations') IS NOT NULL AS t`);
  if (!exists) return files.map((f) => f.name);
  const applied = new Map(
    (await pool.any(sql.type(appliedRow)`SELECT name, checksum FROM schema_migrations`)).map((r) => [r.name, r.checksum]),
  );
  return files.filter((f) => applied.get(f.name) !== f.checksum).map((f) => f.name);
}
