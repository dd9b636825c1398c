// Data of the webhooks page over the typed client. The signing secret is in the creation answer
// only; the page shows it once.
import type { WebhookEventType as EventType } from '../../../../core/events/types.ts';
import { api, unwrap, type components } from '../client.ts';

export type Webhook = components['schemas']['Webhook'];
export type WebhookEvent = components['schemas']['WebhookEventSummary'];

export { WEBHOOK_EVENT_TYPES as EVENT_TYPES, type WebhookEventType as EventType } from '../../../../core/events/types.ts';

export const listWebhooks = async () => (await unwrap(api.GET('/v1/webhooks'))).webhooks;
export const createWebhook = (body: { url: string; events: EventType[]; description?: string }) => unwrap(api.POST('/v1/webhooks', { body }));
export const deleteWebhook = (id: string) => unwrap(api.DELETE('/v1/webhooks/{id}', { params: { path: { id } } }));
export const sendTest = (id: string) => unwrap(api.POST('/v1/webhooks/{id}/test', { params: { path: { id } } }));
export const listEvents = async (id: string) => (await unwrap(api.GET('/v1/webhooks/{id}/events', { params: { path: { id } } }))).events;
export const redeliver = (id: string, eventId: string) =>
  unwrap(api.POST('/v1/webhooks/{id}/events/{eventId}/redeliver', { params: { path: { id, eventId } } }));
