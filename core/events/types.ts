// The event types the gateway sends, one list each, shared by the server and the dashboard.

/** Webhook subscriptions: what an organisation's endpoints can subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  'approval.raised',
  'approval.resolved',
  'approval.executed',
  'approval.execution_failed',
  // Where an approval was announced (Slack, email): each delivery's final state (issue 30).
  'notification.delivered',
  'notification.failed',
  // A re-list of a connected MCP server (refresh, list_changed, schedule) added, removed or changed tools.
  'mcp_server.tools_changed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** A person's live stream (GET /v1/events, the dashboard's inbox): approvals they may act on, as they change. */
export const USER_EVENT_TYPES = [
  'approval.raised',
  'approval.resolved',
  'approval.bubbled',
  'approval.executed',
  'approval.execution_failed',
  'approval.expired',
  'notification.delivered',
  'notification.failed',
] as const;
export type UserEventType = (typeof USER_EVENT_TYPES)[number];
