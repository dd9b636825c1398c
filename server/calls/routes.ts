// REST: action calls (service action, raw HTTP, resume by approval_id). Approvals: server/approvals/routes.ts.
import type { Request, Response, Router } from 'express';
import type { AuthRideAlong } from '../auth/service.ts';
import { readAlongOf } from '../auth/read-along.ts';
import { instanceLookupAlong } from '../registry/request-lookup.ts';
import { z } from 'zod';
import type { CallOutcome } from '../../workflows/definitions.ts';
import { principalOf } from '../auth/middleware.ts';
import { ERROR_STATUS, invalidRequest, type ErrorCode } from '../errors.ts';
import { answerOf } from './outcome.ts';
import { apiRouter } from '../http/api-router.ts';
import { CallView, Called, Denied, PendingApproval } from './responses.ts';
import type { CallService, ConnectionRef } from './service.ts';

const uuid = z.uuid({ error: 'must be a UUID' });
const params = z.record(z.string(), z.unknown());

const resumeBody = z.strictObject({ approval_id: uuid });
const actionBody = z.strictObject({
  service: z.string().min(1).max(100),
  action: z.string().min(1).max(200),
  params: params.optional(),
  verbose: z.boolean().optional(),
});
const httpBody = z.strictObject({
  service: z.string().min(1).max(100),
  method: z.string().min(3).max(10),
  path: z.string().min(1).max(8192),
  body: z.unknown().optional(),
  headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/), z.string().max(8192)).optional(),
  secret: z
    .strictObject({
      name: z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/),
      in: z.enum(['header', 'query']),
      param: z.string().min(1).max(100),
      prefix: z.string().max(50).optional(),
    })
    .optional(),
  verbose: z.boolean().optional(),
});
const connectionHttpBody = z.strictObject({
  connection: z.string().min(1).max(128),
  method: z.string().min(3).max(10),
  url: z.string().url().max(8192),
  body: z.unknown().optional(),
  headers: httpBody.shape.headers,
  verbose: z.boolean().optional(),
});

/**
 * `Idempotency-Key`: names the call for the calling identity; a retry with the same key and the
 * same request gets the first call's outcome (waiting for it if still running) and never sends again.
 */
const idempotencyHeaders = z.object({
  'Idempotency-Key': z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/)
    .optional()
    .describe('Up to 255 visible ASCII characters, unique per request you mean (a UUID is fine). A retry with the same key and the same request returns the first call’s outcome and never sends it again; the same key with another request is `409 idempotency_key_reused`. Keys are kept at least 24 hours (as long as the call is).'),
});

function idempotencyKeyOf(req: Request): string | undefined {
  const raw = req.get('idempotency-key');
  if (raw === undefined) return undefined;
  const parsed = idempotencyHeaders.shape['Idempotency-Key'].safeParse(raw);
  if (!parsed.success) throw invalidRequest('Idempotency-Key must be 1 to 255 visible ASCII characters', { field: 'Idempotency-Key' });
  return parsed.data;
}

/** A call's error outcome carries any typed code (the workflow's own included). */
const CALL_ERRORS = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((c) => c !== 'invalid_request' && c !== 'internal');
const callAnswers = {
  200: z.union([Called, Denied]).describe('`called` (the upstream result) or `denied` (a person refused it)'),
  202: PendingApproval.describe('`pending_approval`: not covered by the caller’s rules; a person must decide'),
};

/** `called` 200, `pending_approval` 202, `denied` 200; an error outcome is the error envelope. */
function sendOutcome(res: Response, outcome: CallOutcome): void {
  const answer = answerOf(outcome);
  res.status(answer.status === 'pending_approval' ? 202 : 200).json(answer);
}

/**
 * What rides along a call request's authentication (POST /v1/actions/call or /actions/http): the
 * lookup of the service it names, read before validation. Only a hint: validation still judges the
 * body, and an unused lookup costs nothing more.
 */
export function callLookupAlong(req: Request): AuthRideAlong | undefined {
  if (req.method !== 'POST' || (req.path !== '/actions/call' && req.path !== '/actions/http')) return undefined;
  return instanceLookupAlong((req.body as { service?: unknown } | undefined)?.service);
}

export function callRoutes(calls: CallService, resolveConnection: (p: ReturnType<typeof principalOf>, ref: string) => Promise<ConnectionRef>): Router {
  const r = apiRouter({ tags: ['Calls'] });
  r.route(
    {
      method: 'post',
      path: '/actions/call',
      operationId: 'callAction',
      summary: 'Call a service action, make a raw HTTP call, or resume an approved call by approval_id',
      headers: idempotencyHeaders,
      body: z.union([actionBody, httpBody, resumeBody]),
      responses: callAnswers,
      errors: CALL_ERRORS,
    },
    async (req, res, { body }) => {
    const p = principalOf(req);
    const idempotencyKey = idempotencyKeyOf(req);
    // The branches are strict objects: only resumeBody has approval_id, only httpBody has method.
    if ('approval_id' in body) {
      sendOutcome(res, await calls.resume(p, body.approval_id));
    } else if ('method' in body) {
      sendOutcome(res, await calls.callHttp(p, body, req.id, { idempotencyKey, along: readAlongOf(req) }));
    } else {
      sendOutcome(res, await calls.callAction(p, body, req.id, { idempotencyKey, along: readAlongOf(req) }));
    }
    },
  );
  r.route(
    {
      method: 'post',
      path: '/actions/http',
      operationId: 'callHttp',
      summary: 'Raw authenticated HTTP through a registered OAuth connection',
      headers: idempotencyHeaders,
      body: connectionHttpBody,
      responses: callAnswers,
      errors: CALL_ERRORS,
    },
    async (req, res, { body }) => {
    const p = principalOf(req);
    const idempotencyKey = idempotencyKeyOf(req);
    const connection = await resolveConnection(p, body.connection);
    const { connection: _c, url, ...rest } = body;
    sendOutcome(res, await calls.callHttp(p, { ...rest, service: 'http', path: url }, req.id, { connection, idempotencyKey }));
    },
  );
  r.route(
    {
      method: 'get',
      path: '/calls/{id}',
      operationId: 'getCall',
      summary: 'A call as it stands now: status, result or error, approval and execution',
      description:
        'Readable by the identity that made the call, the identities above it on its chain, and the org’s admins; anyone else gets 404. Every call answer (`called`, `pending_approval`, `denied`, and errors in `details.call_id`) names its `call_id`.',
      params: z.object({ id: uuid }),
      responses: { 200: CallView },
      errors: ['not_found'],
    },
    async (req, res, { params }) => {
      res.json(await calls.get(principalOf(req), params.id));
    },
  );
  return r.router;
}
