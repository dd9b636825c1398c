// Ranking for gateway_search. Names (instance, template, action) beat prose (summary,
// description); within each, exact word > prefix > substring. The costly part is done once per
// segment (buildSearchSegment: the rows of one service instance, which the registry keeps per
// compiled service): lower-casing and word splitting per row, and an inverted index of the rows'
// words (search-index.ts). A query then scores only the rows its words occur in, those holding the
// most of its words first, and keeps the best page as it goes: once the page is full of rows that
// match more words than the next group holds, that group and the rest cannot enter and are not
// scored. At most O(matching rows × log page), not O(every action of the org).

import { buildRunIndex, rowsByWordsHeld, type RunIndex } from './search-index.ts';
import { TopK } from './top-k.ts';
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

/** A row as the search scores it: also the lower-cased forms a whole-query phrase is compared with. */
export interface ScoredRow extends IndexedRow {
  /** `action` and `service.action`, lower-cased once here, not for every row a query matches. */
  phraseForms: readonly [string, string];
}

/** The rows of one service instance, ordered by (service, action), and the index of their words. */
export interface SearchSegment {
  readonly rows: readonly ScoredRow[];
  readonly index: RunIndex;
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

/** One row's names and prose, lower-cased and split, as tokenScore reads them. */
function indexRow(row: SearchRow): ScoredRow {
  const rawNames = [row.service, row.template, row.action].map((n) => n.toLowerCase());
  const names = [...new Set([...rawNames, ...rawNames.map((n) => n.replace(/[^\p{L}\p{N}]+/gu, ''))])];
  const prose = `${row.summary} ${row.description ?? ''}`;
  const action = row.action.toLowerCase();
  return {
    row,
    names,
    nameWords: [...new Set([row.service, row.template, row.action].flatMap(words))],
    text: prose.toLowerCase(),
    textWords: [...new Set(words(prose))],
    phraseForms: [action, `${row.service.toLowerCase()}.${action}`],
  };
}

/** Indexes rows for searching; the order (service, action) is stable, so ties and the empty query are too. */
export function buildSearchSegment(rows: readonly SearchRow[]): SearchSegment {
  const ordered = rows.map(indexRow).sort((a, b) => compare(a.row.service, b.row.service) || compare(a.row.action, b.row.action));
  return { rows: ordered, index: buildRunIndex(ordered.map((e) => [...e.names, ...e.nameWords, e.text, ...e.textWords])) };
}

/** A row as ranked: where it sits (segment, then position) breaks ties after (service, action). */
interface Ranked {
  entry: ScoredRow;
  score: number;
  matched: number;
  segment: number;
  position: number;
}

/**
 * The best `limit` rows of the segments for `query`, in the order one stable sort of all their rows
 * by (service, action) would rank them: rows matching more of the query words first, then by
 * score, then by that order.
 */
export function searchActions(segments: readonly SearchSegment[], query: string, limit: number): SearchHit[] {
  const max = Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : 0;
  const tokens = [...new Set(query.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((t) => t !== ''))];
  const best = new TopK<Ranked>(max, rank);
  if (tokens.length === 0) {
    // Every row matches: each segment is in order already, so it is read only while it improves the page.
    segments.forEach((segment, s) => {
      for (let position = 0; position < segment.rows.length; position++) {
        if (!best.offer({ entry: segment.rows[position]!, score: 0, matched: 0, segment: s, position })) break;
      }
    });
  } else {
    const phrase = query.trim().toLowerCase();
    const grouped = segments.map((segment) => rowsByWordsHeld(segment.index, tokens));
    // Rows holding `held` words match at most that many: once the page's last row matches more,
    // no row of this group or a smaller one can enter it.
    for (let held = tokens.length; held >= 1; held--) {
      const last = best.last();
      if (best.full() && (last === undefined || last.matched > held)) break;
      grouped.forEach((groups, s) => {
        const segment = segments[s]!;
        for (const position of groups[held - 1]!) {
          const entry = segment.rows[position]!;
          const { score, matched } = scoreRow(entry, tokens, phrase);
          if (matched > 0) best.offer({ entry, score, matched, segment: s, position });
        }
      });
    }
  }
  return best.items().map(({ entry, score }) => ({ row: entry.row, score }));
}

function rank(a: Ranked, b: Ranked): number {
  return (
    b.matched - a.matched ||
    b.score - a.score ||
    compare(a.entry.row.service, b.entry.row.service) ||
    compare(a.entry.row.action, b.entry.row.action) ||
    a.segment - b.segment ||
    a.position - b.position
  );
}

function scoreRow(entry: ScoredRow, tokens: readonly string[], phrase: string): { score: number; matched: number } {
  let score = 0;
  let matched = 0;
  for (const token of tokens) {
    const s = tokenScore(entry, token);
    if (s > 0) matched++;
    score += s;
  }
  if (matched === 0) return { score, matched };
  if (phrase === entry.phraseForms[0] || phrase === entry.phraseForms[1]) score += SCORE.phrase;
  return { score, matched };
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
