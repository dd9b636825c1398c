// What a call asked for, as stored encrypted in `calls.request_envelope` and decrypted only in
// the execute activity. Never put into a workflow payload.
import { z } from 'zod';

export const storedRequestSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('action'), params: z.record(z.string(), z.unknown()) }),
  z.object({
    kind: z.literal('http'),
    method: z.string(),
    url: z.string(),
    headers: z.record(z.string(), z.string()).optional(),
    body: z.unknown().optional(),
    inject: z.object({ secret: z.string(), in: z.enum(['header', 'query']), name: z.string(), prefix: z.string().optional() }).optional(),
    /** POST /v1/actions/http: the OAuth connection whose token authenticates the request. */
    connection: z.string().optional(),
  }),
]);

export type StoredRequest = z.infer<typeof storedRequestSchema>;

export const requestAad = (callId: string) => `call:${callId}:request`;
/** The request an approver allowed instead (approvals.edited_request_envelope): bound to the same call, apart from the agent's. */
export const editedRequestAad = (callId: string) => `call:${callId}:edited-request`;
