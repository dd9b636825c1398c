// What the gauges read on each scrape: the approvals pending now (one bounded query) and the pool.
import type { DatabasePool } from 'slonik';
import { countPendingApprovals } from '../approvals/store.ts';
import type { PoolState } from './metrics.ts';

/** Past this many the gauge reads this many: a scrape never counts an unbounded backlog. */
export const PENDING_COUNT_CAP = 100_000;

export function pendingApprovalsReader(pool: DatabasePool): () => Promise<number> {
  return () => countPendingApprovals(pool, PENDING_COUNT_CAP);
}

export function poolStateReader(pool: DatabasePool): () => PoolState {
  return () => pool.state();
}
