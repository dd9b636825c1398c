// Forward-only migrations: every `migrations/NNNN_name.sql` runs once, in order, in its own
// transaction, under a Postgres advisory lock so concurrent starts never race. A file changed
// after it was applied stops start-up: history is never rewritten silently.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
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

const CREATE_TABLE = `
  CREATE TABLE IF NOT EXISTS schema_migrations (
    name text PRIMARY KEY,
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`;

/**
 * Applies pending migrations over one dedicated `pg` connection: migration files hold several
 * statements, which slonik (rightly, for application queries) refuses to send in one query.
 */
export async function migrate(databaseUrl: string, opts: { dir?: string; log?: (msg: string) => void } = {}): Promise<string[]> {
  const files = await readMigrations(opts.dir);
  const appliedNow: string[] = [];
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(CREATE_TABLE);
    const { rows } = await client.query<{ name: string; checksum: string }>('SELECT name, checksum FROM schema_migrations');
    const applied = new Map(rows.map((r) => [r.name, r.checksum]));
    for (const file of files) {
      const known = applied.get(file.name);
      if (known === file.checksum) continue;
      if (known !== undefined) throw new MigrationChangedError(file.name);
      try {
        await client.query('BEGIN');
        await client.query(file.body); // no parameters: simple protocol, several statements allowed
        await client.query('INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2)', [file.name, file.checksum]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${file.name} failed: ${(err as Error).message}`, { cause: err });
      }
      opts.log?.(`applied migration ${file.name}`);
      appliedNow.push(file.name);
    }
  } finally {
    await client.end(); // closing the session releases the advisory lock
  }
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
