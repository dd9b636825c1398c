// Response schemas of the notification routes (they feed the OpenAPI document and the typed client).
import { z } from 'zod';

export const NotificationChannel = z
  .strictObject({
    id: z.string(),
    kind: z.enum(['slack', 'email']),
    name: z.string(),
    config: z.record(z.string(), z.unknown()).describe('What is not secret: slack {channel, dm_resolver}; email {host, port, starttls, user, from}. Secrets are never returned.'),
    created_by: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'NotificationChannel' });

export const NotificationChannelList = z.strictObject({ channels: z.array(NotificationChannel) });

export const NotificationRule = z
  .strictObject({
    id: z.string(),
    name: z.string(),
    match: z.record(z.string(), z.array(z.string())),
    routes: z.array(z.strictObject({ channel_id: z.string(), to: z.enum(['resolver', 'admins', 'channel']) })),
  })
  .meta({ id: 'NotificationRule' });

export const NotificationRuleList = z.strictObject({ rules: z.array(NotificationRule) });

export const NotificationReminders = z.strictObject({ reminders: z.array(z.string()) }).meta({ id: 'NotificationReminders' });

export const NotificationDelivery = z
  .strictObject({
    id: z.string(),
    channel_id: z.string(),
    channel: z.string(),
    kind: z.enum(['slack', 'email']),
    purpose: z.string().describe('raised, bubbled or reminder-<n>'),
    target: z.string().describe('A Slack channel, or the id of the person notified'),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.number(),
    error: z.string().nullable(),
    created_at: z.string(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: 'NotificationDelivery' });

export const NotificationDeliveryList = z.strictObject({ deliveries: z.array(NotificationDelivery) });

export const SlackInteractionAnswer = z
  .object({ response_action: z.string().optional(), errors: z.record(z.string(), z.string()).optional() })
  .describe('Empty for a button press; for a modal submission, `clear` or the field errors');
