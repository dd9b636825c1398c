// Invitations by email (issue 29's seam, issue 30's channels): when the org has an email channel,
// the invitation's link goes to the invited address through it. Without one, nothing is sent and
// the admin's answer says so (`email_sent: false`): the link is shown to them once.
import { absoluteTime } from '../../core/text/when.ts';
import type { DatabasePool } from 'slonik';
import type { InvitationEmail, InvitationMailer } from '../teams/mailer.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import { readEmailConfig, type EmailSecrets } from './channel-config.ts';
import { firstChannelWithSecret, openChannelSecrets } from './channel-secrets.ts';
import { smtpTransport } from './smtp.ts';

/** The invitation's text: who invites, to what role, until when; the link is the only secret. */
export function invitationMessage(m: InvitationEmail): { subject: string; text: string } {
  return {
    subject: `You are invited to ${m.orgName} on the Agent Action Gateway`,
    text: [
      `${m.invitedBy} invites you to ${m.orgName} as ${m.role === 'admin' ? 'an admin' : `a ${m.role}`}.`,
      '',
      `Join: ${m.link}`,
      '',
      `The link works once and expires on ${absoluteTime(m.expiresAt)}. If you did not expect it, ignore this message.`,
    ].join('\n'),
  };
}

export function createInvitationMailer(deps: { pool: DatabasePool; keyring: VaultKeyring }): InvitationMailer {
  const emailChannel = (orgId: string) => firstChannelWithSecret(deps.pool, orgId, 'email');
  return {
    async configured(orgId) {
      return (await emailChannel(orgId)) !== null;
    },
    async send(orgId, mail) {
      const channel = await emailChannel(orgId);
      if (!channel) throw new Error('the organisation has no email channel');
      const cfg = readEmailConfig(channel.config);
      const { password } = openChannelSecrets<EmailSecrets>(deps.keyring, channel);
      const transport = smtpTransport(cfg, password);
      try {
        await transport.sendMail({ from: cfg.from, to: mail.to, ...invitationMessage(mail) });
      } finally {
        transport.close();
      }
    },
  };
}
