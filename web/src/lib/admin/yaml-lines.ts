// Where a validation problem sits in the text being edited: the registry reports problems by JSON
// pointer (`/paths/~1items/get/x-gateway-risk`) and parse errors with "(line N, column M)"; the
// editor needs a line number to put the marker beside. Walks the parsed YAML (JSON is YAML too)
// down the pointer as far as it exists, so a missing key points at its closest existing parent.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';

/** `/a~1b/0` → ['a/b', '0'] (RFC 6901). */
export function pointerSegments(pointer: string): string[] {
  if (pointer === '' || pointer === '/') return [];
  return pointer.replace(/^\//, '').split('/').map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}

const keyText = (key: unknown): string | null => (isScalar(key) ? String(key.value) : typeof key === 'string' ? key : null);

/** 1-based line of `pointer` in `source`, or null when the text does not parse or the pointer is the whole document. */
export function lineOfPointer(source: string, pointer: string): number | null {
  const lines = new LineCounter();
  const doc = parseDocument(source, { lineCounter: lines, keepSourceTokens: false, prettyErrors: false });
  if (doc.errors.length > 0) return null;
  let node: unknown = doc.contents;
  let offset: number | null = null;
  for (const seg of pointerSegments(pointer)) {
    if (isMap(node)) {
      const pair = node.items.find((p) => keyText(p.key) === seg);
      if (!pair) break;
      const at = (pair.key as Node | null)?.range?.[0];
      if (at !== undefined) offset = at;
      node = pair.value;
    } else if (isSeq(node)) {
      const item = node.items[Number(seg)] as Node | undefined;
      if (!item || !/^\d+$/.test(seg)) break;
      if (item.range) offset = item.range[0];
      node = item;
    } else break;
  }
  return offset === null ? null : lines.linePos(offset).line;
}

/** The line a parse error names in its message, e.g. "… (line 3, column 7)". */
export function lineOfMessage(message: string): number | null {
  const m = /\(line (\d+), column \d+\)/.exec(message);
  return m ? Number(m[1]) : null;
}

export interface PlacedProblem {
  code: string;
  path: string;
  message: string;
  /** Null: about the whole document. */
  line: number | null;
}

export function placeProblems(source: string, problems: { code: string; path: string; message: string }[]): PlacedProblem[] {
  return problems.map((p) => ({ ...p, line: p.code === 'parse_error' ? lineOfMessage(p.message) : lineOfPointer(source, p.path) }));
}
