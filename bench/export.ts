// The audit export's own cost (issue 46): `npm run bench:export [-- --rows 200000 --runs 3]`.
// In a throwaway embedded PostgreSQL, seeds --rows audit entries of one org whose 40 people and
// 400 agents exist (so every name beside an id is looked up and found), then runs the service's
// exportText as an admin, JSON Lines and CSV, --runs times each after one warm-up, and prints
// rows/s and the heap and RSS growth during the export (flat memory: independent of --rows).
// Run it under `node --cpu-prof` to see where the time goes.
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'slonik';
import type { ExportFormat } from '../core/audit/export-format.ts';
import type { Principal } from '../server/auth/principal.ts';
import { createAuditService } from '../server/audit/service.ts';
import { migrate } from '../server/db/migrate.ts';
import { createDatabasePool, type DatabasePool } from '../server/db/pool.ts';
import { startEmbeddedPostgres } from '../server/embedded/embedded-postgres.ts';
import { createLogger } from '../server/logger.ts';
import { seedAuditVolume, volumeIds } from '../test/support/audit-volume.ts';
import { round } from './support/figures.ts';

const GOAL_ROWS_PER_S = 50_000;

const { values: opts } = parseArgs({ options: { rows: { type: 'string', default: '200000' }, runs: { type: 'string', default: '3' } } });
const rows = Number(opts.rows);
const runs = Number(opts.runs);
if (!Number.isInteger(rows) || rows < 1000 || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: npm run bench:export -- [--rows N ≥ 1000] [--runs N ≥ 1]');
  process.exit(2);
}

/** The org, its 40 people and 400 agents (the ids the seeded log names), as identities. */
async function seedOrg(pool: DatabasePool, orgId: string): Promise<string> {
  const ids = volumeIds(orgId);
  await pool.query(sql.unsafe`INSERT INTO orgs (id, name) VALUES (${orgId}, 'export bench')`);
  await pool.query(sql.unsafe`
    INSERT INTO identities (id, org_id, kind, user_id, name, email, role, password_hash)
    SELECT u, ${orgId}, 'user', u, 'person ' || n, 'p' || n || '@example.test', 'admin', 'x'
    FROM unnest(${sql.array(Array.from({ length: 40 }, (_, n) => ids.user(n)), 'uuid')}::uuid[]) WITH ORDINALITY AS t(u, n)`);
  await pool.query(sql.unsafe`
    INSERT INTO identities (id, org_id, kind, parent_id, user_id, name)
    SELECT a, ${orgId}, 'agent', p, p, 'agent "' || n || '", the ' || n || 'th'
    FROM unnest(${sql.array(Array.from({ length: 400 }, (_, n) => ids.agent(n)), 'uuid')}::uuid[],
                ${sql.array(Array.from({ length: 400 }, (_, n) => ids.user(n % 40)), 'uuid')}::uuid[]) WITH ORDINALITY AS t(a, p, n)`);
  return ids.user(0);
}

interface Run {
  ms: number;
  /** This process's CPU (user + system) during the export: what the export costs the gateway, whatever the load. */
  cpuMs: number;
  bytes: number;
  heapGrowthMb: number;
  rssGrowthMb: number;
}

async function timeExport(service: ReturnType<typeof createAuditService>, admin: Principal, format: ExportFormat): Promise<Run> {
  const heap0 = process.memoryUsage().heapUsed;
  const rss0 = process.memoryUsage.rss();
  let heapPeak = heap0;
  let rssPeak = rss0;
  // Sampled every 20 ms (between batches), not per chunk: memoryUsage() is not free.
  const sample = setInterval(() => {
    const m = process.memoryUsage();
    heapPeak = Math.max(heapPeak, m.heapUsed);
    rssPeak = Math.max(rssPeak, m.rss);
  }, 20);
  let bytes = 0;
  const cpu0 = process.cpuUsage();
  const t = performance.now();
  try {
    for await (const chunk of service.exportText(admin, {}, format)) bytes += chunk.length;
  } finally {
    clearInterval(sample);
  }
  const ms = performance.now() - t;
  const cpu = process.cpuUsage(cpu0);
  const mb = (n: number) => round(n / 2 ** 20, 1);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, bytes, heapGrowthMb: mb(heapPeak - heap0), rssGrowthMb: mb(rssPeak - rss0) };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-export-'));
  await chmod(dir, 0o755); // the embedded PostgreSQL runs as its own OS user when we are root
  const pg = await startEmbeddedPostgres({ dataDir: dir, logger: createLogger('warn'), database: 'audit_export' });
  let pool: DatabasePool | undefined;
  try {
    await migrate(pg.url);
    pool = await createDatabasePool(pg.url, { statementTimeoutMs: 600_000 });
    const orgId = randomUUID();
    const userId = await seedOrg(pool, orgId);
    await seedAuditVolume(pool, orgId, rows);
    await pool.query(sql.unsafe`VACUUM ANALYZE audit_log`);
    const admin: Principal = { type: 'user', orgId, userId, identityId: userId, role: 'admin', sessionId: 'bench' };
    const service = createAuditService({ pool });
    console.log(`audit export of ${rows.toLocaleString('en')} rows (service exportText, admin); load average ${os.loadavg()[0]!.toFixed(1)}`);
    for (const format of ['jsonl', 'csv'] as const) {
      await timeExport(service, admin, format); // warm-up
      const all: Run[] = [];
      for (let i = 0; i < runs; i++) all.push(await timeExport(service, admin, format));
      const best = all.reduce((a, b) => (b.ms < a.ms ? b : a));
      const rate = Math.round(rows / (best.ms / 1000));
      console.log(
        `${format.padEnd(6)} ${rate.toLocaleString('en')} rows/s (best of ${runs}: ${round(best.ms / 1000, 2)} s, ${round(best.bytes / 2 ** 20, 1)} MB), ` +
          `${round((best.cpuMs * 1000) / rows, 1)} µs of this process's CPU a row; ` +
          `heap growth ≤ ${Math.max(...all.map((r) => r.heapGrowthMb))} MB, RSS growth ≤ ${Math.max(...all.map((r) => r.rssGrowthMb))} MB; ` +
          `goal ≥ ${GOAL_ROWS_PER_S.toLocaleString('en')}: ${rate >= GOAL_ROWS_PER_S ? 'met' : 'MISSED'}`,
      );
    }
  } finally {
    await pool?.end();
    await pg.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
