// A notification channel's sealed secrets (the Slack bot token and signing secret, the SMTP
// password) opened for use, and an org's first channel of a kind with them: what deliveries,
// invitations and tool-change notices all need, in one place.
import type { DatabasePool } from 'slonik';
import type { VaultKeyring } from '../vault/keyring.ts';
import { channelSecretAad } from './channel-config.ts';
import * as store from './store.ts';

/** The channel's secrets, opened under the channel's own AAD. */
export function openChannelSecrets<T>(keyring: VaultKeyring, channel: store.ChannelWithSecret): T {
  return JSON.parse(keyring.decrypt(channel.secret_envelope, channelSecretAad(channel.id)).toString('utf8')) as T;
}

/** The org's first live channel of `kind` (the one it set up first), with its sealed secrets; null: none. */
export async function firstChannelWithSecret(pool: DatabasePool, orgId: string, kind: 'slack' | 'email'): Promise<store.ChannelWithSecret | null> {
  const first = (await store.listChannels(pool, orgId)).find((c) => c.kind === kind);
  return first ? store.getChannelWithSecret(pool, first.id) : null;
}
