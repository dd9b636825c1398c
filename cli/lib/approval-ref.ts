// An approval named on the command line: its full id, or any unique prefix of it (as git and
// docker take object ids). A prefix is looked up among the approvals the caller can see.
import { CliError, EXIT } from './errors.ts';
import { ok, type Caller } from './caller.ts';

const FULL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PREFIX = /^[0-9a-f][0-9a-f-]{0,35}$/i;
/** Pages of 100 read at most while looking for a prefix (newest first). */
const MAX_PAGES = 20;

export async function resolveApprovalRef(c: Caller, ref: string): Promise<string> {
  if (FULL.test(ref)) return ref.toLowerCase();
  if (!PREFIX.test(ref)) throw new CliError(`"${ref}" is not an approval id or the start of one (hex digits and dashes)`, EXIT.usage);
  const prefix = ref.toLowerCase();
  const found: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await ok(c.api.GET('/v1/approvals', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } }));
    for (const a of res.approvals) if (a.id.startsWith(prefix)) found.push(a.id);
    if (found.length > 1 || !res.next_cursor) break;
    cursor = res.next_cursor;
  }
  if (found.length === 0) throw new CliError(`no approval starts with ${ref}`, EXIT.usage);
  if (found.length > 1) throw new CliError(`${ref} is ambiguous: ${found.length > 2 ? 'several approvals start' : 'two approvals start'} with it (${found.slice(0, 5).join(', ')}); type more of the id`, EXIT.usage);
  return found[0]!;
}
