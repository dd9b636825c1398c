// Runs an async function over a list with at most `limit` calls in flight, answers in the list's
// order. Used where one request fans out to many (deciding approvals in a batch) so that a large
// batch queues here instead of flooding what each call reaches (Temporal, the database).

/** `fn` over every item, at most `limit` at a time; rejects with the first rejection (let `fn` catch what should not stop the rest). */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
