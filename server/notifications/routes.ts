// REST for approval notices: channels, routing rules and reminders (org admins), where one
// approval was announced (whoever sees it), and the two public entry points that authenticate
// themselves: Slack's interactions (its request signature) and email decision links (their own).
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import { isReminderMark } from '../../core/notifications/reminders.ts';
import { NOTICE_RISKS } from '../../core/notifications/routing.ts';
import { principalOf } from '../auth/middleware.ts';
import { AppError, invalidRequest } from '../errors.ts';
import { apiRouter } from '../http/api-router.ts';
import { PAGE_HEADERS } from '../oauth/html.ts';
import { emailConfigInput, slackConfigInput } from './channel-config.ts';
import type { EmailDecisions } from './email-decisions.ts';
import {
  NotificationChannel,
  NotificationChannelList,
  NotificationDeliveryList,
  NotificationReminders,
  NotificationRuleList,
  SlackInteractionAnswer,
} from './responses.ts';
import { assertNoticeAdmin, type NotificationService } from './service.ts';
import type { SlackInteractions } from './slack-interactions.ts';

const params = z.object({ id: z.uuid({ error: 'must be a UUID' }) });
const name = z.string().trim().min(1).max(100);

const createBody = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('slack'), name, slack: slackConfigInput }),
  z.strictObject({ kind: z.literal('email'), name, email: emailConfigInput }),
]);

const values = (item: z.ZodType<string>) => z.array(item).min(1).max(50).optional();
const rulesBody = z.strictObject({
  rules: z
    .array(
      z.strictObject({
        name,
        match: z.strictObject({
          risk: z.array(z.enum(NOTICE_RISKS)).min(1).optional(),
          service: values(z.string().min(1).max(200)),
          action: values(z.string().min(1).max(200)),
          requester_id: values(z.uuid()),
        }),
        routes: z.array(z.strictObject({ channel_id: z.uuid(), to: z.enum(['resolver', 'admins', 'channel']) })).min(1).max(20),
      }),
    )
    .max(100),
});

const remindersBody = z.strictObject({
  reminders: z.array(z.string().refine(isReminderMark, 'must be "half", "<n>%" of the life, or "<n>s" / "<n>m" before expiry')).max(10),
});

const tokenParams = z.object({ token: z.string().max(200) });

/** Members get 403 on every settings path, before any parsing. */
function orgAdminsOnly(req: Request, _res: Response, next: NextFunction): void {
  assertNoticeAdmin(principalOf(req));
  next();
}

export function notificationRoutes(notices: NotificationService): Router {
  const r = apiRouter({ tags: ['Notifications'], auth: 'human' });
  r.use(['/notification-channels', '/notification-rules', '/notification-reminders'], orgAdminsOnly);
  r.route({
    method: 'post',
    path: '/notification-channels',
    operationId: 'createNotificationChannel',
    summary: 'Add a Slack or email channel for approval notices (org admins); its secrets go to the vault',
    body: createBody,
    responses: { 201: NotificationChannel },
    errors: ['forbidden', 'conflict'],
  }, async (req, res, { body }) => {
    res.status(201).json(await notices.createChannel(principalOf(req), body.kind === 'slack' ? { kind: 'slack', name: body.name, slack: body.slack } : { kind: 'email', name: body.name, email: body.email }));
  });
  r.route({
    method: 'get',
    path: '/notification-channels',
    operationId: 'listNotificationChannels',
    summary: 'The org’s notification channels, without their secrets (org admins)',
    responses: { 200: NotificationChannelList },
    errors: ['forbidden'],
  }, async (req, res) => {
    res.json({ channels: await notices.listChannels(principalOf(req)) });
  });
  r.route({
    method: 'delete',
    path: '/notification-channels/{id}',
    operationId: 'deleteNotificationChannel',
    summary: 'Remove a notification channel no routing rule uses (org admins)',
    params,
    responses: { 204: null },
    errors: ['forbidden', 'not_found', 'conflict'],
  }, async (req, res, { params }) => {
    await notices.deleteChannel(principalOf(req), params.id);
    res.status(204).end();
  });
  r.route({
    method: 'get',
    path: '/notification-rules',
    operationId: 'listNotificationRules',
    summary: 'The ordered routing rules: the first that matches routes the approval (org admins)',
    responses: { 200: NotificationRuleList },
    errors: ['forbidden'],
  }, async (req, res) => {
    res.json({ rules: await notices.listRules(principalOf(req)) });
  });
  r.route({
    method: 'put',
    path: '/notification-rules',
    operationId: 'replaceNotificationRules',
    summary: 'Replace the routing rules (org admins); a rule without conditions is the default route',
    body: rulesBody,
    responses: { 200: NotificationRuleList },
    errors: ['forbidden'],
  }, async (req, res, { body }) => {
    res.json({ rules: await notices.replaceRules(principalOf(req), body.rules) });
  });
  r.route({
    method: 'get',
    path: '/notification-reminders',
    operationId: 'getNotificationReminders',
    summary: 'When the resolver is reminded of an undecided approval (org admins)',
    responses: { 200: NotificationReminders },
    errors: ['forbidden'],
  }, async (req, res) => {
    res.json(await notices.getReminders(principalOf(req)));
  });
  r.route({
    method: 'put',
    path: '/notification-reminders',
    operationId: 'putNotificationReminders',
    summary: 'Set the reminder points, e.g. ["half", "2m"]; [] turns reminders off (org admins)',
    body: remindersBody,
    responses: { 200: NotificationReminders },
    errors: ['forbidden'],
  }, async (req, res, { body }) => {
    res.json(await notices.putReminders(principalOf(req), body.reminders));
  });
  return r.router;
}

/** Where one approval was announced (any caller who may see the approval). */
export function approvalNoticeRoutes(notices: NotificationService): Router {
  const r = apiRouter({ tags: ['Approvals'] });
  r.route({
    method: 'get',
    path: '/approvals/{id}/notifications',
    operationId: 'listApprovalNotifications',
    summary: 'Where the approval was announced: each Slack or email delivery with its final state',
    params,
    responses: { 200: NotificationDeliveryList },
    errors: ['not_found'],
  }, async (req, res, { params }) => {
    res.json({ deliveries: await notices.deliveriesOf(principalOf(req), params.id) });
  });
  return r.router;
}

/** Public: each request authenticates itself (Slack's signature; the link's). Mounted before /v1's authentication. */
export function integrationRoutes(slack: SlackInteractions, email: EmailDecisions): Router {
  const r = apiRouter({ tags: ['Integrations'], auth: 'none' });
  // The raw body is what Slack signed: kept as text, parsed only after the signature holds.
  r.use('/integrations/slack/interactions', express.text({ type: 'application/x-www-form-urlencoded', limit: '1mb' }));
  r.use('/integrations/email/decisions', express.urlencoded({ extended: false, limit: '16kb' }));
  r.route({
    method: 'post',
    path: '/integrations/slack/interactions',
    operationId: 'slackInteractions',
    summary: 'Slack button presses and modal submissions, verified by X-Slack-Signature and X-Slack-Request-Timestamp',
    bodyType: 'application/x-www-form-urlencoded',
    body: z.object({ payload: z.string() }),
    responses: { 200: SlackInteractionAnswer },
    errors: ['unauthenticated', 'invalid_request'],
    validatesItself: true,
  }, async (req, res) => {
    const raw = typeof req.body === 'string' ? req.body : '';
    const header = (n: string) => (typeof req.headers[n] === 'string' ? (req.headers[n] as string) : undefined);
    const answer = await slack.handle({ timestamp: header('x-slack-request-timestamp'), signature: header('x-slack-signature') }, raw);
    if (answer.status === 401) throw new AppError('unauthenticated', 'the Slack request signature is missing, stale or wrong');
    if (answer.status === 400) throw invalidRequest('not a Slack interaction the gateway handles');
    res.status(200).json(answer.body ?? {});
  });
  const sendPage = (res: express.Response, p: { status: number; html: string }) => {
    res.set(PAGE_HEADERS).status(p.status).type('html').send(p.html);
  };
  r.route({
    method: 'get',
    path: '/integrations/email/decisions/{token}',
    operationId: 'emailDecisionPage',
    summary: 'The confirmation page an approval email links to (never decides)',
    params: tokenParams,
    responses: { 200: { description: 'The confirmation page', contentType: 'text/html' } },
    errors: ['not_found', 'workflow_gone'],
    htmlErrors: true,
    validatesItself: true,
  }, async (req, res) => {
    sendPage(res, await email.show(String(req.params.token ?? '')));
  });
  r.route({
    method: 'post',
    path: '/integrations/email/decisions/{token}',
    operationId: 'emailDecide',
    summary: 'Decide from the confirmation page: the link’s signature binds the person, the approval and the decision; single use',
    params: tokenParams,
    bodyType: 'application/x-www-form-urlencoded',
    body: z.object({ reason: z.string().max(1000).optional() }),
    responses: { 200: { description: 'Decided: a page saying so', contentType: 'text/html' } },
    errors: ['not_found', 'workflow_gone', 'conflict', 'forbidden', 'invalid_request'],
    htmlErrors: true,
    validatesItself: true,
  }, async (req, res) => {
    sendPage(res, await email.decide(String(req.params.token ?? ''), (req.body ?? {}) as { reason?: unknown }));
  });
  return r.router;
}
