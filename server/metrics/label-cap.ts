// Keeps a label set bounded: the first `max` distinct (service, action) pairs are kept as they
// are; any pair after that is counted as ('other', 'other'), so a registry with thousands of
// templates cannot grow the series without end.
export class LabelCap {
  readonly #seen = new Set<string>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  pair(service: string, action: string): [string, string] {
    const key = `${service}\u0000${action}`;
    if (this.#seen.has(key)) return [service, action];
    if (this.#seen.size >= this.#max) return ['other', 'other'];
    this.#seen.add(key);
    return [service, action];
  }
}
