// REST: action calls (service action, raw HTTP, resume by approval_id). Approvals: server/approvals/routes.ts.
import type { Response, Router } from 'express';
import { z } from 'zod';
import type { CallOutcome } from '../../workflows/definitions.ts';
import { principalOf } from '../auth/middleware.ts';
import { ERROR_STATUS, type ErrorCode } from '../errors.ts';
import { answerOf } from './outcome.ts';
import { apiRouter } from '../http/api-router.ts';
import { Called, Denied, PendingApproval } from './responses.ts';
import type { CallService } from './service.ts';

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

export function callRoutes(calls: CallService, resolveConnection: (p: ReturnType<typeof principalOf>, ref: string) => Promise<string>): Router {
  const r = apiRouter({ tags: ['Calls'] });
  r.route(
    {
      method: 'post',
      path: '/actions/call',
      operationId: 'callAction',
      summary: 'Call a service action, make a raw HTTP call, or resume an approved call by approval_id',
      body: z.union([actionBody, httpBody, resumeBody]),
      responses: callAnswers,
      errors: CALL_ERRORS,
    },
    async (req, res) => {
    const p = principalOf(req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    if ('approval_id' in body) {
      sendOutcome(res, await calls.resume(p, resumeBody.parse(body).approval_id));
    } else if ('method' in body || 'path' in body) {
      sendOutcome(res, await calls.callHttp(p, httpBody.parse(body), req.id));
    } else {
      sendOutcome(res, await calls.callAction(p, actionBody.parse(body), req.id));
    }
    },
  );
  r.route(
    {
      method: 'post',
      path: '/actions/http',
      operationId: 'callHttp',
      summary: 'Raw authenticated HTTP through a registered OAuth connection',
      body: connectionHttpBody,
      responses: callAnswers,
      errors: CALL_ERRORS,
    },
    async (req, res) => {
    const p = principalOf(req);
    const body = connectionHttpBody.parse(req.body);
    const connectionId = await resolveConnection(p, body.connection);
    const { connection: _c, url, ...rest } = body;
    sendOutcome(res, await calls.callHttp(p, { ...rest, service: 'http', path: url }, req.id, connectionId));
    },
  );
  return r.router;
}
