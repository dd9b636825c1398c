// The best `capacity` items of a stream under a total order, kept sorted: a page of search results
// costs O(items offered × log capacity) plus the insertions, never a sort of everything offered.

export class TopK<T> {
  readonly #items: T[] = [];
  readonly #capacity: number;
  readonly #order: (a: T, b: T) => number;

  /** `order(a, b) < 0`: a ranks before b. */
  constructor(capacity: number, order: (a: T, b: T) => number) {
    this.#capacity = capacity;
    this.#order = order;
  }

  /** Keeps `item` if it ranks among the best so far; false when it does not (nor would anything ranked after it). */
  offer(item: T): boolean {
    const items = this.#items;
    if (items.length >= this.#capacity && (this.#capacity === 0 || this.#order(item, items[items.length - 1]!) >= 0)) return false;
    // First position whose item ranks after `item`: equal items keep the order they were offered in.
    let low = 0;
    let high = items.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.#order(item, items[mid]!) < 0) high = mid;
      else low = mid + 1;
    }
    items.splice(low, 0, item);
    if (items.length > this.#capacity) items.pop();
    return true;
  }

  /** Whether as many items are kept as it can hold: from now on an item must beat `last()` to enter. */
  full(): boolean {
    return this.#items.length >= this.#capacity;
  }

  /** The worst item kept, if any. */
  last(): T | undefined {
    return this.#items[this.#items.length - 1];
  }

  /** The kept items, best first. */
  items(): readonly T[] {
    return this.#items;
  }
}
