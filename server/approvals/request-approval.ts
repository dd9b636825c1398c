// The approval a request names (/v1/approvals/{id} and its actions), read in the same statement as
// the session or agent key that authenticated it (server/auth/service.ts, AuthRideAlong) and kept
// for that request's Principal object only, like a call's instance lookup
// (server/registry/request-lookup.ts). Taken once: a route that reads the approval again after
// changing it (a bubble) reads it afresh.
import type { Request } from 'express';
import type { AuthRideAlong } from '../auth/service.ts';
import type { Principal } from '../auth/principal.ts';
import { approvalViewJson, approvalViewValue, type ApprovalViewRow } from './store.ts';

const kept = new WeakMap<object, { id: string; row: ApprovalViewRow | null }>();

/** `/approvals/{uuid}` and its actions; anything else (a malformed id) rides along nothing. */
const APPROVAL_PATH = /^\/approvals\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\/[a-z-]+)?$/i;

/** The view of the approval a /v1 request names, to ride along its authentication; undefined: none. */
export function approvalAlong(req: Request): AuthRideAlong | undefined {
  const id = APPROVAL_PATH.exec(req.path)?.[1]?.toLowerCase();
  if (!id) return undefined;
  return {
    sql: (org, _user, identity) => approvalViewValue(org, identity, id),
    keep: (p, value) => {
      kept.set(p, { id, row: value === null ? null : approvalViewJson.parse(value) });
    },
  };
}

/** What was read of approval `id` with `p`'s authentication (null: none such), once; undefined: nothing was. */
export function takeKeptApproval(p: Principal, id: string): ApprovalViewRow | null | undefined {
  const hit = kept.get(p);
  if (hit?.id !== id.toLowerCase()) return undefined;
  kept.delete(p);
  return hit.row;
}
