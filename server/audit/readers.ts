// What other features read of the audit log, bound to the pool and handed to them by the
// composition root (server/services.ts) instead of the store module. No authorization here: the
// caller has decided what the reader may see and passes it as the query's scope.
import type { DatabasePool } from 'slonik';
import * as store from './store.ts';

export function createAuditReader(pool: DatabasePool) {
  return {
    recentCallKeys: (q: store.RecentCallsQuery) => store.recentCallKeys(pool, q),
  };
}

export type AuditReader = ReturnType<typeof createAuditReader>;
