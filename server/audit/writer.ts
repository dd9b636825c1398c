// The audit log's one write for other features, bound to the pool by whoever composes them, so
// no module outside this folder needs the store. An entry that must commit with the change it
// records is written by that change's own store, in its statement or transaction.
import type { DatabasePool } from 'slonik';
import type { AuditEntry } from './entry.ts';
import * as store from './store.ts';

export function createAuditWriter(pool: DatabasePool) {
  return {
    append: (entry: AuditEntry) => store.appendAudit(pool, entry),
  };
}

export type AuditWriter = ReturnType<typeof createAuditWriter>;
