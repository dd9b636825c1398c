// Instants as people read them in server-rendered pages and messages: "27 Nov 2026, 14:05 UTC",
// with a relative phrase ("in 14 minutes", "3 hours ago") where the reader sees it at once.
// UTC, named: a page or a mail does not know its reader's time zone. Pure.

const ABSOLUTE = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
  timeZone: 'UTC',
});

/** "27 Nov 2026, 14:05 UTC". */
export function absoluteTime(at: Date): string {
  const part = (type: Intl.DateTimeFormatPartTypes) => ABSOLUTE.formatToParts(at).find((p) => p.type === type)?.value ?? '';
  return `${part('day')} ${part('month')} ${part('year')}, ${part('hour')}:${part('minute')} UTC`;
}

const RELATIVE = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const STEPS: [seconds: number, unit: Intl.RelativeTimeFormatUnit][] = [
  [60, 'second'],
  [3600, 'minute'],
  [86_400, 'hour'],
  [30 * 86_400, 'day'],
  [365 * 86_400, 'month'],
  [Infinity, 'year'],
];
const UNIT_SECONDS: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86_400, month: 30 * 86_400, year: 365 * 86_400 };

/** "in 14 minutes", "3 hours ago", "now" (within a few seconds). */
export function relativeTime(at: Date, now: Date): string {
  const delta = (at.getTime() - now.getTime()) / 1000;
  if (Math.abs(delta) < 5) return 'now';
  const unit = STEPS.find(([limit]) => Math.abs(delta) < limit)![1];
  return RELATIVE.format(Math.round(delta / UNIT_SECONDS[unit]!), unit);
}

/** "27 Nov 2026, 14:05 UTC (in 14 minutes)". */
export const timeForPeople = (at: Date, now: Date): string => `${absoluteTime(at)} (${relativeTime(at, now)})`;
