// REST for approvals: the list (cursor pages), one approval, its resolve, the requester's cancel, and
// GET /v1/approvals/{id}/blast-radius?tier=N: what remembering suggested tier N would also cover.
import type { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import { readAlongOf } from '../auth/read-along.ts';
import { Approval, ApprovalPage, ApprovalRecord } from '../calls/responses.ts';
import { apiRouter } from '../http/api-router.ts';
import { BatchResolveResult, BlastRadius, EditForm, EditPreview } from './responses.ts';
import type { BlastRadiusService } from './blast-radius.ts';
import { editRequestSchema } from './edit-request-schema.ts';
import { editParamsSchema, RESOLVE_DECISIONS, rememberConditionSchema, rememberKeysSchema, ttlSchema, type ResolveDecision } from './resolve-input.ts';
import type { ApprovalService } from './service.ts';

const params = z.object({ id: z.uuid({ error: 'must be a UUID' }) });
const resolveBody = z.strictObject({
  decision: z.enum(Object.keys(RESOLVE_DECISIONS) as [ResolveDecision, ...ResolveDecision[]]),
  remember_keys: rememberKeysSchema.optional(),
  ttl: ttlSchema.optional(),
  remember_condition: rememberConditionSchema.optional(),
  reason: z.string().max(1000).optional(),
  params: editParamsSchema.optional(),
  request: editRequestSchema.optional(),
});
/**
 * One decision for many approvals: the single resolve's body without an edit (an edit is made for
 * one call's request), and the ids, each once.
 */
const batchResolveBody = resolveBody.omit({ params: true, request: true }).extend({
  ids: z
    .array(z.uuid({ error: 'must be a UUID' }))
    .min(1, 'must name at least one approval')
    .max(100, 'must name at most 100 approvals')
    .superRefine((ids, ctx) => {
      const seen = new Set<string>();
      ids.forEach((id, i) => {
        const key = id.toLowerCase();
        if (seen.has(key)) ctx.addIssue({ code: 'custom', message: `${id} is given more than once`, path: [i] });
        seen.add(key);
      });
    }),
});
const cancelBody = z.strictObject({ reason: z.string().max(1000).optional() });
const listQuery = z.strictObject({
  status: z.enum(['pending', 'allowed', 'denied', 'bubbled', 'expired', 'superseded', 'cancelled']).optional(),
  scope: z.enum(['mine', 'assigned', 'actionable']).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(200).optional(),
});

export function approvalRoutes(approvals: ApprovalService): Router {
  const r = apiRouter({ tags: ['Approvals'] });
  r.route({
    method: 'get',
    path: '/approvals',
    operationId: 'listApprovals',
    summary: 'Approvals the caller can see, newest first (cursor pagination)',
    query: listQuery,
    responses: { 200: ApprovalPage },
  }, async (req, res, { query }) => {
    res.json(await approvals.list(principalOf(req), query));
  });
  r.route({
    method: 'get',
    path: '/approvals/{id}',
    operationId: 'getApproval',
    summary: 'One approval: its state, the gated action and the requester',
    params,
    responses: { 200: Approval },
    errors: ['not_found'],
  }, async (req, res, { params }) => {
    res.json(await approvals.get(principalOf(req), params.id, readAlongOf(req)));
  });
  r.route({
    method: 'post',
    path: '/approvals/{id}/resolve',
    operationId: 'resolveApproval',
    summary: 'Decide an approval (allow_once, allow_always, deny, bubble; or allow / allow_remember), optionally allowing an edited request (params or request)',
    params,
    body: resolveBody,
    responses: { 200: ApprovalRecord },
    errors: ['not_found', 'forbidden', 'not_in_your_chain', 'conflict', 'workflow_gone', 'edit_widens_request'],
  }, async (req, res, { params, body }) => {
    res.json(await approvals.resolve(principalOf(req), params.id, body, readAlongOf(req)));
  });
  r.route({
    method: 'post',
    path: '/approvals/resolve',
    operationId: 'resolveApprovals',
    summary: 'Decide many approvals at once (1-100): each checked and decided as a single resolve would, the answer says per id whether it was decided or refused and why',
    body: batchResolveBody,
    responses: { 200: BatchResolveResult },
  }, async (req, res, { body }) => {
    const { ids, ...decision } = body;
    res.json(await approvals.resolveMany(principalOf(req), ids.map((id) => id.toLowerCase()), decision, req.log));
  });
  r.route({
    method: 'get',
    path: '/approvals/{id}/edit',
    operationId: 'getApprovalEditForm',
    summary: 'What an approver may edit before allowing: the action\'s parameters from its schema, or a raw request',
    params,
    responses: { 200: EditForm },
    errors: ['not_found', 'forbidden', 'not_in_your_chain'],
  }, async (req, res, { params }) => {
    res.json(await approvals.editForm(principalOf(req), params.id, readAlongOf(req)));
  });
  r.route({
    method: 'post',
    path: '/approvals/{id}/edit-preview',
    operationId: 'previewApprovalEdit',
    summary: 'The keys, description and diff an edit would allow, judged as resolve judges it; decides nothing',
    params,
    body: editPreviewBody,
    responses: { 200: EditPreview },
    errors: ['not_found', 'forbidden', 'not_in_your_chain', 'conflict', 'edit_widens_request'],
  }, async (req, res, { params, body }) => {
    res.json(await approvals.previewEdit(principalOf(req), params.id, body, readAlongOf(req)));
  });
  r.route({
    method: 'post',
    path: '/approvals/{id}/cancel',
    operationId: 'cancelApproval',
    summary: 'Withdraw your own pending approval (the identity that made the call only)',
    params,
    body: cancelBody,
    responses: { 200: ApprovalRecord },
    errors: ['not_found', 'forbidden', 'conflict', 'workflow_gone'],
  }, async (req, res, { params, body }) => {
    res.json(await approvals.cancel(principalOf(req), params.id, body.reason, readAlongOf(req)));
  });
  return r.router;
}
const editPreviewBody = z.strictObject({ params: editParamsSchema.optional(), request: editRequestSchema.optional() });
const query = z.strictObject({
  tier: z
    .string()
    .regex(/^\d{1,2}$/, 'must be the index of one of the approval\'s suggested_tiers')
    .transform(Number),
});

export function blastRadiusRoutes(service: BlastRadiusService): Router {
  const r = apiRouter({ tags: ['Approvals'] });
  r.route({
    method: 'get',
    path: '/approvals/{id}/blast-radius',
    operationId: 'getBlastRadius',
    summary: 'What remembering suggested tier N would also cover: other pending approvals, calls of the last 30 days',
    params,
    query,
    responses: { 200: BlastRadius },
    errors: ['not_found', 'not_in_your_chain', 'invalid_request'],
  }, async (req, res, { params, query }) => {
    res.json(await service.forTier(principalOf(req), params.id, query.tier, readAlongOf(req)));
  });
  return r.router;
}
