// Approval notices as the org manages them: channels (Slack, email), the ordered routing rules,
// the reminder points; and where one approval was announced. Channels, rules and reminders are
// managed by org admins (people; agents never); an approval's deliveries are seen by whoever may
// see the approval. Secrets are sealed here and never returned.
import { randomUUID } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import type { z } from 'zod';
import { DEFAULT_REMINDERS } from '../../core/notifications/reminders.ts';
import type { Principal, UserPrincipal } from '../auth/principal.ts';
import { conflict, forbidden, invalidRequest, notFound } from '../errors.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import type { emailConfigInput, slackConfigInput} from './channel-config.ts';
import { channelSecretAad, splitEmail, splitSlack } from './channel-config.ts';
import * as store from './store.ts';

export function assertNoticeAdmin(p: Principal): asserts p is UserPrincipal {
  if (p.type !== 'user') throw forbidden('notification settings are managed by people signed in to the dashboard, not by agents');
  if (p.role !== 'admin') throw forbidden('notification settings are managed by org admins');
}

export const publicChannel = (c: store.ChannelRow) => ({
  id: c.id,
  kind: c.kind,
  name: c.name,
  config: c.config,
  created_by: c.created_by,
  created_at: c.created_at.toISOString(),
});

export const publicDelivery = (d: store.DeliveryRow) => ({
  id: d.id,
  channel_id: d.channel_id,
  channel: d.channel_name,
  kind: d.kind,
  purpose: d.purpose,
  target: d.target,
  status: d.status,
  attempts: d.attempts,
  error: d.error,
  created_at: d.created_at.toISOString(),
  finished_at: d.finished_at?.toISOString() ?? null,
});

export type NewChannelInput =
  | { kind: 'slack'; name: string; slack: z.output<typeof slackConfigInput> }
  | { kind: 'email'; name: string; email: z.output<typeof emailConfigInput> };

export interface RuleInput {
  name: string;
  match: { risk?: string[] | undefined; service?: string[] | undefined; action?: string[] | undefined; requester_id?: string[] | undefined };
  routes: { channel_id: string; to: 'resolver' | 'admins' | 'channel' }[];
}

const isUniqueViolation = (err: unknown) => (err as { cause?: { code?: string } })?.cause?.code === '23505' || (err as { code?: string })?.code === '23505';

export function createNotificationService(deps: {
  pool: DatabasePool;
  keyring: VaultKeyring;
  /** The approval as the viewer may see it (not_found otherwise). */
  readVisibleApproval: (p: Principal, id: string) => Promise<unknown>;
}) {
  const { pool, keyring } = deps;
  return {
    async createChannel(p: Principal, input: NewChannelInput) {
      assertNoticeAdmin(p);
      const split = input.kind === 'slack' ? splitSlack(input.slack) : splitEmail(input.email);
      if ('error' in split) throw invalidRequest(split.error ?? 'invalid channel', { field: 'email.password' });
      const id = randomUUID();
      try {
        const row = await store.createChannel(pool, {
          id,
          orgId: p.orgId,
          kind: input.kind,
          name: input.name,
          config: split.config,
          secretEnvelope: keyring.encrypt(JSON.stringify(split.secrets), channelSecretAad(id)),
          createdBy: p.identityId,
        });
        return publicChannel(row);
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict(`a channel named "${input.name}" already exists`, { field: 'name' });
        throw err;
      }
    },

    async listChannels(p: Principal) {
      assertNoticeAdmin(p);
      return (await store.listChannels(pool, p.orgId)).map(publicChannel);
    },

    async deleteChannel(p: Principal, id: string) {
      assertNoticeAdmin(p);
      const used = (await store.listRules(pool, p.orgId)).find((r) => r.routes.some((x) => x.channel_id === id));
      if (used) throw conflict(`routing rule "${used.name}" sends to this channel: change it first`, { rule_id: used.id });
      if (!(await store.softDeleteChannel(pool, p.orgId, id))) throw notFound('notification channel');
    },

    async listRules(p: Principal) {
      assertNoticeAdmin(p);
      return (await store.listRules(pool, p.orgId)).map(({ position: _p, ...r }) => r);
    },

    /** The whole ordered list at once; every route must name a live channel of the org. */
    async replaceRules(p: Principal, rules: RuleInput[]) {
      assertNoticeAdmin(p);
      const channels = await store.listChannels(pool, p.orgId);
      rules.forEach((r, i) =>
        r.routes.forEach((route, j) => {
          const channel = channels.find((c) => c.id === route.channel_id);
          if (!channel) throw invalidRequest(`rules[${i}].routes[${j}]: no such notification channel`, { field: `rules[${i}].routes[${j}].channel_id` });
          if (route.to === 'channel' && !(channel.kind === 'slack' && typeof channel.config.channel === 'string')) {
            throw invalidRequest(`rules[${i}].routes[${j}]: "channel" needs a Slack channel with a channel configured`, { field: `rules[${i}].routes[${j}].to` });
          }
        }),
      );
      const clean = rules.map((r) => ({
        name: r.name,
        match: Object.fromEntries(Object.entries(r.match).filter(([, v]) => v !== undefined && v.length > 0)) as Record<string, string[]>,
        routes: r.routes,
      }));
      await pool.transaction((tx) => store.replaceRules(tx, p.orgId, clean));
      return this.listRules(p);
    },

    async getReminders(p: Principal) {
      assertNoticeAdmin(p);
      return { reminders: (await store.getReminderMarks(pool, p.orgId)) ?? [...DEFAULT_REMINDERS] };
    },

    async putReminders(p: Principal, reminders: string[]) {
      assertNoticeAdmin(p);
      await store.putReminderMarks(pool, p.orgId, reminders);
      return { reminders };
    },

    /** Where the approval was announced, each delivery with its state ("announced where"). */
    async deliveriesOf(p: Principal, approvalId: string) {
      await deps.readVisibleApproval(p, approvalId);
      return (await store.deliveriesOf(pool, approvalId)).map(publicDelivery);
    },
  };
}
export type NotificationService = ReturnType<typeof createNotificationService>;
