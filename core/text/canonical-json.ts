// One canonical JSON for the gateway: object keys sorted at every depth and undefined members left
// out, as `JSON.stringify` would carry them. Two values that serialise to the same JSON document
// give the same text: the call digest (identical requests share an approval, a keyed retry must be
// the same request) and the bytes a message proof signs (core/decisions/proof.ts) both use it.
// Pure: the workflow bundle imports it.
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.keys(value)
    .sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}
