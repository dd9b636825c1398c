// When to remind the resolver of an approval still undecided: each mark is a share of its life
// elapsed (`half`, or `<n>%`) or a time before expiry (`<n>s`, `<n>m`). Marks already past, or at
// or before the raise, are dropped; the rest sorted, without duplicates.

export const DEFAULT_REMINDERS = ['half', '2m'] as const;
const MARK = /^(half|(\d{1,2})%|(\d{1,6})(s|m))$/;

export function isReminderMark(mark: string): boolean {
  return MARK.test(mark);
}

/** Unix ms of each reminder of an approval raised at `raisedAt` that expires at `expiresAt`. */
export function reminderTimes(marks: readonly string[], raisedAt: number, expiresAt: number): number[] {
  const life = expiresAt - raisedAt;
  const out = new Set<number>();
  for (const mark of marks) {
    const m = MARK.exec(mark);
    if (!m) continue;
    let at: number;
    if (m[1] === 'half') at = raisedAt + life / 2;
    else if (m[2] !== undefined) at = raisedAt + (life * Number(m[2])) / 100;
    else at = expiresAt - Number(m[3]) * (m[4] === 'm' ? 60_000 : 1000);
    at = Math.round(at);
    if (at > raisedAt && at < expiresAt) out.add(at);
  }
  return [...out].sort((a, b) => a - b);
}
