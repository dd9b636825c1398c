// npm run bench:scale — the reads people make, on an org seeded to scale and on a small org in the
// same database (issue 46). One `gateway serve` with its embedded PostgreSQL and Temporal
// (bench/targets.ts); the two orgs are written into its database by bulk SQL
// (bench/support/scale-seed.ts), then each read is timed through the real HTTP API with the org
// admin's session, big and small one after the other: the inbox, approvals history (first page and
// a deep keyset page), "Mine", one approval and its blast radius, audit search (no filter, a deep
// page, and every filter of the audit page alone and combined, values that match nothing or
// little: test/support/audit-volume.ts), the agents and rules pages, the registry search behind
// gateway_search; then the audit export's rows/s with the gateway's RSS during it; then, in the
// first-start admin's org, a covered call with 10,000 rules on its chain against 10 (scale-rules.ts)
// and an approval's arrival on 500 open event streams (scale-streams.ts).
//   npm run bench:scale                       # the org of issue 46 (1,000,000 audit rows, …)
//   npm run bench:scale -- --scale 0.05       # a quick run (a minute or two)
//   npm run bench:scale -- --runs 50 --json   # the figures as one JSON object on stdout
//   npm run bench:scale -- --only blast,search  # only the reads whose name contains one of these (no export, rules, streams)
import os from 'node:os';
import { parseArgs } from 'node:util';
import { sql } from 'slonik';
import { z } from 'zod';
import { createDatabasePool, type DatabasePool } from '../server/db/pool.ts';
import { encodeIdentityCursor } from '../server/identities/cursor.ts';
import { volumeCases } from '../test/support/audit-volume.ts';
import { latency, round, type Latency } from './support/figures.ts';
import { memoryMb } from './support/proc.ts';
import { exportFigures, formatTable, readFigures, type ReadFigures } from './support/scale-report.ts';
import { benchAgent, rulesScaleOn, streamsScaleOn } from './support/bench-agent.ts';
import { describeRulesScale } from './support/scale-rules.ts';
import { describeStreams } from './support/scale-streams.ts';
import { bigOrg, seedOrg, SMALL_ORG, type SeededOrg } from '../test/support/scale-seed.ts';
import { startEmbeddedTarget, type BenchTarget } from './targets.ts';

const USAGE = `npm run bench:scale -- [--scale F] [--runs N] [--json] [--only T,…]
  --scale F   multiplies the big org's counts (default 1: 1,000,000 audit rows, 200,000 calls, …)
  --runs N    timed requests per read and org (default 100, big and small in turns), after 3 untimed ones
  --json      the figures as one JSON object on stdout
  --only T,…  only the reads whose name contains one of these (case-insensitive); skips the export, the rules and the streams`;

const { values: opts } = parseArgs({
  options: { scale: { type: 'string', default: '1' }, runs: { type: 'string', default: '100' }, json: { type: 'boolean', default: false }, only: { type: 'string' }, help: { type: 'boolean', default: false } },
});
const scale = Number(opts.scale);
const runs = Number(opts.runs);
if (opts.help || !(scale > 0 && scale <= 10) || !Number.isInteger(runs) || runs < 5) {
  (opts.help ? console.log : console.error)(USAGE);
  process.exit(opts.help ? 0 : 2);
}
const WARMUP = 3;
const log = (line: string) => process.stderr.write(line + '\n');

/** What one org's reads need: its admin's session and the rows the deep pages start from. */
interface OrgReader {
  seeded: SeededOrg;
  token: string;
  approvalsCursor: string;
  auditCursor: string;
  identitiesCursor: string;
  seededAt: Date;
}

interface Read {
  name: string;
  path: (o: OrgReader) => string;
}

const query = (q: Record<string, string | undefined>) =>
  new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => e[1] !== undefined)).toString();

/** Every read measured, by name; the path is built for each org. */
function reads(): Read[] {
  const auditCases = volumeCases('00000000-0000-0000-0000-000000000000', new Date()).filter((c) => c.visibleTo === 'org');
  return [
    // Pages both orgs fill (the small org has 20 open and 120 approvals in all), so the ratio is growth, not page size.
    { name: 'inbox (approvals to decide, 20)', path: () => '/v1/approvals?scope=actionable&limit=20' },
    { name: 'approvals history, first page (100)', path: () => '/v1/approvals?limit=100' },
    { name: 'approvals history, deep keyset page (50)', path: (o) => `/v1/approvals?limit=50&cursor=${o.approvalsCursor}` },
    { name: 'approvals mine (agents page)', path: () => '/v1/approvals?scope=mine&limit=100' },
    { name: 'approval page', path: (o) => `/v1/approvals/${o.seeded.pendingApprovalId}` },
    { name: 'approval blast radius (tier 1)', path: (o) => `/v1/approvals/${o.seeded.pendingApprovalId}/blast-radius?tier=1` },
    { name: 'audit, no filter (50)', path: () => '/v1/audit?limit=50' },
    { name: 'audit, deep keyset page', path: (o) => `/v1/audit?limit=50&cursor=${o.auditCursor}` },
    // The audit page's filters: the cases' values are rebuilt for each org (ids and times are the org's).
    ...auditCases.map((c) => ({
      name: `audit: ${c.name}`,
      path: (o: OrgReader) => {
        const mine = volumeCases(o.seeded.orgId, o.seededAt).find((x) => x.name === c.name)!;
        return `/v1/audit?${query({ ...mine.filter, limit: '50' })}`;
      },
    })),
    { name: 'agents page (identities)', path: () => '/v1/identities' },
    { name: 'agents page, deep keyset page', path: (o) => `/v1/identities?cursor=${o.identitiesCursor}` },
    { name: 'rules page (an agent’s rules)', path: (o) => `/v1/identities/${o.seeded.agentId}/rules` },
    { name: 'gateway_search (registry search)', path: () => `/v1/search?${query({ q: 'create invoice', limit: '20' })}` },
  ];
}

async function request(base: string, token: string, path: string): Promise<void> {
  const res = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
  const body = await res.arrayBuffer();
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${Buffer.from(body).toString('utf8').slice(0, 300)}`);
}

/**
 * One read on both orgs: warm-up requests, then big and small in turns, so a burst of load on the
 * shared machine falls on both sides of the ratio alike.
 */
async function timeReadOnBoth(base: string, orgs: { big: OrgReader; small: OrgReader }, read: Read): Promise<{ big: Latency; small: Latency }> {
  const paths = { big: read.path(orgs.big), small: read.path(orgs.small) };
  for (let i = 0; i < WARMUP; i++) {
    await request(base, orgs.big.token, paths.big);
    await request(base, orgs.small.token, paths.small);
  }
  const samples = { big: [] as number[], small: [] as number[] };
  for (let i = 0; i < runs; i++) {
    // Big first, then small first: neither always meets what the other's request left behind.
    for (const side of i % 2 === 0 ? (['big', 'small'] as const) : (['small', 'big'] as const)) {
      const t = performance.now();
      await request(base, orgs[side].token, paths[side]);
      samples[side].push(performance.now() - t);
    }
  }
  return { big: latency(samples.big), small: latency(samples.small) };
}

/** The org's audit export (JSON Lines; all of it, or the entries `since`), counted as it streams. */
async function timeExport(base: string, o: OrgReader, since?: Date): Promise<{ rows: number; ms: number }> {
  const t = performance.now();
  const query = since ? `&since=${encodeURIComponent(since.toISOString())}` : '';
  const res = await fetch(`${base}/v1/audit/export?format=jsonl${query}`, { headers: { authorization: `Bearer ${o.token}` } });
  if (!res.ok || !res.body) throw new Error(`export: ${res.status}`);
  let rows = 0;
  // Counted with indexOf (native): a loop over every byte in JS cost the client as much as the export.
  for await (const chunk of res.body) {
    const bytes = Buffer.from((chunk as Uint8Array).buffer, (chunk as Uint8Array).byteOffset, (chunk as Uint8Array).byteLength);
    for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) rows++;
  }
  return { rows, ms: performance.now() - t };
}

/**
 * Samples the gateway's RSS every 20 ms while `fn` runs: the highest seen, and the highest in each
 * half of the run (memory that grows with the work peaks later and higher in the second half).
 */
async function peakRss<T>(pid: number, fn: () => Promise<T>): Promise<{ value: T; peak: number; halves: { first: number; second: number } }> {
  const started = performance.now();
  const samples: [number, number][] = [[started, memoryMb(pid).rss]];
  const timer = setInterval(() => samples.push([performance.now(), memoryMb(pid).rss]), 20);
  try {
    const value = await fn();
    const ended = performance.now();
    samples.push([ended, memoryMb(pid).rss]);
    const middle = (started + ended) / 2;
    const max = (xs: [number, number][]) => Math.max(...xs.map(([, rss]) => rss));
    return { value, peak: max(samples), halves: { first: max(samples.filter(([at]) => at <= middle)), second: max(samples.filter(([at]) => at >= middle)) } };
  } finally {
    clearInterval(timer);
  }
}

async function signIn(base: string, seeded: SeededOrg): Promise<string> {
  const res = await fetch(`${base}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: seeded.admin.email, password: seeded.admin.password }) });
  if (!res.ok) throw new Error(`sign-in of ${seeded.admin.email}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

/** The org's reader: a session and cursors halfway down its approvals, its audit log and its identities. */
async function readerOf(pool: DatabasePool, base: string, seeded: SeededOrg, seededAt: Date): Promise<OrgReader> {
  const mid = await pool.one(sql.type(z.object({ created_at: z.date(), id: z.string() }))`
    SELECT created_at, id FROM approvals WHERE org_id = ${seeded.orgId} ORDER BY created_at DESC, id DESC
    OFFSET ${Math.floor((seeded.shape.decidedApprovals + seeded.shape.pendingApprovals) / 2)} LIMIT 1`);
  const auditMid = await pool.oneFirst(sql.type(z.object({ id: z.coerce.number() }))`
    SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY id) AS id FROM audit_log WHERE org_id = ${seeded.orgId}`);
  const identityMid = await pool.one(sql.type(z.object({ at_micros: z.string(), id: z.string() }))`
    SELECT (extract(epoch FROM created_at) * 1000000)::bigint::text AS at_micros, id FROM identities WHERE org_id = ${seeded.orgId}
    ORDER BY created_at, id OFFSET ${Math.floor(seeded.shape.agents / 2)} LIMIT 1`);
  return {
    seeded,
    token: await signIn(base, seeded),
    // The cursor forms of the API (server/approvals/service.ts, server/audit/service.ts).
    approvalsCursor: Buffer.from(`${mid.created_at.toISOString()}|${mid.id}`).toString('base64url'),
    auditCursor: Buffer.from(`a1:${auditMid}`).toString('base64url'),
    identitiesCursor: encodeIdentityCursor(identityMid),
    seededAt,
  };
}

async function main(): Promise<void> {
  const target: BenchTarget = await startEmbeddedTarget();
  const base = target.apiUrls[0]!;
  const gatewayPid = target.processes.find((p) => p.name === 'gateway')!.pid;
  const pool = await createDatabasePool(target.databaseUrl, { statementTimeoutMs: 1_800_000 });
  try {
    const shape = bigOrg(scale);
    log(`seeding the big org (×${scale}: ${shape.auditRows.toLocaleString('en')} audit rows, ${shape.calls.toLocaleString('en')} calls, ${shape.agents} agents, ${shape.rules} rules, ${shape.services}×${shape.actionsPerService} actions) and the small one…`);
    const seedStarted = performance.now();
    const small = await seedOrg(pool, 'small', SMALL_ORG);
    const big = await seedOrg(pool, 'big', shape);
    // What autovacuum does soon after such a load: statistics for the planner, the visibility map.
    await pool.query(sql.unsafe`VACUUM ANALYZE`);
    const seedSeconds = round((performance.now() - seedStarted) / 1000, 1);
    log(`seeded in ${seedSeconds} s`);
    const seededAt = new Date();
    const orgs = { big: await readerOf(pool, base, big, seededAt), small: await readerOf(pool, base, small, seededAt) };

    const rssBefore = memoryMb(gatewayPid).rss;
    const figures: Record<string, ReadFigures> = {};
    const { peak: readsPeak } = await peakRss(gatewayPid, async () => {
      const only = opts.only?.toLowerCase().split(',');
      for (const read of reads().filter((r) => only === undefined || only.some((o) => r.name.toLowerCase().includes(o)))) {
        const { big: b, small: s } = await timeReadOnBoth(base, orgs, read);
        figures[read.name] = readFigures(b, s);
        log(`${read.name}: p50 ${b.p50} / p95 ${b.p95} ms (small ${s.p50} / ${s.p95} ms)`);
      }
    });
    if (opts.only !== undefined) {
      // A focused run: the reads' lines above are its output.
      if (opts.json) console.log(JSON.stringify({ scale, runs, load_average: round(os.loadavg()[0]!, 2), reads: figures }, null, 2));
      return;
    }
    const smallExport = await timeExport(base, orgs.small);
    // A tenth of it first (its newest entries), from the same start: how far V8 sizes the heap up
    // for a short export. Flat memory is judged on the whole export's halves (scale-report.ts).
    const tenthSince = await pool.oneFirst(sql.type(z.object({ at: z.date() }))`
      SELECT at FROM audit_log WHERE org_id = ${big.orgId} ORDER BY id DESC OFFSET ${Math.floor(big.shape.auditRows / 10)} LIMIT 1`);
    const exportStartRss = memoryMb(gatewayPid).rss;
    const { value: tenthExport, peak: tenthPeak } = await peakRss(gatewayPid, () => timeExport(base, orgs.big, tenthSince));
    const { value: bigExport, peak: exportPeak, halves: exportHalves } = await peakRss(gatewayPid, () => timeExport(base, orgs.big));
    // The same export again: memory that the work accumulates would rise past the first's peak;
    // a heap V8 sized up on the first stays where it is.
    const { peak: againPeak } = await peakRss(gatewayPid, () => timeExport(base, orgs.big));
    const rss = { before: round(rssBefore, 1), peak: round(Math.max(readsPeak, exportPeak), 1), after: round(memoryMb(gatewayPid).rss, 1) };
    const exp = exportFigures(bigExport, smallExport, { before: exportStartRss, peak: exportPeak, halves: exportHalves, again: againPeak, tenth: { rows: tenthExport.rows, peak: tenthPeak } });
    // The permission check with 10,000 rules on the caller's chain against 10, and an approval's
    // arrival on 500 open dashboards: in the first-start admin's org of this same gateway.
    const agent = await benchAgent(target);
    const [coveredCall, streams] = await (async () => {
      try {
        log('the covered call with 10 and with 10,000 rules on its chain…');
        const rules = await rulesScaleOn(target, agent);
        log('an approval arriving on 500 open event streams…');
        return [rules, await streamsScaleOn(target, agent)] as const;
      } finally {
        await agent.close();
      }
    })();

    if (opts.json) {
      console.log(JSON.stringify({ scale, runs, load_average: round(os.loadavg()[0]!, 2), reads: figures, export: exp, covered_call: coveredCall, streams, rss_mb: rss, seed: { seconds: seedSeconds, big: { ...big.shape, seconds: big.seconds }, small: { ...small.shape, seconds: small.seconds } } }, null, 2));
    } else {
      console.log(`\nbench:scale ×${scale}: big org ${shape.auditRows.toLocaleString('en')} audit rows, ${shape.calls.toLocaleString('en')} calls, ` +
        `${shape.pendingApprovals.toLocaleString('en')} pending + ${shape.decidedApprovals.toLocaleString('en')} decided approvals, ${shape.agents} agents, ` +
        `${shape.rules} rules, ${shape.services}×${shape.actionsPerService} actions; small org ${SMALL_ORG.auditRows} audit rows, ${SMALL_ORG.calls} calls. ` +
        `ms over ${runs} requests each; load average ${os.loadavg()[0]!.toFixed(1)}`);
      console.log(formatTable(figures, exp, rss));
      console.log(`\n${describeRulesScale(coveredCall)}\n\n${describeStreams(streams)}`);
    }
  } finally {
    await pool.end();
    const shutdown = await target.stop();
    if (!shutdown.clean) log(`the gateway did not stop cleanly: ${JSON.stringify(shutdown)}`);
  }
}

await main();
