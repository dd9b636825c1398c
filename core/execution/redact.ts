// `redact` paths: dotted paths into the resolved request projection ({method, url, params, body}),
// replaced by the literal `[REDACTED]` before anything is persisted. `*` matches any key or index.
export const REDACTED = '[REDACTED]';

export function redactPaths<T>(value: T, paths: readonly string[]): T {
  if (paths.length === 0) return value;
  const copy = structuredClone(value) as unknown;
  for (const p of paths) redactOne(copy, p.split('.'));
  return copy as T;
}

function redactOne(node: unknown, segments: string[]): void {
  if (node === null || typeof node !== 'object' || segments.length === 0) return;
  const [head, ...rest] = segments as [string, ...string[]];
  const container = node as Record<string, unknown>;
  const keys = head === '*' ? Object.keys(container) : Object.hasOwn(container, head) ? [head] : [];
  for (const key of keys) {
    if (rest.length === 0) {
      if (container[key] !== undefined) container[key] = REDACTED;
    } else {
      redactOne(container[key], rest);
    }
  }
}
