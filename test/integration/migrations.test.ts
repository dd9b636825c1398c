import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabasePool, type DatabasePool } from '../../server/db/pool.ts';
import { MigrationChangedError, migrate, pendingMigrations } from '../../server/db/migrate.ts';
import { createTestDatabase } from '../support/gateway.ts';

describe('forward-only migrations', () => {
  let pool: DatabasePool;
  let url: string;
  let dir: string;
  beforeAll(async () => {
    url = await createTestDatabase({ migrated: false });
    pool = await createDatabasePool(url);
    dir = await mkdtemp(path.join(os.tmpdir(), 'migrations-'));
  });
  afterAll(async () => {
    await pool?.end();
    await rm(dir, { recursive: true, force: true });
  });

  it('applies each file once, in order, even when several processes race', async () => {
    await writeFile(path.join(dir, '0001_a.sql'), 'CREATE TABLE a (id int);\nINSERT INTO a VALUES (1);');
    await writeFile(path.join(dir, '0002_b.sql'), 'INSERT INTO a VALUES (2);');
    await writeFile(path.join(dir, 'notes.txt'), 'ignored');
    expect(await pendingMigrations(pool, dir)).toEqual(['0001_a.sql', '0002_b.sql']);
    const results = await Promise.all([migrate(url, { dir }), migrate(url, { dir }), migrate(url, { dir })]);
    expect(results.flat().sort()).toEqual(['0001_a.sql', '0002_b.sql']);
    const rows = await pool.any(sql.type(z.object({ id: z.number() }))`SELECT id FROM a ORDER BY id`);
    expect(rows.map((r) => r.id)).toEqual([1, 2]);
    expect(await pendingMigrations(pool, dir)).toEqual([]);
    expect(await migrate(url, { dir })).toEqual([]);
  });

  it('refuses to run when an applied file was changed, and changes nothing', async () => {
    await writeFile(path.join(dir, '0002_b.sql'), 'INSERT INTO a VALUES (99);');
    await writeFile(path.join(dir, '0003_c.sql'), 'INSERT INTO a VALUES (3);');
    await expect(migrate(url, { dir })).rejects.toBeInstanceOf(MigrationChangedError);
    await expect(migrate(url, { dir })).rejects.toThrow(/0002_b\.sql was changed after it was applied/);
    const rows = await pool.any(sql.type(z.object({ id: z.number() }))`SELECT id FROM a ORDER BY id`);
    expect(rows.map((r) => r.id)).toEqual([1, 2]);
    expect(await pendingMigrations(pool, dir)).toContain('0002_b.sql');
  });

  it('rolls back a failing file completely', async () => {
    const d2 = await mkdtemp(path.join(os.tmpdir(), 'migrations-bad-'));
    await writeFile(path.join(d2, '0001_ok.sql'), 'CREATE TABLE ok_t (id int);');
    await writeFile(path.join(d2, '0002_bad.sql'), 'CREATE TABLE half (id int);\nSELECT * FROM no_such_table;');
    await expect(migrate(url, { dir: d2 })).rejects.toThrow(/no_such_table/);
    const half = await pool.oneFirst(sql.type(z.object({ t: z.boolean() }))`SELECT to_regclass('half') IS NOT NULL AS t`);
    expect(half).toBe(false);
    expect(await pendingMigrations(pool, d2)).toEqual(['0002_bad.sql']);
    await rm(d2, { recursive: true, force: true });
  });
});
