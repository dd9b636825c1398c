// Waiting for best-effort work without letting it hold up what waits: a slow or stuck promise
// costs at most `ms`, and its outcome (even a rejection) is not the waiter's concern.

/** Resolves when `work` settles or `ms` have passed, whichever comes first; never rejects. */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const settled = work.then(
    () => undefined,
    () => undefined,
  );
  await Promise.race([settled, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
