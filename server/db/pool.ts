// The slonik pool. Rows are validated against the zod schema given to `sql.type(...)` by an
// interceptor, so a query's result type is checked at run time, not just asserted.
import {
  createPool,
  SchemaValidationError,
  type DatabasePool,
  type Interceptor,
  type QueryResultRow,
} from 'slonik';

export type { DatabasePool };

const resultParser: Interceptor = {
  name: 'zod-result-parser',
  transformRowAsync: async (context, query, row) => {
    const parser = context.resultParser;
    if (!parser) return row;
    const result = await parser['~standard'].validate(row);
    if (result.issues) {
      throw new SchemaValidationError(query, row, result.issues as never);
    }
    return result.value as QueryResultRow;
  },
};

export interface PoolOptions {
  maxPoolSize?: number;
  statementTimeoutMs?: number;
}

export async function createDatabasePool(url: string, opts: PoolOptions = {}): Promise<DatabasePool> {
  return createPool(url, {
    interceptors: [resultParser],
    maxPoolSize: opts.maxPoolSize ?? 10,
    statementTimeout: opts.statementTimeoutMs ?? 30_000,
    captureStackTrace: false,
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

