// The call path's statements are named prepared statements (issue 28, server/db/prepared.ts):
// parsed and planned once per connection. A name always stands for one text; a pool configured
// without them (DATABASE_PREPARED_STATEMENTS=false) sends every statement unnamed; and a named
// statement that lists its columns survives a migration that adds one to its table.
import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabasePool, type DatabasePool } from '../../server/db/pool.ts';
import { prepared } from '../../server/db/prepared.ts';
import { createTestDatabase } from '../support/gateway.ts';

const item = z.object({ id: z.number(), name: z.string() });
const byId = (id: number, upper: boolean) =>
  prepared(sql.type(item)`SELECT id, ${upper ? sql.fragment`upper(name)` : sql.fragment`name`} AS name FROM items WHERE id = ${id}`);
const preparedNames = z.object({ name: z.string() });

describe('named prepared statements', () => {
  let url: string;
  let pool: DatabasePool;
  let unnamedPool: DatabasePool;
  beforeAll(async () => {
    url = await createTestDatabase();
    pool = await createDatabasePool(url, { maxPoolSize: 1 });
    unnamedPool = await createDatabasePool(url, { maxPoolSize: 1, preparedStatements: false });
    await pool.query(sql.unsafe`CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)`);
    await pool.query(sql.unsafe`INSERT INTO items VALUES (1, 'one'), (2, 'two')`);
  });
  afterAll(async () => {
    await pool?.end();
    await unnamedPool?.end();
  });

  it('names a statement after its text: one name per variant, the same for every value', () => {
    expect(byId(1, false).name).toMatch(/^gw_[\w-]{20}$/);
    expect(byId(1, false).name).toBe(byId(2, false).name);
    expect(byId(1, true).name).not.toBe(byId(1, false).name);
  });

  it('prepares each variant once per connection and answers as an unnamed statement would', async () => {
    await pool.connect(async (c) => {
      for (const id of [1, 2, 1]) expect(await c.one(byId(id, false))).toEqual({ id, name: id === 1 ? 'one' : 'two' });
      expect(await c.one(byId(2, true))).toEqual({ id: 2, name: 'TWO' });
      const names = await c.anyFirst(sql.type(preparedNames)`SELECT name FROM pg_prepared_statements ORDER BY name`);
      expect([...names].sort()).toEqual([byId(1, false).name, byId(1, true).name].sort());
    });
  });

  it('sends them unnamed when the pool is told to (a pooler that cannot carry them)', async () => {
    await unnamedPool.connect(async (c) => {
      expect(await c.one(byId(1, false))).toEqual({ id: 1, name: 'one' });
      expect(await c.anyFirst(sql.type(preparedNames)`SELECT name FROM pg_prepared_statements`)).toEqual([]);
    });
  });

  it('keeps working after a migration adds a column to the table it reads (its columns are listed)', async () => {
    await pool.connect(async (c) => {
      expect(await c.one(byId(1, false))).toEqual({ id: 1, name: 'one' });
      await unnamedPool.query(sql.unsafe`ALTER TABLE items ADD COLUMN added_later text`);
      expect(await c.one(byId(1, false))).toEqual({ id: 1, name: 'one' });
    });
  });
});
