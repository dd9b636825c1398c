// An audit entry's fields, written once: the row as stored and read (store.ts) and the entry as
// answered and exported (responses.ts) differ only in how its time and integers travel.
import { z } from 'zod';

/** Names are read from the identities when the log is read, not stored in it. */
const identityName = z.string().nullable();

export const auditEntryFields = {
  org_id: z.string(),
  event: z.string(),
  user_id: z.string().nullable(),
  actor_id: z.string().nullable(),
  identity_chain: z.array(z.string()).describe('The chain of the call: the requester first, then each parent up to the user.'),
  service: z.string().nullable(),
  action: z.string().nullable(),
  permission_keys: z.array(z.string()),
  decision: z.string().nullable(),
  call_id: z.string().nullable(),
  approval_id: z.string().nullable(),
  execution_id: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  request_id: z.string().nullable(),
};

/** The names beside the ids, as they are when the log is read. */
export const auditEntryNames = {
  user_name: identityName.describe('The name of `user_id` now (null: no such identity any more).'),
  actor_name: identityName.describe('The name of `actor_id` now (null: no actor, or no such identity any more).'),
  identity_chain_names: z
    .array(identityName)
    .describe('The names of `identity_chain`, in the same order, as they are now (null where no such identity exists any more).'),
};
