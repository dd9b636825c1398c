// Relative times and countdowns for people; the exact instant goes in a tooltip.
const units: [number, Intl.RelativeTimeFormatUnit][] = [
  [60, 'second'],
  [60, 'minute'],
  [24, 'hour'],
  [30, 'day'],
  [12, 'month'],
  [Infinity, 'year'],
];
const rtf = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** Browser and server clocks differ by a little: within this many seconds, an instant is "now". */
const NOW_WINDOW_S = 5;

export function relative(iso: string, now: number): string {
  let delta = (Date.parse(iso) - now) / 1000;
  if (Math.abs(delta) < NOW_WINDOW_S) return rtf.format(0, 'second');
  for (const [size, unit] of units) {
    if (Math.abs(delta) < size) return rtf.format(Math.round(delta), unit);
    delta /= size;
  }
  return iso;
}

export function exact(iso: string): string {
  return new Date(iso).toLocaleString('en', { dateStyle: 'medium', timeStyle: 'long' });
}

/** "14:03 left", "2h 05m left", or null once past. */
export function countdown(iso: string, now: number): string | null {
  const s = Math.floor((Date.parse(iso) - now) / 1000);
  if (s <= 0) return null;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h >= 24) return `${Math.floor(h / 24)}d ${h % 24}h`;
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  return `${m}:${String(sec).padStart(2, '0')}`;
}
