// The approval a request names (/v1/approvals/{id} and its actions), read in the same statement as
// the session or agent key that authenticated it (server/auth/service.ts, AuthRideAlong) and handed
// on in that request's ReadAlong, like a call's instance lookup (server/registry/request-lookup.ts).
// A route passes it to its first read only: one that reads the approval again after changing it (a
// bubble) reads it afresh.
import type { Request } from 'express';
import type { AuthRideAlong } from '../auth/service.ts';
import { approvalViewJson, approvalViewValue } from './store.ts';

/** `/approvals/{uuid}` and its actions; anything else (a malformed id) rides along nothing. */
const APPROVAL_PATH = /^\/approvals\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\/[a-z-]+)?$/i;

/** The view of the approval a /v1 request names, to ride along its authentication; undefined: none. */
export function approvalAlong(req: Request): AuthRideAlong | undefined {
  const id = APPROVAL_PATH.exec(req.path)?.[1]?.toLowerCase();
  if (!id) return undefined;
  return {
    sql: (org, _user, identity) => approvalViewValue(org, identity, id),
    keep: (along, value) => {
      along.approval = { id, row: value === null ? null : approvalViewJson.parse(value) };
    },
  };
}
