// The statistics both A/B benchmarks print: the median and a bootstrap interval of a p50 difference.

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

/** A 95 % bootstrap interval of p50(a) − p50(b) (seeded, so a run can be repeated). */
export function bootstrapDiff(a: number[], b: number[], rounds = 2000): [number, number] {
  let state = 42;
  const rand = () => (state = (state * 1664525 + 1013904223) >>> 0) / 2 ** 32;
  const pick = (xs: number[]) => Array.from({ length: xs.length }, () => xs[Math.floor(rand() * xs.length)]!);
  const diffs = Array.from({ length: rounds }, () => median(pick(a)) - median(pick(b))).sort((x, y) => x - y);
  return [diffs[Math.floor(rounds * 0.025)]!, diffs[Math.floor(rounds * 0.975)]!];
}
