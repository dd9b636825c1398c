// One approval as a viewer may read it: the row and the viewer's authority over it (see, resolve,
// replay), from the same view the inbox lists. The call path (resume) and the approval routes both
// read through here.
import { authorityFor, type Authority } from '../../core/permissions/authority.ts';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { alongApproval, type ReadAlong } from '../auth/read-along.ts';
import { notFound } from '../errors.ts';
import type { ApprovalViewReader, ApprovalViewRow } from './store.ts';

/** Routed past the requester's user to this person, as that user's approver (issue 29). */
export const delegatedTo = (p: Principal, row: ApprovalViewRow): boolean =>
  p.type === 'user' && row.routed_to === 'approver' && row.resolver_id === p.identityId;

/**
 * One approval of the viewer's org with the viewer's authority over it (null: no such approval).
 * `along`: what the request's authentication read (read-along.ts); its view of this approval, if
 * any, is used instead of reading it again.
 */
export async function readApproval(views: ApprovalViewReader, p: Principal, id: string, along?: ReadAlong): Promise<{ row: ApprovalViewRow; authority: Authority } | null> {
  const admin = isAdmin(p);
  const read = alongApproval(along, id);
  const row = read !== undefined ? read : (await views({ orgId: p.orgId, viewerId: p.identityId, admin, scope: 'visible', id, limit: 1 }))[0];
  return row ? { row, authority: authorityFor({ admin, delegate: delegatedTo(p, row) }, row.relationship) } : null;
}

/** One the viewer may see, else `not_found` (never a hint that it exists). */
export async function readVisibleApproval(views: ApprovalViewReader, p: Principal, id: string, along?: ReadAlong) {
  const found = await readApproval(views, p, id, along);
  if (!found || !found.authority.see) throw notFound('approval');
  return found;
}
