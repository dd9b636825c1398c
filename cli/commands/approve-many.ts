// `gateway approve ID…` / `gateway deny ID…` with several ids: one POST /v1/approvals/resolve,
// each approval checked and decided on its own by the gateway; a table of what became of each
// (or the answer as JSON). Any refused: exit 2, as a single approve refused would.
import { resolveApprovalRef } from '../lib/approval-ref.ts';
import { ok, type Caller } from '../lib/caller.ts';
import { CliError, EXIT, usageError } from '../lib/errors.ts';
import { table } from '../lib/format.ts';
import { print, printJson, say } from '../lib/output.ts';

/** What the gateway takes at most in one batch. */
export const MAX_BATCH = 100;

export interface BatchDecision {
  decision: 'allow_once' | 'allow_remember' | 'deny';
  remember_keys?: string[];
  ttl?: string;
  reason?: string;
}

type BatchAnswer = Awaited<ReturnType<typeof send>>;
type BatchRow = BatchAnswer['results'][number];

const send = (c: Caller, ids: string[], body: BatchDecision) => ok(c.api.POST('/v1/approvals/resolve', { body: { ids, ...body } }));

/** Each ref as a full id (prefixes looked up), in the order given; the same approval twice is a usage error. */
export async function fullIds(c: Caller, refs: readonly string[]): Promise<string[]> {
  if (refs.length > MAX_BATCH) throw usageError(`at most ${MAX_BATCH} approvals at once, got ${refs.length}`);
  const ids: string[] = [];
  for (const ref of refs) {
    const id = await resolveApprovalRef(c, ref);
    if (ids.includes(id)) throw usageError(`${ref} names ${id}, which is already given`);
    ids.push(id);
  }
  return ids;
}

/** One line of the table: the id, what became of it, and the call's state or the refusal's reason. */
export function resultRow(r: BatchRow): string[] {
  if (r.status === 'refused') return [r.id, 'refused', `${r.error.code}: ${r.error.message}`];
  const exec = r.approval.execution ? `the call is ${r.approval.execution.status}` : '';
  return [r.id, r.approval.status, exec];
}

/** "2 allowed, 1 refused": how many ended in each state. */
export function summary(results: readonly BatchRow[]): string {
  const counts = new Map<string, number>();
  for (const r of results) {
    const state = r.status === 'refused' ? 'refused' : r.approval.status;
    counts.set(state, (counts.get(state) ?? 0) + 1);
  }
  return [...counts].map(([state, n]) => `${n} ${state}`).join(', ');
}

export async function decideMany(c: Caller, refs: readonly string[], body: BatchDecision, o: { json?: boolean }): Promise<void> {
  const answer = await send(c, await fullIds(c, refs), body);
  if (o.json) printJson(answer);
  else print(table(['ID', 'RESULT', 'DETAIL'], answer.results.map(resultRow)));
  const refused = answer.results.filter((r) => r.status === 'refused').length;
  const counted = `${summary(answer.results)} (of ${answer.results.length})`;
  if (refused > 0) throw new CliError(counted, EXIT.usage);
  say(counted);
}
