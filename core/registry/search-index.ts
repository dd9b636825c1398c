// The inverted index behind gateway_search: which rows of a segment a query word can match, found
// without reading the others. A query word holds letters and digits only, so wherever it occurs
// in a row's names or prose it lies within one run of letters and digits of that string. Each
// distinct run of the segment (its vocabulary) is filed under every piece of one to three UTF-16
// code units it contains (the units String.includes compares): a query word of up to three units is
// itself such a piece; a longer one is looked for among the runs holding its rarest three-unit
// piece, each checked with includes. The rows found are a superset of the rows the word scores on,
// never fewer, so the ranking that follows sees every match; and how many of a query's words a
// row holds is never below how many it matches, which lets a query rank its rows in groups.

const SEPARATORS = /[^\p{L}\p{N}]+/u;
const PIECE = 3;

export interface RunIndex {
  /** How many rows were indexed (positions 0 … rowCount − 1). */
  readonly rowCount: number;
  /** The distinct letter-and-digit runs of the rows' strings. */
  readonly runs: readonly string[];
  /** Run id → ascending positions of the rows holding it. */
  readonly rowsOfRun: readonly (readonly number[])[];
  /** Piece of one to three code units → ascending ids of the runs containing it. */
  readonly runsOfPiece: ReadonlyMap<string, readonly number[]>;
}

/** `rows[i]`: the strings row i is searched in (lower-cased already). */
export function buildRunIndex(rows: readonly (readonly string[])[]): RunIndex {
  const idOf = new Map<string, number>();
  const runs: string[] = [];
  const rowsOfRun: number[][] = [];
  rows.forEach((strings, row) => {
    for (const text of strings) {
      for (const run of text.split(SEPARATORS)) {
        if (run === '') continue;
        let id = idOf.get(run);
        if (id === undefined) {
          id = runs.length;
          idOf.set(run, id);
          runs.push(run);
          rowsOfRun.push([]);
        }
        appendOnce(rowsOfRun[id]!, row);
      }
    }
  });
  const runsOfPiece = new Map<string, number[]>();
  runs.forEach((run, id) => {
    for (let length = 1; length <= PIECE; length++) {
      for (let start = 0; start + length <= run.length; start++) {
        const piece = run.slice(start, start + length);
        let ids = runsOfPiece.get(piece);
        if (!ids) runsOfPiece.set(piece, (ids = []));
        appendOnce(ids, id);
      }
    }
  });
  return { rowCount: rows.length, runs, rowsOfRun, runsOfPiece };
}

/**
 * Every row with a run containing one of `words` (letters and digits only), grouped by how many of
 * the words it holds: `groups[k]` lists, ascending, the positions of the rows holding k + 1 of them.
 * A row holds at least the words it matches, so its group bounds its rank (search.ts).
 */
export function rowsByWordsHeld(index: RunIndex, words: readonly string[]): Uint32Array[] {
  const held = new Uint32Array(index.rowCount);
  /** The last word (+ 1) each row was counted for: a row in several runs of one word counts once. */
  const countedFor = new Uint32Array(index.rowCount);
  const rows: number[] = [];
  words.forEach((word, w) => {
    for (const id of runsContaining(index, word)) {
      for (const row of index.rowsOfRun[id]!) {
        if (countedFor[row] === w + 1) continue;
        countedFor[row] = w + 1;
        if (held[row] === 0) rows.push(row);
        held[row] = held[row]! + 1;
      }
    }
  });
  const sizes = new Uint32Array(words.length);
  for (const row of rows) sizes[held[row]! - 1] = sizes[held[row]! - 1]! + 1;
  const groups = Array.from(sizes, (n) => new Uint32Array(n));
  const filled = new Uint32Array(words.length);
  for (const row of rows) {
    const g = held[row]! - 1;
    groups[g]![filled[g]!] = row;
    filled[g] = filled[g]! + 1;
  }
  for (const group of groups) group.sort(); // ascending: equal-ranked rows then reach the page in order, and are refused at once
  return groups;
}

function runsContaining(index: RunIndex, word: string): readonly number[] {
  if (word.length <= PIECE) return index.runsOfPiece.get(word) ?? [];
  let rarest: readonly number[] | undefined;
  for (let start = 0; start + PIECE <= word.length; start++) {
    const ids = index.runsOfPiece.get(word.slice(start, start + PIECE));
    if (!ids) return []; // a piece no run has: no run has the word
    if (!rarest || ids.length < rarest.length) rarest = ids;
  }
  return rarest!.filter((id) => index.runs[id]!.includes(word));
}

/** Ids arrive in ascending order; a repeat is the last one added. */
function appendOnce(ids: number[], id: number): void {
  if (ids[ids.length - 1] !== id) ids.push(id);
}
