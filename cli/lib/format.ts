// Pure text helpers for people-facing output: aligned tables, durations, ages. No I/O.

/** Visible width: ANSI colour sequences take no room. */
// eslint-disable-next-line no-control-regex -- ANSI escapes are exactly what is removed
export const visibleWidth = (s: string): number => [...s.replace(/\x1b\[[0-9;]*m/g, '')].length;

function pad(s: string, width: number): string {
  return s + ' '.repeat(Math.max(0, width - visibleWidth(s)));
}

/** Cuts to `max` visible characters with an ellipsis (plain text only). */
export function clip(s: string, max: number): string {
  const chars = [...s];
  return chars.length <= max ? s : chars.slice(0, Math.max(0, max - 1)).join('') + '…';
}

/** Columns aligned with two spaces; the last column is not padded. Cells must not hold newlines. */
export function table(headers: string[], rows: string[][]): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, i) => Math.max(...all.map((r) => visibleWidth(r[i] ?? ''))));
  return all
    .map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : pad(cell, widths[i]!))).join('  ').trimEnd())
    .join('\n');
}

/** 0 → "0s", 75_000 → "1m 15s", 3_700_000 → "1h 1m", 2 days → "2d 0h". */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** A countdown as the spinner shows it: "14:05", "1:02:03". */
export function clock(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const two = (n: number) => String(n).padStart(2, '0');
  const h = Math.floor(s / 3600);
  return h > 0 ? `${h}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}` : `${Math.floor(s / 60)}:${two(s % 60)}`;
}

/** "in 14m 5s" / "expired" for a future instant. */
export function expiresIn(iso: string, now = Date.now()): string {
  const left = Date.parse(iso) - now;
  return left <= 0 ? 'expired' : `in ${duration(left)}`;
}

/** "3m 2s ago". */
export function age(iso: string, now = Date.now()): string {
  return `${duration(now - Date.parse(iso))} ago`;
}

/** `--timeout` values: "90s", "15m", "2h", "1d", or plain seconds. */
export function parseDuration(text: string): number | null {
  const m = /^(\d+)\s*(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) return null;
  const n = Number(m[1]);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h' | 'd'];
  return n * unit;
}

/** A CSV field (RFC 4180): quoted when it holds a comma, quote or line break. */
export function csvField(v: unknown): string {
  const s = v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}
