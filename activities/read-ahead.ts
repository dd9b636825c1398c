// A read started before the step that needs it, so its round trip overlaps others (the allow's
// stored request beside its decision). It may never be awaited — the step can end first, on
// another failure or a refusal — so its own failure must never go unhandled: Node would end the
// gateway for it (seen under chaos: PostgreSQL killed while an allow was being written). Whoever
// awaits it still gets the failure.
export function readAhead<T>(read: Promise<T>): Promise<T> {
  read.catch(() => undefined);
  return read;
}
