// The slonik pool. Rows are validated against the zod schema given to `sql.type(...)` by an
// interceptor, so a query's result type is checked at run time, not just asserted.
import {
  createPool,
  SchemaValidationError,
  sql,
  type DatabasePool,
  type Interceptor,
  type QueryResultRow,
} from 'slonik';

import { unnamedStatements } from './prepared.ts';

export type { DatabasePool };

// Synchronous on purpose: slonik's async row hook runs each row through a fresh promise queue,
// which cost more per query than the validation itself. Our row schemas have no async checks.
const resultParser: Interceptor = {
  name: 'zod-result-parser',
  transformRow: (context, query, row) => {
    const parser = context.resultParser;
    if (!parser) return row;
    const result = parser['~standard'].validate(row);
    if (result instanceof Promise) throw new Error('row schemas must validate synchronously');
    if (result.issues) {
      throw new SchemaValidationError(query, row, result.issues as never);
    }
    return result.value as QueryResultRow;
  },
};

export interface PoolOptions {
  maxPoolSize?: number;
  statementTimeoutMs?: number;
  /** The call path's named prepared statements (server/db/prepared.ts); false sends them unnamed. Default true. */
  preparedStatements?: boolean;
}

export async function createDatabasePool(url: string, opts: PoolOptions = {}): Promise<DatabasePool> {
  return createPool(url, {
    interceptors: opts.preparedStatements === false ? [unnamedStatements, resultParser] : [resultParser],
    maxPoolSize: opts.maxPoolSize ?? 10,
    statementTimeout: opts.statementTimeoutMs ?? 30_000,
    captureStackTrace: false,
    // slonik's default runs `DISCARD ALL` each time a connection goes back to the pool: one more
    // round trip per query, and it would drop the prepared statements the call path reuses
    // (server/db/prepared.ts). Pooled connections carry no other session state here (no SET, no
    // LISTEN, no session advisory locks: those use their own clients), so there is nothing to reset.
    resetConnection: async () => undefined,
    // Keep warm connections across short pauses instead of reconnecting (SCRAM costs CPU).
    idleTimeout: 60_000,
    typeParsers: [
      { name: 'int8', parse: (v: string) => Number.parseInt(v, 10) },
      { name: 'numeric', parse: (v: string) => Number.parseFloat(v) },
      { name: 'timestamptz', parse: (v: string) => new Date(v) },
      { name: 'timestamp', parse: (v: string) => new Date(v + 'Z') },
      { name: 'json', parse: (v: string) => JSON.parse(v) },
      { name: 'jsonb', parse: (v: string) => JSON.parse(v) },
    ],
  });
}

/** One round trip: whether the database answers at all (/readyz). */
export async function pingDatabase(pool: DatabasePool): Promise<void> {
  await pool.query(sql.unsafe`SELECT 1`);
}
