// Text PostgreSQL can store: no NUL character (text and jsonb refuse it) and no lone UTF-16
// surrogate (not valid Unicode; jsonb refuses its escape, and UTF-8 cannot encode it).

export function isStorableText(s: string): boolean {
  return !s.includes('\u0000') && s.isWellFormed();
}

/** How deeply JSON input may nest (objects and arrays); deeper input is refused before anything reads it. */
export const MAX_JSON_DEPTH = 64;

export interface JsonProblem {
  problem: 'unstorable' | 'too_deep';
  /** Where (`a.b.0`); a key that is itself unstorable is shown with `?` for its bad characters. */
  path: string;
}

interface Frame {
  value: unknown;
  key: string | null;
  parent: Frame | null;
  depth: number;
  badKey: boolean;
}

function pathOf(f: Frame | null): string {
  const parts: string[] = [];
  for (let x = f; x && x.key !== null; x = x.parent) parts.push(x.key);
  return parts.reverse().join('.');
}

/**
 * The first problem in a JSON-like value, walked iteratively (no recursion, no path copies, so
 * hostile nesting costs linear time and no stack): a string or key that is not storable text, or
 * containers nested deeper than `maxDepth`. Undefined when there is none.
 */
export function findJsonProblem(value: unknown, maxDepth = MAX_JSON_DEPTH): JsonProblem | undefined {
  const stack: Frame[] = [{ value, key: null, parent: null, depth: 0, badKey: false }];
  while (stack.length > 0) {
    const f = stack.pop()!;
    if (f.badKey) return { problem: 'unstorable', path: pathOf(f) };
    const v = f.value;
    if (typeof v === 'string') {
      if (!isStorableText(v)) return { problem: 'unstorable', path: pathOf(f) };
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (f.depth >= maxDepth) return { problem: 'too_deep', path: pathOf(f) };
    const children: Frame[] = Array.isArray(v)
      ? v.map((c, i) => ({ value: c, key: String(i), parent: f, depth: f.depth + 1, badKey: false }))
      : Object.entries(v).map(([k, c]) => {
          const badKey = !isStorableText(k);
          return { value: c, key: badKey ? [...k].map((ch) => (isStorableText(ch) ? ch : '?')).join('') : k, parent: f, depth: f.depth + 1, badKey };
        });
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return undefined;
}

/**
 * The path (`a.b.0`) of the first string — a value or an object key — in `value` that is not
 * storable text, or undefined when there is none (input nested deeper than MAX_JSON_DEPTH counts
 * as a problem at its deepest allowed container).
 */
export function findUnstorableText(value: unknown): string | undefined {
  return findJsonProblem(value)?.path;
}
