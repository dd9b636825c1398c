// The scale benchmark's pure parts: the seeded org's shape, its ids, and the verdicts on the figures.
import { describe, expect, it } from 'vitest';
import { exportFigures, formatTable, readFigures } from '../../../bench/support/scale-report.ts';
import { bigOrg, CHAIN_LENGTH, uuidOf } from '../../support/scale-seed.ts';

const lat = (p50: number, p95: number) => ({ n: 40, p50, p95, p99: p95 });

describe('bench:scale figures', () => {
  it('a read meets the goal only when its p95 is within 2× the small org’s and at most 50 ms', () => {
    expect(readFigures(lat(10, 20), lat(8, 12))).toMatchObject({ p95_ms: 20, small_p95_ms: 12, p95_ratio: 1.67, met: true });
    expect(readFigures(lat(10, 30), lat(5, 10)).met).toBe(false); // 3× the small org's
    expect(readFigures(lat(40, 60), lat(40, 55)).met).toBe(false); // over 50 ms
  });

  it('the export meets its goal at 50,000 rows/s or more with memory flat: its second half no more than 16 MB above its first', () => {
    const small = { rows: 1_000, ms: 50 };
    const plateau = { before: 300, peak: 370, halves: { first: 370, second: 365 }, again: 372 };
    expect(exportFigures({ rows: 1_000_000, ms: 10_000 }, small, { ...plateau, tenth: { rows: 100_000, peak: 330 } })).toMatchObject({
      rows_per_second: 100_000,
      rss_growth_mb: 70,
      rss_growth_by_half_mb: { first: 70, second: 65 },
      rss_growth_again_mb: 72,
      tenth: { rows: 100_000, rss_growth_mb: 30 },
      flat_limit_mb: 86,
      met: true,
    });
    expect(exportFigures({ rows: 1_000_000, ms: 40_000 }, small, plateau).met).toBe(false); // 25,000 rows/s
    // Memory that grows with the rows: the second half well above the first.
    expect(exportFigures({ rows: 1_000_000, ms: 10_000 }, small, { before: 300, peak: 420, halves: { first: 360, second: 420 } }).met).toBe(false);
    // Without the halves, flat memory is not shown.
    expect(exportFigures({ rows: 1_000_000, ms: 10_000 }, small, { before: 300, peak: 320 }).met).toBe(false);
  });

  it('the table marks each read and counts those that meet the goal', () => {
    const table = formatTable(
      { 'inbox': readFigures(lat(5, 9), lat(4, 8)), 'agents page': readFigures(lat(50, 90), lat(4, 8)) },
      exportFigures({ rows: 100, ms: 1 }, { rows: 10, ms: 1 }, { before: 1, peak: 2 }),
      { before: 1, peak: 2, after: 1 },
    );
    expect(table).toMatch(/^inbox .* met$/m);
    expect(table).toMatch(/^agents page .* MISSED$/m);
    expect(table).toContain('reads meeting the goal: 1 of 2');
  });
});

describe('bench:scale seed', () => {
  it('--scale multiplies the counts of issue 46, keeping whole chains', () => {
    expect(bigOrg(1)).toMatchObject({ agents: 2_000, rules: 10_000, services: 100, actionsPerService: 100, calls: 200_000, decidedApprovals: 100_000, pendingApprovals: 5_000, auditRows: 1_000_000 });
    const quick = bigOrg(0.0001);
    expect(quick.agents).toBe(CHAIN_LENGTH);
    expect(quick.pendingApprovals).toBeGreaterThan(0);
  });

  it('names rows with version-4 uuids, the same for the same org and name', () => {
    const id = uuidOf('org', 'approval:7');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(uuidOf('org', 'approval:7')).toBe(id);
    expect(uuidOf('org', 'approval:8')).not.toBe(id);
  });
});
