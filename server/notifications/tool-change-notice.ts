// Tool changes of a connected MCP server told to the org's admins through its notice channels
// (issue 43): an email to each active admin through the org's email channel, and a message in the
// org's Slack channel (the one its Slack notice channel posts to), each when configured. Best
// effort: a notice that cannot go is logged (never its secrets) and nothing else happens; the
// re-list that found the change never waits for it or fails with it.
import type { DatabasePool } from 'slonik';
import { toolChangeEmail, toolChangeSlackBlocks, toolChangeSlackText, type ToolChangeNotice } from '../../core/mcp-servers/change-notice.ts';
import type { Logger } from '../logger.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import { readEmailConfig, readSlackConfig, type EmailSecrets, type SlackSecrets } from './channel-config.ts';
import { openChannelSecrets } from './channel-secrets.ts';
import { slackApi } from './slack-api.ts';
import { smtpTransport } from './smtp.ts';
import * as store from './store.ts';

export interface ToolChangeNotifierDeps {
  pool: DatabasePool;
  keyring: VaultKeyring;
  logger: Logger;
  slackApiUrl: string;
}

type ToolChangeNotifierInput = ToolChangeNotice & { serverId: string };
export type ToolChangeNotifier = (orgId: string, notice: ToolChangeNotifierInput) => Promise<void>;

export function createToolChangeNotifier(deps: ToolChangeNotifierDeps): ToolChangeNotifier {
  const { pool, keyring, logger } = deps;

  async function withSecret<T>(channel: store.ChannelRow | undefined): Promise<{ channel: store.ChannelWithSecret; secrets: T } | null> {
    const sealed = channel ? await store.getChannelWithSecret(pool, channel.id) : null;
    if (!sealed) return null;
    return { channel: sealed, secrets: openChannelSecrets<T>(keyring, sealed) };
  }

  async function email(orgId: string, notice: ToolChangeNotifierInput, channel: store.ChannelRow | undefined) {
    const found = await withSecret<EmailSecrets>(channel);
    if (!found) return;
    const admins = await store.orgAdmins(pool, orgId);
    if (admins.length === 0) return;
    const cfg = readEmailConfig(found.channel.config);
    const message = toolChangeEmail(notice);
    const transport = smtpTransport(cfg, found.secrets.password);
    try {
      // One message per admin (no admin sees the others' addresses); one failing does not stop the rest.
      for (const admin of admins) {
        await transport.sendMail({ from: cfg.from, to: admin.email, ...message }).catch((err: unknown) => {
          logger.warn({ org_id: orgId, server_id: notice.serverId, channel_id: found.channel.id, identity_id: admin.id, error: (err as Error).message }, 'could not email an admin about MCP tool changes');
        });
      }
    } finally {
      transport.close();
    }
  }

  async function slack(notice: ToolChangeNotifierInput, channel: store.ChannelRow | undefined) {
    const target = channel ? readSlackConfig(channel.config).channel : undefined;
    if (!target) return; // a Slack channel that only sends direct messages has no channel to post in
    const found = await withSecret<SlackSecrets>(channel);
    if (!found) return;
    const api = slackApi(deps.slackApiUrl, found.secrets.bot_token);
    const id = target.startsWith('#') ? await api.channelId(target.slice(1)) : target;
    if (!id) throw new Error(`Slack channel ${target} not found`);
    const text = toolChangeSlackText(notice);
    await api.postMessage(id, text, toolChangeSlackBlocks(text));
  }

  return async (orgId, notice) => {
    const channels = await store.listChannels(pool, orgId);
    const first = (kind: string) => channels.find((c) => c.kind === kind);
    // Both channels at once, each failure caught where it happens (logged, never thrown).
    const logged = (kind: string) => (err: unknown) => {
      logger.warn({ org_id: orgId, server_id: notice.serverId, kind, error: (err as Error).message }, 'could not send the MCP tool change notice');
    };
    await Promise.all([email(orgId, notice, first('email')).catch(logged('email')), slack(notice, first('slack')).catch(logged('slack'))]);
  };
}
