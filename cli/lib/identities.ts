// Names instead of UUIDs: the chain of each identity the caller can see, e.g. "ada › assistant › helper".
import type { components } from '../../core/api/client.ts';
import { ok, type Caller } from './caller.ts';

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

/** Every identity the caller may see, with their paths (an empty map when the list is refused). */
export async function identityPaths(caller: Caller): Promise<{ list: Identity[]; paths: Map<string, string> }> {
  const r = await caller.api.GET('/v1/identities').catch(() => null);
  const list = r?.data?.identities ?? [];
  return { list, paths: chainPaths(list) };
}

export const requesterPath = (paths: Map<string, string>, r: { id: string; name?: string }) => paths.get(r.id) ?? r.name ?? r.id;

export { ok };
