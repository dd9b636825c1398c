// Response bodies of the OAuth administration routes (/v1/oauth/...).
import { z } from 'zod';
import { nullableTimestamp, timestamp, uuid } from '../http/openapi/common.ts';

const clientFields = {
  client_id: z.string(),
  client_name: z.string().nullable(),
  software_id: z.string().nullable(),
  software_version: z.string().nullable(),
  redirect_uris: z.array(z.string()),
  application_type: z.string().nullable(),
  created_at: nullableTimestamp,
};

export const OAuthClient = z
  .strictObject({
    ...clientFields,
    first_bound_at: timestamp,
    live_bindings: z.int(),
    revoked: z.boolean(),
    revoked_at: nullableTimestamp,
  })
  .meta({ id: 'OAuthClient' });

export const RevokedOAuthClient = z.strictObject({
  ...clientFields,
  revoked: z.literal(true),
  revoked_at: timestamp,
  revoked_bindings: z.int(),
});

export const OAuthBinding = z
  .strictObject({
    id: uuid,
    client_id: z.string(),
    client_name: z.string().nullable().optional(),
    user_id: uuid,
    agent_id: uuid,
    agent: z.strictObject({ id: uuid, name: z.string(), status: z.string().optional() }).optional(),
    self_approve_enabled: z.boolean(),
    created_at: timestamp,
    revoked_at: nullableTimestamp,
  })
  .meta({ id: 'OAuthBinding' });

export const OAuthClientList = z.strictObject({ clients: z.array(OAuthClient) });
export const OAuthBindingList = z.strictObject({ bindings: z.array(OAuthBinding) });
