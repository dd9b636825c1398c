// npm run bench:search — gateway_search's in-memory part on the catalogs of bench:scale (issue 46):
// the big org's 100 services × 100 actions against the small org's 5 × 20, built from the same
// documents the scale seeder stores (test/support/scale-seed.ts) and compiled by the loader. Times
// the indexed search (core/registry/search.ts) and, beside it, the scan over every row it replaced
// (test/support/search-reference.ts), each as big/small ratio. The HTTP read with the registry's
// database reads around it is bench:scale's `gateway_search (registry search)`.
//   npm run bench:search [-- --scale F]     # F multiplies the big org's services (default 1)
import { parseArgs } from 'node:util';
import { buildSearchSegment, searchActions, type SearchRow } from '../core/registry/search.ts';
import { plainSummary } from '../core/registry/summary.ts';
import { loadServiceDocument } from '../server/registry/loader.ts';
import { enabledActions } from '../server/registry/views.ts';
import { bigOrg, serviceDocument, SMALL_ORG } from '../test/support/scale-seed.ts';
import { scanActions, scanIndexOf } from '../test/support/search-reference.ts';
import { latency, round } from './support/figures.ts';

const { values: opts } = parseArgs({ options: { scale: { type: 'string', default: '1' } } });
const RUNS = 2000;
const QUERIES = ['create invoice', 'invoice', 'archive customer report', 'list', 'svc', 'update_ticket_17', 'zzqx', ''];

async function catalog(services: number, actions: number): Promise<SearchRow[][]> {
  const out: SearchRow[][] = [];
  for (let n = 0; n < services; n++) {
    const result = await loadServiceDocument(serviceDocument(n, actions), `bench:${n}`);
    if (!result.ok) throw new Error(`service ${n}: ${JSON.stringify(result.problems[0])}`);
    const service = result.service;
    out.push(
      enabledActions(service).map((a) => ({
        service: service.key,
        template: service.key,
        action: a.key,
        summary: plainSummary(a.summary),
        ...(a.description ? { description: a.description } : {}),
        risk: a.risk,
        authStatus: 'needs_secret',
      })),
    );
  }
  return out;
}

function time(search: (q: string) => unknown) {
  for (let i = 0; i < 200; i++) search(QUERIES[i % QUERIES.length]!); // warm up
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    search(QUERIES[i % QUERIES.length]!);
    samples.push(performance.now() - t);
  }
  return latency(samples);
}

const big = bigOrg(Number(opts.scale));
const orgs = {
  big: await catalog(big.services, big.actionsPerService),
  small: await catalog(SMALL_ORG.services, SMALL_ORG.actionsPerService),
};
const figures = Object.fromEntries(
  (['big', 'small'] as const).map((side) => {
    const segments = orgs[side].map(buildSearchSegment);
    const scan = scanIndexOf(orgs[side].flat());
    return [side, { actions: orgs[side].flat().length, indexed: time((q) => searchActions(segments, q, 20)), scan: time((q) => scanActions(scan, q, 20)) }];
  }),
) as Record<'big' | 'small', { actions: number; indexed: ReturnType<typeof latency>; scan: ReturnType<typeof latency> }>;

console.log(`gateway_search in memory, ${RUNS} queries of ${QUERIES.length} kinds, page 20: big ${figures.big.actions} actions, small ${figures.small.actions}`);
for (const kind of ['scan', 'indexed'] as const) {
  const b = figures.big[kind];
  const s = figures.small[kind];
  console.log(
    `  ${kind.padEnd(8)} big p50 ${b.p50} / p95 ${b.p95} ms, small p50 ${s.p50} / p95 ${s.p95} ms, p95 ratio ${round(b.p95 / s.p95)}× (p50 ${round(b.p50 / s.p50)}×)`,
  );
}
