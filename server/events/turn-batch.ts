// Requests made within one turn of the event loop, answered by one load. An event reaches every
// open stream of the process in the same turn (hub.ts fans it out in one loop), and each stream
// asks who its viewer is now: batched, that is one database read per event, not one per stream.
// Pure scheduling; the load is the caller's.

/**
 * `load` gets every request of a turn (in call order) and answers each, in the same order; a
 * failed load fails every request of its batch.
 */
export function turnBatcher<Req, Res>(load: (requests: readonly Req[]) => Promise<readonly Res[]>): (request: Req) => Promise<Res> {
  let pending: Array<{ request: Req; resolve: (r: Res) => void; reject: (err: unknown) => void }> | null = null;

  async function flush(): Promise<void> {
    const batch = pending ?? [];
    pending = null;
    try {
      const answers = await load(batch.map((b) => b.request));
      if (answers.length !== batch.length) throw new Error(`a batched load answered ${answers.length} of ${batch.length} requests`);
      batch.forEach((b, i) => b.resolve(answers[i]!));
    } catch (err) {
      for (const b of batch) b.reject(err);
    }
  }

  return (request) =>
    new Promise<Res>((resolve, reject) => {
      // setImmediate runs after the turn's microtasks: the streams' promise chains have all asked.
      if (!pending) {
        pending = [];
        setImmediate(() => void flush());
      }
      pending.push({ request, resolve, reject });
    });
}
