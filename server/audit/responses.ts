// Response body of GET /v1/audit.
import { z } from 'zod';
import { nextCursor, timestamp } from '../http/openapi/common.ts';

export const AuditEntry = z
  .strictObject({
    id: z.int(),
    at: timestamp,
    event: z.string(),
    org_id: z.string(),
    user_id: z.string().nullable(),
    actor_id: z.string().nullable(),
    identity_chain: z.array(z.string()),
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
