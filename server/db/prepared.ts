// The call path's statements as named prepared statements (issue 28). PostgreSQL parses and plans
// an unnamed statement on every execution; our hot statements are long CTEs whose planning cost
// more than their execution (measured on the allow's first statement: 1.35 ms per execution
// unnamed, 0.50 ms named). A named statement is parsed once per connection and, after a few
// executions, runs a cached generic plan: they all look rows up by key.
//
// Only statements whose result columns are listed (no `*` at the top level) are named: a
// migration that adds a column to a table a cached `SELECT *` reads would make PostgreSQL refuse
// the cached plan ("cached plan must not change result type") in processes still running.
import { createHash } from 'node:crypto';
import type { Interceptor } from 'slonik';

/** Names by statement text: the texts are the code's own (values travel apart), so they are few. */
const names = new Map<string, string>();
/** A bound all the same: past it the map starts over (names are recomputed, never wrong). */
const MAX_NAMED_TEXTS = 2_000;

/** The statement's name: a digest of its text, computed once per text (a hash per execution cost more than its statement's planning saved). */
function nameOf(sql: string): string {
  let name = names.get(sql);
  if (name === undefined) {
    if (names.size >= MAX_NAMED_TEXTS) names.clear();
    name = `gw_${createHash('sha1').update(sql).digest('base64url').slice(0, 20)}`;
    names.set(sql, name);
  }
  return name;
}

/**
 * The query, named after its text: each variant a statement's optional fragments produce is its
 * own prepared statement (a name may never stand for two texts on one connection).
 */
export function prepared<Q extends { readonly sql: string; readonly name?: string }>(query: Q): Q {
  return Object.freeze({ ...query, name: nameOf(query.sql) });
}

/**
 * Sends every statement unnamed (DATABASE_PREPARED_STATEMENTS=false): for a connection pooler in
 * transaction mode that does not carry prepared statements across server connections.
 */
export const unnamedStatements: Interceptor = {
  name: 'unnamed-statements',
  transformQuery: (_context, query) => (query.name === undefined ? query : { sql: query.sql, values: query.values }),
};
