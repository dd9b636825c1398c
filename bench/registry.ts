// Registry benchmark: `node bench/registry.ts`.
// 1. Load-and-compile of every file under services/: median of a few runs per file and for the
//    whole folder (goal < 300 ms), plus the first, cold run for reference.
// 2. gateway_search latency over a generated index of 1,000 actions. Goal: p50 < 2 ms.

import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { buildSearchSegment, searchActions, type SearchRow } from '../core/registry/search.ts';
import { loadServiceDirectories, loadServiceDocument } from '../server/registry/loader.ts';
import { validDoc } from '../test/unit/registry/fixtures.ts';

const RUNS = 5;
const servicesDir = fileURLToPath(new URL('../services/', import.meta.url));

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] ?? 0;
}
function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? 0;
}
const ms = (n: number): string => `${n.toFixed(2)} ms`;

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await fn();
  return [value, performance.now() - start];
}

async function benchLoading(): Promise<void> {
  const files = (await readdir(servicesDir).catch(() => [] as string[])).filter((f) => /\.ya?ml$/i.test(f)).sort();
  const errors: string[] = [];
  const logger = { error: (_obj: object, msg: string) => void errors.push(msg) };

  const [cold, coldMs] = await timed(() => loadServiceDirectories([servicesDir], logger));
  const warm: number[] = [];
  for (let i = 0; i < RUNS; i++) warm.push((await timed(() => loadServiceDirectories([servicesDir], { error: () => {} })))[1]);

  console.log(`services/: ${files.length} file(s), ${cold.services.length} loaded, ${cold.errors.length} skipped`);
  for (const line of errors) console.log(`  ${line}`);
  for (const file of files) {
    const text = await readFile(path.join(servicesDir, file), 'utf8');
    const times: number[] = [];
    let ok = false;
    for (let i = 0; i < RUNS; i++) {
      const [result, t] = await timed(() => loadServiceDocument(text, file));
      times.push(t);
      ok = result.ok;
    }
    console.log(`  ${file.padEnd(32)} ${ms(median(times)).padStart(10)}${ok ? '' : '  (invalid)'}`);
  }
  const fixture = [];
  for (let i = 0; i < RUNS; i++) fixture.push((await timed(() => loadServiceDocument(validDoc(), 'fixture')))[1]);
  console.log(`  ${'(test fixture, in memory)'.padEnd(32)} ${ms(median(fixture)).padStart(10)}`);
  const warmMedian = median(warm);
  // The cold run also pays one-time costs: the OpenAPI 3.1 meta-schema compile (~110 ms), the
  // jq wasm instance and JIT warm-up of the YAML parser.
  console.log(`load+compile all: median of ${RUNS} runs ${ms(warmMedian)} (goal < 300 ms: ${warmMedian < 300 ? 'met' : 'MISSED'}); first (cold) run ${ms(coldMs)}`);
}

function generatedRows(count: number): SearchRow[] {
  const verbs = ['list', 'get', 'create', 'update', 'delete', 'search', 'send', 'archive', 'post', 'download'];
  const nouns = ['message', 'channel', 'issue', 'repo', 'file', 'user', 'invoice', 'ticket', 'event', 'contact', 'order', 'page'];
  const rows: SearchRow[] = [];
  for (let i = 0; rows.length < count; i++) {
    const service = `svc${Math.floor(i / 20)}-${nouns[i % nouns.length]}`;
    const verb = verbs[(i * 7) % verbs.length] as string;
    const noun = nouns[(i * 5) % nouns.length] as string;
    rows.push({
      service,
      template: service.split('-')[0] as string,
      action: `${noun}s.${verb}${noun[0]?.toUpperCase()}${noun.slice(1)}${i}`,
      summary: `${verb[0]?.toUpperCase()}${verb.slice(1)} a ${noun} in {workspace}[ for {user}]`,
      description: `Calls the ${service} API to ${verb} ${noun}s; returns the ${noun} record.`,
      risk: verb === 'delete' ? 'delete' : verb === 'list' || verb === 'get' ? 'read' : 'write',
      authStatus: i % 3 ? 'connected' : 'needs_auth',
    });
  }
  return rows;
}

function benchSearch(): void {
  const rows = generatedRows(1000);
  const buildStart = performance.now();
  // One segment per service, as the registry keeps them (server/registry/service.ts).
  const byService = Map.groupBy(rows, (r) => r.service);
  const index = [...byService.values()].map(buildSearchSegment);
  const buildMs = performance.now() - buildStart;
  const queries = ['', 'message', 'send message', 'svc3', 'chan', 'delete issue', 'inv', 'repos.create', 'workspace user', 'zzz', 'get contact record', 'ord'];
  for (let i = 0; i < 200; i++) searchActions(index, queries[i % queries.length] as string, 20); // warm up
  const times: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const start = performance.now();
    searchActions(index, queries[i % queries.length] as string, 20);
    times.push(performance.now() - start);
  }
  const p50 = percentile(times, 50);
  console.log(`search over ${rows.length} actions: index build ${ms(buildMs)}, p50 ${ms(p50)}, p95 ${ms(percentile(times, 95))}  (goal p50 < 2 ms: ${p50 < 2 ? 'met' : 'MISSED'})`);
}

await benchLoading();
benchSearch();
