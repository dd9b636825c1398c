// Who may receive an event of the people's stream (GET /v1/events), judged at each delivery
// against the viewer as they are now, not as they were when the stream opened: a demoted admin
// stops seeing the org's events, a person no longer routed an approval stops seeing it. The same
// rules as reading the approval over REST (server/approvals/store.ts approvalViews). Pure: the
// facts come from store.ts viewersNow.
import type { UserEvent } from './store.ts';

export type PersonRole = 'admin' | 'member' | 'approver';

/** The viewer at the moment of delivery. */
export interface ViewerNow {
  userId: string;
  /** null: no longer an active person of the stream's org (the stream is about to end). */
  role: PersonRole | null;
  /** Of the approvals asked about, those the viewer may read now (their own, or routed to them). */
  readable: ReadonlySet<string>;
}

/** Admins receive the org's events; anyone else the events addressed to them about approvals they may still read. */
export function mayReceive(viewer: ViewerNow, e: Pick<UserEvent, 'user_id' | 'data'>): boolean {
  if (viewer.role === null) return false;
  if (viewer.role === 'admin') return true;
  return e.user_id === viewer.userId && viewer.readable.has(e.data.approval_id);
}

/** What an open stream was opened as; a change ends it, so its client reconnects and reads in its new scope. */
export const sameStanding = (openedAsAdmin: boolean, role: PersonRole | null): boolean => role !== null && (role === 'admin') === openedAsAdmin;
