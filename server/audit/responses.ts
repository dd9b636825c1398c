// Response body of GET /v1/audit.
import { z } from 'zod';
import { nextCursor, timestamp } from '../http/openapi/common.ts';

/** Names are read from the identities when the log is read, not stored in it. */
const identityName = z.string().nullable();

export const AuditEntry = z
  .strictObject({
    id: z.int(),
    at: timestamp,
    event: z.string(),
    org_id: z.string(),
    user_id: z.string().nullable(),
    user_name: identityName.describe('The name of `user_id` now (null: no such identity any more).'),
    actor_id: z.string().nullable(),
    actor_name: identityName.describe('The name of `actor_id` now (null: no actor, or no such identity any more).'),
    identity_chain: z.array(z.string()).describe('The chain of the call: the requester first, then each parent up to the user.'),
    identity_chain_names: z
      .array(identityName)
      .describe('The names of `identity_chain`, in the same order, as they are now (null where no such identity exists any more).'),
    service: z.string().nullable(),
    action: z.string().nullable(),
    permission_keys: z.array(z.string()),
    decision: z.string().nullable(),
    call_id: z.string().nullable(),
    approval_id: z.string().nullable(),
    execution_id: z.string().nullable(),
    http_status_code: z.int().nullable(),
    details: z.record(z.string(), z.unknown()),
    request_id: z.string().nullable(),
  })
  .meta({ id: 'AuditEntry' });

export const AuditPage = z.strictObject({ entries: z.array(AuditEntry), next_cursor: nextCursor });
