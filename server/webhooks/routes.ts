// Thin REST over the webhook service: parse strictly, call one method, shape the answer. Only the
// creation answer carries the signing secret; request bodies are never logged.
import type { NextFunction, Request, Response, Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import { apiRouter } from '../http/api-router.ts';
import { DeliveryList, NewWebhook, WebhookDeliveryStarted, WebhookEventList, WebhookList } from './responses.ts';
import { WEBHOOK_EVENT_TYPES } from '../../workflows/webhook-definitions.ts';
import { assertOrgAdmin, type WebhookService } from './service.ts';

const params = z.object({ id: z.uuid({ error: 'must be a UUID' }) });

// Absolute http(s) only. Loopback and private hosts are deliberately allowed: receivers are set
// up by the org's admins, and tests (and single-host deployments) deliver to local endpoints.
const url = z
  .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' })
  .max(2048)
  .refine((u) => {
    // Refinements run even after a failed check: unparsable input is reported by z.url above.
    const parsed = URL.parse(u);
    return parsed === null || (parsed.username === '' && parsed.password === '');
  }, 'must not carry credentials');

const createBody = z.strictObject({
  url,
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1, 'subscribe to at least one event'),
  description: z.string().trim().max(1000).optional(),
});

const eventParams = z.object({
  id: z.uuid({ error: 'must be a UUID' }),
  eventId: z.string().regex(/^evt_[A-Za-z0-9_.:-]{1,200}$/, 'must be an event id (evt_…)'),
});

const deliveriesQuery = z.strictObject({
  limit: z.coerce.number({ error: 'must be a number' }).int().min(1).max(200).optional(),
});

/** Members and agents get 403 on every webhook path, before any parsing. */
function orgAdminsOnly(req: Request, _res: Response, next: NextFunction): void {
  assertOrgAdmin(principalOf(req));
  next();
}

export function webhookRoutes(webhooks: WebhookService): Router {
  const r = apiRouter({ tags: ['Webhooks'], auth: 'human' });
  r.use('/webhooks', orgAdminsOnly);
  r.route({
    method: 'post',
    path: '/webhooks',
    operationId: 'createWebhook',
    summary: 'Subscribe an endpoint to approval events (org admins); answers the signing secret once',
    body: createBody,
    bodyOptional: true,
    responses: { 201: NewWebhook },
  }, async (req, res, { body }) => {
    res.status(201).json(await webhooks.create(principalOf(req), body));
  });
  r.route({
    method: 'get',
    path: '/webhooks',
    operationId: 'listWebhooks',
    summary: 'Webhook subscriptions of the org (org admins)',
    responses: { 200: WebhookList },
  }, async (req, res) => {
    res.json({ webhooks: await webhooks.list(principalOf(req)) });
  });
  r.route({
    method: 'get',
    path: '/webhooks/{id}/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: 'Recent delivery attempts of a webhook',
    params,
    query: deliveriesQuery,
    responses: { 200: DeliveryList },
    errors: ['not_found'],
  }, async (req, res, { params, query }) => {
    res.json({ deliveries: await webhooks.deliveries(principalOf(req), params.id, query.limit ?? 50) });
  });
  r.route({
    method: 'get',
    path: '/webhooks/{id}/events',
    operationId: 'listWebhookEvents',
    summary: 'The delivery log per event: state, attempts, last response, next retry',
    params,
    query: deliveriesQuery,
    responses: { 200: WebhookEventList },
    errors: ['not_found'],
  }, async (req, res, { params, query }) => {
    res.json({ events: await webhooks.events(principalOf(req), params.id, query.limit ?? 50) });
  });
  r.route({
    method: 'post',
    path: '/webhooks/{id}/test',
    operationId: 'sendWebhookTest',
    summary: 'Send a signed `webhook.test` event to this endpoint',
    params,
    responses: { 202: WebhookDeliveryStarted },
    errors: ['not_found'],
  }, async (req, res, { params }) => {
    res.status(202).json(await webhooks.sendTest(principalOf(req), params.id));
  });
  r.route({
    method: 'post',
    path: '/webhooks/{id}/events/{eventId}/redeliver',
    operationId: 'redeliverWebhookEvent',
    summary: 'Deliver an event again (same body and event id, signed afresh); replaces a delivery still retrying',
    params: eventParams,
    responses: { 202: WebhookDeliveryStarted },
    errors: ['not_found', 'conflict'],
  }, async (req, res, { params }) => {
    res.status(202).json(await webhooks.redeliver(principalOf(req), params.id, params.eventId));
  });
  r.route({
    method: 'delete',
    path: '/webhooks/{id}',
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook subscription',
    params,
    responses: { 204: null },
    errors: ['not_found'],
  }, async (req, res, { params }) => {
    await webhooks.remove(principalOf(req), params.id);
    res.status(204).end();
  });
  return r.router;
}
