// Ranking for gateway_search. Names (instance, template, action) beat prose (summary,
// description); within each, exact word > prefix > substring. Lower-casing and word splitting
// happen once per row (indexRow), which a caller keeps between queries: the registry keeps them per
// compiled service, so a search over a catalog of thousands of actions only scores.

import type { Risk } from './types.ts';

export interface SearchRow {
  /** Instance name callers pass as `service` to gateway_call. */
  service: string;
  /** Template (service definition) key. */
  template: string;
  action: string;
  summary: string;
  description?: string;
  risk: Risk;
  authStatus: string;
}

export interface SearchHit {
  row: SearchRow;
  score: number;
}

export interface IndexedRow {
  row: SearchRow;
  /** Lower-case names plus their separator-free forms (`chat.postmessage`, `chatpostmessage`). */
  names: string[];
  nameWords: string[];
  text: string;
  textWords: string[];
}

export interface SearchIndex {
  readonly rows: readonly IndexedRow[];
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
export function words(text: string): string[] {
  return text
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

/** One row's names and prose, lower-cased and split: the costly part, which a caller may keep per row. */
export function indexRow(row: SearchRow): IndexedRow {
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

/** Rows indexed already (indexRow), ordered by (service, action), so ties and the empty query are stable. */
export function searchIndexOf(rows: readonly IndexedRow[]): SearchIndex {
  return { rows: [...rows].sort((a, b) => compare(a.row.service, b.row.service) || compare(a.row.action, b.row.action)) };
}

export function buildSearchIndex(rows: readonly SearchRow[]): SearchIndex {
  return searchIndexOf(rows.map(indexRow));
}

export function searchActions(index: SearchIndex, query: string, limit: number): SearchHit[] {
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
