// Text PostgreSQL can store: no NUL character (text and jsonb refuse it) and no lone UTF-16
// surrogate (not valid Unicode; jsonb refuses its escape, and UTF-8 cannot encode it).

export function isStorableText(s: string): boolean {
  return !s.includes('\u0000') && s.isWellFormed();
}

/**
 * The path (`a.b.0`) of the first string — a value or an object key — in `value` that is not
 * storable text, or undefined when there is none. Walks plain JSON-like values only.
 */
export function findUnstorableText(value: unknown, path: string[] = []): string | undefined {
  if (typeof value === 'string') return isStorableText(value) ? undefined : path.join('.');
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableText(value[i], [...path, String(i)]);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (!isStorableText(k)) return [...path, [...k].map((c) => (isStorableText(c) ? c : '?')).join('')].join('.');
      const found = findUnstorableText(v, [...path, k]);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
