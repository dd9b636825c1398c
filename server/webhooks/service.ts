// Webhook subscriptions of an org. Each method: authorize → load/validate → write. Managed by the
// org's admins only (people; agents never). The signing secret is generated here, sealed in the
// vault format (AAD webhook:<id>) and returned exactly once, by `create`.
import { randomUUID } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import { groupAttempts, needsWorkflowState, summarize } from '../../core/webhooks/delivery-log.ts';
import { generateWebhookSecret } from '../../core/webhooks/signing.ts';
import type { WebhookEventType } from '../../workflows/webhook-definitions.ts';
import type { Principal, UserPrincipal } from '../auth/principal.ts';
import { forbidden, notFound } from '../errors.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import type { ManualDeliveries } from './manual.ts';
import * as store from './store.ts';

export const webhookSecretAad = (webhookId: string) => `webhook:${webhookId}`;

export interface CreateWebhookInput {
  url: string;
  events: readonly WebhookEventType[];
  description?: string | undefined;
}

export function publicWebhook(w: store.WebhookRow) {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    description: w.description,
    created_by: w.created_by,
    created_at: w.created_at.toISOString(),
  };
}

export function publicDelivery(d: store.DeliveryRow) {
  return {
    id: d.id,
    event_id: d.event_id,
    event_type: d.event_type,
    attempt: d.attempt,
    status_code: d.status_code,
    error: d.error,
    duration_ms: d.duration_ms,
    attempted_at: d.attempted_at.toISOString(),
  };
}

export function assertOrgAdmin(p: Principal): asserts p is UserPrincipal {
  if (p.type !== 'user') throw forbidden('webhooks are managed by people signed in to the dashboard, not by agents');
  if (p.role !== 'admin') throw forbidden('webhooks are managed by org admins');
}

export function createWebhookService(deps: { pool: DatabasePool; keyring: VaultKeyring; manual: ManualDeliveries }) {
  const { pool, keyring, manual } = deps;

  async function load(p: UserPrincipal, id: string): Promise<store.WebhookRow> {
    const row = await store.getWebhook(pool, p.orgId, id);
    if (!row) throw notFound('webhook');
    return row;
  }

  return {
    /** The only answer that ever carries the signing secret. */
    async create(p: Principal, input: CreateWebhookInput) {
      assertOrgAdmin(p);
      const id = randomUUID();
      const secret = generateWebhookSecret();
      const row = await store.createWebhook(pool, {
        id,
        orgId: p.orgId,
        url: input.url,
        events: [...new Set(input.events)],
        secretEnvelope: keyring.encrypt(secret, webhookSecretAad(id)),
        description: input.description ?? null,
        createdBy: p.identityId,
      });
      return { ...publicWebhook(row), secret };
    },

    async list(p: Principal) {
      assertOrgAdmin(p);
      return (await store.listWebhooks(pool, p.orgId)).map(publicWebhook);
    },

    async deliveries(p: Principal, id: string, limit: number) {
      assertOrgAdmin(p);
      const row = await load(p, id);
      return (await store.listDeliveries(pool, row.id, limit)).map(publicDelivery);
    },

    /** The delivery log per event: state, attempts, last answer, next retry (from the event's workflow). */
    async events(p: Principal, id: string, limit: number) {
      assertOrgAdmin(p);
      const row = await load(p, id);
      const groups = groupAttempts(await store.listRecentEventAttempts(pool, row.id, limit));
      return Promise.all(
        groups.map(async (g) => summarize(g, needsWorkflowState(g) ? await manual.workflowState(row.id, g[0]!.event_id) : null)),
      );
    },

    async sendTest(p: Principal, id: string) {
      assertOrgAdmin(p);
      const row = await load(p, id);
      return manual.sendTest(row.id, p.identityId);
    },

    async redeliver(p: Principal, id: string, eventId: string) {
      assertOrgAdmin(p);
      const row = await load(p, id);
      if ((await store.eventTypeOf(pool, row.id, eventId)) === null) throw notFound('delivery of this event');
      return manual.redeliver(row.id, eventId);
    },

    /** Soft delete: history stays, pending retries stop at their next attempt. */
    async remove(p: Principal, id: string) {
      assertOrgAdmin(p);
      if (!(await store.softDeleteWebhook(pool, p.orgId, id))) throw notFound('webhook');
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
