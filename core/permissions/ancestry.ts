// Who is whose ancestor on an identity chain, and the viewer's relationship to a requester. Apart
// from the permission walk (chain.ts) because the call workflow's bundle needs these and not the
// walk's CEL engine, whose module set-up would otherwise run again for every workflow.
import type { Identity } from './chain.ts';

export type Relationship = 'self' | 'downstream' | 'not_in_your_chain';

/** Strict ancestry (an identity is not its own ancestor); tolerant of cycles in bad data. */
export function isAncestor(
  identities: readonly Identity[] | ReadonlyMap<string, Identity>,
  ancestorId: string,
  descendantId: string,
): boolean {
  const byId: ReadonlyMap<string, Identity> = Array.isArray(identities)
    ? new Map((identities as readonly Identity[]).map((i) => [i.id, i]))
    : (identities as ReadonlyMap<string, Identity>);
  const seen = new Set<string>();
  let current = byId.get(descendantId)?.parentId ?? null;
  while (current !== null && !seen.has(current)) {
    if (current === ancestorId) return true;
    seen.add(current);
    current = byId.get(current)?.parentId ?? null;
  }
  return false;
}

/** The viewer's relationship to the requester (`requesterChain[0]`). */
export function relationship(viewerId: string, requesterChain: readonly Identity[]): Relationship {
  const requester = requesterChain[0];
  if (requester === undefined) return 'not_in_your_chain';
  if (requester.id === viewerId) return 'self';
  return isAncestor(requesterChain, viewerId, requester.id) ? 'downstream' : 'not_in_your_chain';
}
