// Shapes an upstream response into the spec's result forms. Compact: parsed JSON body capped
// at 8 KiB (a marker says when it was cut). Verbose: headers and the raw body string.

/** The compact result: the parsed JSON body, capped (`truncated` when it was cut). */
export interface CompactResult {
  status_code: number;
  duration_ms: number;
  body: unknown;
  truncated?: boolean;
}

/** The verbose result (`verbose: true`): every header and the raw body string. */
export interface VerboseResult {
  status_code: number;
  headers: Record<string, string>;
  body: string;
  duration_ms: number;
  filtered_body?: unknown;
}

export type CallResult = CompactResult | VerboseResult;

export const COMPACT_BODY_LIMIT = 8 * 1024;
export const TRUNCATION_MARKER = '…[truncated]';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  bodyText: string;
  durationMs: number;
}

function parseBody(text: string, contentType: string | undefined): unknown {
  if (text === '') return null;
  if (contentType && !/json/i.test(contentType)) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function compactResult(r: RawResponse): CompactResult {
  const encoded = Buffer.byteLength(r.bodyText, 'utf8');
  if (encoded <= COMPACT_BODY_LIMIT) {
    return { status_code: r.status, duration_ms: r.durationMs, body: parseBody(r.bodyText, r.headers['content-type']) };
  }
  // Too large: keep a valid-UTF-8 prefix as a string; parsing a cut JSON document would fail.
  const cut = Buffer.from(r.bodyText, 'utf8').subarray(0, COMPACT_BODY_LIMIT).toString('utf8').replace(/\uFFFD+$/, '');
  return { status_code: r.status, duration_ms: r.durationMs, body: cut + TRUNCATION_MARKER, truncated: true };
}

export function verboseResult(r: RawResponse): VerboseResult {
  return { status_code: r.status, headers: r.headers, body: r.bodyText, duration_ms: r.durationMs };
}
