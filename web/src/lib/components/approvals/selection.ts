// The inbox's multi-select: which rows are chosen (kept to the rows still listed) and what a
// batch decision did, in words. Pure: the page holds the state and calls the gateway.

/** `ids` with `id` added, or removed when it was there. */
export function toggled(ids: readonly string[], id: string): string[] {
  return ids.includes(id) ? ids.filter((x) => x !== id) : [...ids, id];
}

/** The chosen ids still listed, in the list's order (a decided or expired row leaves the selection). */
export function stillListed(ids: readonly string[], rows: readonly { id: string }[]): string[] {
  const chosen = new Set(ids);
  return rows.filter((r) => chosen.has(r.id)).map((r) => r.id);
}

type Result = { id: string; status: 'decided' } | { id: string; status: 'refused'; error: { code: string; message: string } };

export interface BatchOutcome {
  /** "Allowed 3 requests." / "Denied 1 request; 2 were not decided." */
  summary: string;
  /** Those not decided, each with the gateway's reason (and its headline when it is still listed). */
  refused: { id: string; what: string; reason: string }[];
}

const requests = (n: number) => `${n} request${n === 1 ? '' : 's'}`;

/** What a batch did, in words; `headline` names a row by id (undefined when it is no longer listed). */
export function batchOutcome(verb: 'Allowed' | 'Denied', results: readonly Result[], headline: (id: string) => string | undefined): BatchOutcome {
  const refused = results.flatMap((r) => (r.status === 'refused' ? [{ id: r.id, what: headline(r.id) ?? r.id, reason: r.error.message }] : []));
  const decided = results.length - refused.length;
  const summary = refused.length === 0 ? `${verb} ${requests(decided)}.` : `${verb} ${requests(decided)}; ${refused.length} ${refused.length === 1 ? 'was' : 'were'} not decided.`;
  return { summary, refused };
}
