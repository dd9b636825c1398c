// The linear scan gateway_search answered with before its inverted index (core/registry/search.ts
// as of commit b6c9b9a), unchanged but for names: the oracle the indexed search's answers are
// compared with (test/unit/registry/search-index.test.ts). Scoring and order are the product's; only
// which rows get scored differs.
import type { IndexedRow, SearchHit, SearchRow } from '../../core/registry/search.ts';

export interface SearchIndex {
  readonly rows: readonly IndexedRow[];
}

/** All rows indexed as the scan did it, in the order given (the instances' rows one after another). */
export function scanIndexOf(rows: readonly SearchRow[]): SearchIndex {
  return searchIndexOf(rows.map(indexRow));
}

const SCORE = {
  nameExact: 100,
  nameWord: 80,
  namePrefix: 60,
  nameSubstring: 40,
  textWord: 20,
  textPrefix: 12,
  textSubstring: 6,
  phrase: 200,
} as const;

/** Splits camelCase and any non-alphanumeric run: `chat.postMessage` → chat, post, message. */
function words(text: string): string[] {
  return text
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

function indexRow(row: SearchRow): IndexedRow {
  const rawNames = [row.service, row.template, row.action].map((n) => n.toLowerCase());
  const names = [...new Set([...rawNames, ...rawNames.map((n) => n.replace(/[^\p{L}\p{N}]+/gu, ''))])];
  const prose = `${row.summary} ${row.description ?? ''}`;
  return {
    row,
    names,
    nameWords: [...new Set([row.service, row.template, row.action].flatMap(words))],
    text: prose.toLowerCase(),
    textWords: [...new Set(words(prose))],
  };
}

function searchIndexOf(rows: readonly IndexedRow[]): SearchIndex {
  return { rows: [...rows].sort((a, b) => compare(a.row.service, b.row.service) || compare(a.row.action, b.row.action)) };
}

/** Every row of `index` scored against the query: the scan the inverted index replaced. */
export function scanActions(index: SearchIndex, query: string, limit: number): SearchHit[] {
  const max = Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : 0;
  const tokens = [...new Set(query.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((t) => t !== ''))];
  if (tokens.length === 0) return index.rows.slice(0, max).map(({ row }) => ({ row, score: 0 }));
  const phrase = query.trim().toLowerCase();

  const scored: Array<{ hit: SearchHit; matched: number; order: number }> = [];
  index.rows.forEach((entry, order) => {
    let score = 0;
    let matched = 0;
    for (const token of tokens) {
      const s = tokenScore(entry, token);
      if (s > 0) matched++;
      score += s;
    }
    if (matched === 0) return;
    const action = entry.row.action.toLowerCase();
    if (phrase === action || phrase === `${entry.row.service.toLowerCase()}.${action}`) score += SCORE.phrase;
    scored.push({ hit: { row: entry.row, score }, matched, order });
  });
  // Rows matching more of the query words first, then by score, then stable index order.
  scored.sort((a, b) => b.matched - a.matched || b.hit.score - a.hit.score || a.order - b.order);
  return scored.slice(0, max).map((s) => s.hit);
}

function tokenScore(entry: IndexedRow, token: string): number {
  if (entry.names.includes(token)) return SCORE.nameExact;
  if (entry.nameWords.includes(token)) return SCORE.nameWord;
  if (entry.names.some((n) => n.startsWith(token)) || entry.nameWords.some((w) => w.startsWith(token))) return SCORE.namePrefix;
  if (entry.names.some((n) => n.includes(token))) return SCORE.nameSubstring;
  if (entry.textWords.includes(token)) return SCORE.textWord;
  if (entry.textWords.some((w) => w.startsWith(token))) return SCORE.textPrefix;
  if (entry.text.includes(token)) return SCORE.textSubstring;
  return 0;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
