import { describe, expect, it } from 'vitest';
import { buildSearchSegment, searchActions, type SearchHit, type SearchRow, type SearchSegment } from '../../../core/registry/search.ts';
import { TopK } from '../../../core/registry/top-k.ts';
import { generatedCatalog, generatedQueries } from '../../support/search-catalog.ts';
import { scanActions, scanIndexOf, type SearchIndex } from '../../support/search-reference.ts';

// 60 instances of 50 actions: 3,000 rows, as the registry keeps them (one segment per instance).
const catalog = generatedCatalog({ services: 60, actionsPerService: 50, seed: 46 });
const allRows = catalog.flat();
const segments = catalog.map(buildSearchSegment);
const scan = scanIndexOf(allRows);
const idOf = new Map<SearchRow, number>(allRows.map((r, i) => [r, i]));
const answer = (hits: readonly SearchHit[]) => hits.map((h) => `${idOf.get(h.row)}:${h.score}`);

/** The rows' arrays behind a proxy counting which rows are read: the work a query does. */
function counting<T extends { rows: readonly unknown[] }>(parts: readonly T[]): { parts: T[]; reads: () => number } {
  let reads = 0;
  const wrapped = parts.map((p) => ({
    ...p,
    rows: new Proxy(p.rows, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    }),
  }));
  return { parts: wrapped, reads: () => reads };
}

describe('indexed search', () => {
  it('answers every query as the scan over all rows did: the same rows, scores and order, at every page size', () => {
    const queries = generatedQueries(catalog, 1000, 7);
    const mismatches: string[] = [];
    const sizes = { none: 0, few: 0, many: 0 };
    for (const q of queries) {
      const expected = answer(scanActions(scan, q, allRows.length));
      if (expected.length === 0) sizes.none++;
      else if (expected.length <= 20) sizes.few++;
      else sizes.many++;
      for (const limit of [1, 7, 20, 100, allRows.length]) {
        const got = answer(searchActions(segments, q, limit));
        if (got.join() !== expected.slice(0, limit).join()) mismatches.push(`${JSON.stringify(q)} limit ${limit}: ${got.slice(0, 5).join()} ≠ ${expected.slice(0, 5).join()}`);
      }
    }
    expect(mismatches.slice(0, 10)).toEqual([]);
    // The queries reach every kind of answer: none, a page or less, more than a page.
    expect(sizes.none).toBeGreaterThan(50);
    expect(sizes.few).toBeGreaterThan(50);
    expect(sizes.many).toBeGreaterThan(50);
  }, 120_000); // a thousand scans of every row: seconds on a busy machine

  it('honours limits the scan honoured: zero, fractions and non-numbers', () => {
    for (const limit of [0, -3, 2.7, Number.NaN, Number.POSITIVE_INFINITY]) {
      for (const q of ['', 'issue', 'σ']) expect(answer(searchActions(segments, q, limit)), `${q} ${limit}`).toEqual(answer(scanActions(scan, q, limit)));
    }
  });

  it('reads only the rows a query occurs in (of several words, those holding the most first), and only a page for the empty query, where the scan read every row', () => {
    const indexed = counting<SearchSegment>(segments);
    const scanned = counting<SearchIndex>([scan]);
    const readsFor = (q: string, limit: number) => {
      const before = indexed.reads();
      searchActions(indexed.parts, q, limit);
      return indexed.reads() - before;
    };

    scanActions(scanned.parts[0]!, 'invoice', 20);
    expect(scanned.reads()).toBe(allRows.length); // the instrument sees the scan's O(actions)

    for (const q of ['invoice', 'straße', 'createinvoice', 'svc12', 'zzqx', '作成']) {
      const matches = scanActions(scan, q, allRows.length).length;
      expect(readsFor(q, 20), q).toBe(matches);
      expect(matches, q).toBeLessThan(allRows.length / 4);
    }
    // Several words: the rows holding all of them first; when they fill the page, the rows holding
    // fewer cannot enter it and are not read.
    const holding = (q: string, n: number) =>
      allRows.filter((r) => q.split(' ').filter((w) => `${r.service} ${r.template} ${r.action} ${r.summary} ${r.description ?? ''}`.toLowerCase().includes(w)).length >= n).length;
    for (const q of ['refund order', 'create invoice']) {
      const hits = scanActions(scan, q, allRows.length);
      const both = holding(q, 2);
      expect(both, q).toBeGreaterThanOrEqual(5);
      expect(hits.length, q).toBeGreaterThan(2 * both);
      expect(readsFor(q, 5), q).toBe(both);
      // A page larger than they fill reads the next group too: every row that matches.
      expect(readsFor(q, both + 1), q).toBe(hits.length);
    }
    // Three words, one of them in every row: a page needs only the rows holding two or three.
    const q = 'list invoices workspace';
    expect(scanActions(scan, q, allRows.length).length).toBe(allRows.length);
    // (The index counts what a word is held in as the rows' lower-cased forms spell it: a Greek
    // sigma can make that a row or two more than this plain check finds.)
    const reads = readsFor(q, holding(q, 3) + 1);
    expect(reads).toBeGreaterThanOrEqual(holding(q, 2));
    expect(reads).toBeLessThanOrEqual(holding(q, 2) + 5);
    expect(reads).toBeLessThan(allRows.length / 4);
    // The empty query: a page, plus one row per instance to learn it adds nothing.
    expect(readsFor('', 20)).toBeLessThanOrEqual(20 + segments.length);
  });
});

describe('TopK', () => {
  it('keeps the best items in order, equal ones in the order offered, and refuses what cannot enter', () => {
    const top = new TopK<[number, string]>(3, (a, b) => a[0] - b[0]);
    expect(top.offer([5, 'a'])).toBe(true);
    expect(top.offer([1, 'b'])).toBe(true);
    expect(top.offer([5, 'c'])).toBe(true);
    expect(top.offer([5, 'd'])).toBe(false); // ties the worst kept: offered later, so ranked after it
    expect(top.offer([2, 'e'])).toBe(true);
    expect(top.items()).toEqual([
      [1, 'b'],
      [2, 'e'],
      [5, 'a'],
    ]);
    expect(new TopK<number>(0, (a, b) => a - b).offer(1)).toBe(false);
  });
});
