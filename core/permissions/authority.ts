// Who may do what with an approval (or anything else a requester raised, such as a download):
// the one statement of it, used by the API's services, the downloads route and the call
// workflow's update validators. Pure: the caller supplies the requester's chain.
import { relationship, type Relationship } from './ancestry.ts';
import type { Identity } from './chain.ts';

/** Whoever is asking: an identity, and whether it is an admin of the requester's org. */
export interface Viewer {
  identityId: string;
  admin: boolean;
}

export interface Authority {
  relationship: Relationship;
  /** Sees it: the requester itself, any ancestor of the requester, an org admin. */
  see: boolean;
  /** Decides it: an ancestor of the requester or an org admin, never the requester itself. */
  resolve: boolean;
  /** Resumes (or cancels) the call: the requester only. */
  replay: boolean;
  /** Why `resolve` is false, when it is. */
  refusal?: 'self' | 'not_in_your_chain';
}

/** The viewer's authority over what `requesterChain[0]` raised (requester first, user last). */
export function authorityOver(viewer: Viewer, requesterChain: readonly Identity[]): Authority {
  return authorityFor(viewer, relationship(viewer.identityId, requesterChain));
}

/**
 * The same, from a relationship already worked out (e.g. by SQL over the identities' parent links).
 * `delegate`: the approval was routed to the viewer past the requester's user, as that user's
 * approver (core/permissions/routing.ts): they see and decide it like an admin would.
 */
export function authorityFor(viewer: Pick<Viewer, 'admin'> & { delegate?: boolean }, rel: Relationship): Authority {
  const self = rel === 'self';
  const org = viewer.admin || viewer.delegate === true;
  const resolve = !self && (org || rel === 'downstream');
  return {
    relationship: rel,
    see: org || rel !== 'not_in_your_chain',
    resolve,
    replay: self,
    ...(resolve ? {} : { refusal: self ? 'self' : 'not_in_your_chain' }),
  };
}

export const NOT_IN_CHAIN_MESSAGE = 'only an ancestor of the requester (or an org admin) may resolve this approval';
export const SELF_RESOLVE_MESSAGE = 'the requester cannot resolve its own approval';
