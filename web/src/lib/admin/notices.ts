// Data of approval notices over the typed client: channels (their secrets go in, never come back),
// the ordered routing rules, the reminder points, and where one approval was announced.
import { api, unwrap, type components } from '../client.ts';

export type NoticeChannel = components['schemas']['NotificationChannel'];
export type NoticeRule = components['schemas']['NotificationRule'];
export type NoticeDelivery = components['schemas']['NotificationDelivery'];
export type RuleInput = Omit<NoticeRule, 'id'>;

export const listChannels = async () => (await unwrap(api.GET('/v1/notification-channels'))).channels;
export const addSlackChannel = (name: string, slack: { channel?: string; dm_resolver: boolean; bot_token: string; signing_secret: string }) =>
  unwrap(api.POST('/v1/notification-channels', { body: { kind: 'slack', name, slack } }));
export const addEmailChannel = (name: string, email: { host: string; port: number; starttls: boolean; user?: string; password?: string; from: string }) =>
  unwrap(api.POST('/v1/notification-channels', { body: { kind: 'email', name, email } }));
export const removeChannel = (id: string) => unwrap(api.DELETE('/v1/notification-channels/{id}', { params: { path: { id } } }));
export const listRules = async () => (await unwrap(api.GET('/v1/notification-rules'))).rules;
export const saveRules = async (rules: RuleInput[]) => (await unwrap(api.PUT('/v1/notification-rules', { body: { rules: rules as never } }))).rules;
export const getReminders = async () => (await unwrap(api.GET('/v1/notification-reminders'))).reminders;
export const saveReminders = async (reminders: string[]) => (await unwrap(api.PUT('/v1/notification-reminders', { body: { reminders } }))).reminders;
export const approvalDeliveries = async (approvalId: string) =>
  (await unwrap(api.GET('/v1/approvals/{id}/notifications', { params: { path: { id: approvalId } } }))).deliveries;

/** "reminder-2" → "Reminder 2"; "raised" → "Raised". */
export const purposeLabel = (p: string) => (p.startsWith('reminder-') ? `Reminder ${p.slice('reminder-'.length)}` : `${p[0]!.toUpperCase()}${p.slice(1)}`);
