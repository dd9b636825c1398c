// What /readyz reports: the database answers, every migration on disk is applied, Temporal answers.
import type { DatabasePool } from 'slonik';
import { pendingMigrations } from './db/migrate.ts';
import { pingDatabase } from './db/pool.ts';
import type { TemporalHealth } from './temporal/health.ts';

export interface ReadinessReport {
  ready: boolean;
  checks: { database: string; migrations: string; temporal: string };
  /** The dependencies that do not answer (`database`, `temporal`): what an operator looks at first. */
  down: Array<'database' | 'temporal'>;
}

async function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** `temporal` is the watcher calls are gated by: asking through it keeps /readyz and the gate in step. */
export async function checkReadiness(deps: { pool: DatabasePool; temporal: TemporalHealth | undefined }): Promise<ReadinessReport> {
  const checks = { database: 'ok', migrations: 'ok', temporal: 'ok' };
  try {
    await within(2_000, pingDatabase(deps.pool));
    const pending = await within(2_000, pendingMigrations(deps.pool));
    if (pending.length > 0) checks.migrations = `pending: ${pending.join(', ')}`;
  } catch (err) {
    checks.database = `error: ${(err as Error).message}`;
    checks.migrations = 'unknown';
  }
  if (!deps.temporal) checks.temporal = 'not connected';
  else {
    try {
      await within(2_000, deps.temporal.check(2_000));
    } catch (err) {
      checks.temporal = `error: ${(err as Error).message}`;
    }
  }
  const down: ReadinessReport['down'] = [];
  if (checks.database !== 'ok') down.push('database');
  if (checks.temporal !== 'ok') down.push('temporal');
  return { ready: Object.values(checks).every((c) => c === 'ok'), checks, down };
}
