// The sign-in throttle's I/O: its counters in PostgreSQL, locked per attempt so parallel attempts
// on any replica take turns; the policy is login-throttle.ts.
import type { DatabasePool } from 'slonik';
import { AppError } from '../errors.ts';
import { afterSuccess, decideAttempt, LOGIN_WINDOW_SECONDS, throttleKeys, type ThrottleCounter, type ThrottleKind } from './login-throttle.ts';
import * as store from './store.ts';

/** Idle counters are dropped by whichever attempt comes along, at most this often. */
const PRUNE_EVERY_MS = 60_000;

async function countersOf(tx: Parameters<Parameters<DatabasePool['transaction']>[0]>[0], keys: Record<ThrottleKind, string>) {
  const rows = await store.lockThrottleCounters(tx, Object.values(keys));
  const now = rows[0]?.now ?? new Date();
  const counters = (Object.entries(keys) as [ThrottleKind, string][]).map(([kind, key]): ThrottleCounter => {
    const row = rows.find((r) => r.key === key);
    return { kind, key, failures: row?.failures ?? 0, lastFailureAt: row?.last_failure_at ?? null, blockedUntil: row?.blocked_until ?? null };
  });
  return { counters, now };
}

export function createLoginThrottle(pool: DatabasePool) {
  let lastPrunedAt = 0;
  return {
    /**
     * Refuses (429 `rate_limited`, with `retry_after_seconds`) while any counter that applies
     * holds this attempt back; otherwise counts it as a failure and answers how to take that back.
     */
    async begin(email: string, source: string): Promise<{ succeeded(): Promise<void> }> {
      const keys = throttleKeys(email, source);
      const decision = await pool.transaction(async (tx) => {
        const { counters, now } = await countersOf(tx, keys);
        const d = decideAttempt(counters, now);
        if (d.allowed) await store.saveThrottleCounters(tx, d.updates);
        return d;
      });
      if (!decision.allowed) {
        throw new AppError('rate_limited', 'too many failed sign-in attempts: wait before trying again', { retry_after_seconds: decision.retryAfterSeconds });
      }
      if (Date.now() - lastPrunedAt >= PRUNE_EVERY_MS) {
        lastPrunedAt = Date.now();
        await store.pruneThrottleCounters(pool, 2 * LOGIN_WINDOW_SECONDS);
      }
      return {
        succeeded: () =>
          pool.transaction(async (tx) => {
            const { counters, now } = await countersOf(tx, keys);
            await store.saveThrottleCounters(tx, afterSuccess(counters, now));
          }),
      };
    },
  };
}
