// Names instead of UUIDs: the chain of each identity the caller can see, e.g. "ada › assistant › helper".
import type { components } from '../../core/api/client.ts';
import { ok, type Caller } from './caller.ts';
import { CliError, EXIT } from './errors.ts';

type Identity = components['schemas']['Identity'];

export function chainPaths(identities: Identity[]): Map<string, string> {
  const byId = new Map(identities.map((i) => [i.id, i]));
  const paths = new Map<string, string>();
  for (const i of identities) {
    const names: string[] = [];
    let cur: Identity | undefined = i;
    for (let depth = 0; cur && depth < 32; depth++) {
      names.unshift(cur.name);
      cur = cur.parent_id ? byId.get(cur.parent_id) : undefined;
    }
    paths.set(i.id, names.join(' › '));
  }
  return paths;
}

/** The listing's largest page: the fewest requests for the whole list. */
const PAGE = 500;

/** Every identity the caller may see: each page of the listing, following next_cursor. */
export async function allIdentities(caller: Caller): Promise<Identity[]> {
  const list: Identity[] = [];
  let cursor: string | undefined;
  do {
    const page = await ok(caller.api.GET('/v1/identities', { params: { query: { limit: PAGE, ...(cursor ? { cursor } : {}) } } }));
    list.push(...page.identities);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return list;
}

/** Every identity the caller may see, with their paths (an empty map when the list is refused). */
export async function identityPaths(caller: Caller): Promise<{ list: Identity[]; paths: Map<string, string> }> {
  const list = await allIdentities(caller).catch(() => []);
  return { list, paths: chainPaths(list) };
}

export const requesterPath = (paths: Map<string, string>, r: { id: string; name?: string }) => paths.get(r.id) ?? r.name ?? r.id;

export { ok };

const FULL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ID_PREFIX = /^[0-9a-f][0-9a-f-]{0,35}$/i;

/**
 * An agent or person named on the command line: its full id, its name, or any unique start of its
 * id (as git and docker take object ids), among the identities the caller can see.
 */
export async function resolveIdentityRef(caller: Caller, ref: string): Promise<string> {
  if (FULL_ID.test(ref)) return ref.toLowerCase();
  const { list, paths } = await identityPaths(caller);
  const wanted = ref.toLowerCase();
  const byName = list.filter((i) => i.name.toLowerCase() === wanted || paths.get(i.id)?.toLowerCase() === wanted);
  const found = byName.length ? byName : ID_PREFIX.test(ref) ? list.filter((i) => i.id.startsWith(wanted)) : [];
  if (found.length === 1) return found[0]!.id;
  if (found.length === 0) throw new CliError(`no agent or person is named ${JSON.stringify(ref)} or has an id starting with it (see \`gateway agents\`)`, EXIT.usage);
  const named = found.slice(0, 5).map((i) => `${paths.get(i.id) ?? i.name} (${i.id})`).join(', ');
  throw new CliError(`${JSON.stringify(ref)} is ambiguous: it names ${found.length} identities — ${named}; give the id, or more of it`, EXIT.usage);
}
