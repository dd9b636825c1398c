// Response schemas of the approval routes beyond the record itself (also their OpenAPI components).
import { z } from 'zod';
import { ApprovalRecord } from '../calls/responses.ts';
import { timestamp, uuid } from '../http/openapi/common.ts';

/** POST /v1/approvals/resolve: what became of each approval, in the order the ids were given. */
export const BatchResolveResult = z
  .strictObject({
    results: z.array(
      z.discriminatedUnion('status', [
        z.strictObject({ id: uuid, status: z.literal('decided'), approval: ApprovalRecord }),
        z
          .strictObject({
            id: uuid,
            status: z.literal('refused'),
            error: z.strictObject({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() }),
          })
          .describe('Not decided: the error a single resolve of this approval would have answered (e.g. not_in_your_chain, conflict, not_found).'),
      ]),
    ),
  })
  .meta({ id: 'BatchResolveResult' });

/** GET /v1/approvals/{id}/edit: the "Edit before allowing" form's fields (issue 31). */
export const EditForm = z
  .strictObject({
    kind: z.enum(['params', 'request']),
    editable: z.boolean(),
    reason: z.string().optional(),
    parameters: z
      .array(
        z.strictObject({
          name: z.string(),
          in: z.enum(['path', 'query', 'body']),
          required: z.boolean(),
          type: z.string(),
          enum: z.array(z.unknown()).optional(),
          description: z.string().optional(),
          redacted: z.boolean().describe('Redacted in every view: not shown, and left as the agent sent it unless set.'),
          value: z.unknown().optional(),
        }),
      )
      .optional(),
    request: z.strictObject({ method: z.string(), url: z.string(), headers: z.array(z.string()), body: z.unknown() }).optional(),
  })
  .meta({ id: 'ApprovalEditForm' });

/** POST /v1/approvals/{id}/edit-preview: what allowing the edit would run. */
export const EditPreview = z
  .strictObject({
    permission_keys: z.array(z.string()),
    action_description: z.string(),
    diff: z.array(z.strictObject({ field: z.string(), before: z.unknown().optional(), after: z.unknown().optional() })),
  })
  .meta({ id: 'ApprovalEditPreview' });

const Who = z
  .strictObject({ id: uuid, kind: z.enum(['user', 'agent', 'subagent']).nullable(), name: z.string().nullable() })
  .meta({ id: 'BlastRadiusIdentity' });

export const BlastRadius = z
  .strictObject({
    approval_id: uuid,
    tier: z.strictObject({ index: z.number().int(), keys: z.array(z.string()), description: z.string(), condition: z.string().optional() }),
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
    condition_not_weighed_for_past_calls: z
      .boolean()
      .meta({ description: "True when the tier has a condition: pending approvals are judged on their request, but past calls (`audit`) by the tier's keys only, since the audit log keeps no request." }),
  })
  .meta({ id: 'BlastRadius' });
