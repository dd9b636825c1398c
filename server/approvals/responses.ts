// Response schema of GET /v1/approvals/{id}/blast-radius (also its OpenAPI component).
import { z } from 'zod';
import { timestamp, uuid } from '../http/openapi/common.ts';

const Who = z
  .strictObject({ id: uuid, kind: z.enum(['user', 'agent', 'subagent']).nullable(), name: z.string().nullable() })
  .meta({ id: 'BlastRadiusIdentity' });

export const BlastRadius = z
  .strictObject({
    approval_id: uuid,
    tier: z.strictObject({ index: z.number().int(), keys: z.array(z.string()), description: z.string() }),
    rule_targets: z.array(Who),
    pending_covered: z.array(
      z.strictObject({
        id: uuid,
        status: z.enum(['pending', 'allowed', 'denied', 'bubbled', 'expired', 'superseded', 'cancelled']),
        risk: z.enum(['low', 'med', 'high']),
        action_description: z.string(),
        permission_keys: z.array(z.string()),
        requester: Who,
        created_at: timestamp,
        expires_at: timestamp,
      }),
    ),
    audit: z.strictObject({ window_days: z.number().int(), calls_scanned: z.number().int(), calls_covered: z.number().int(), truncated: z.boolean() }),
  })
  .meta({ id: 'BlastRadius' });
