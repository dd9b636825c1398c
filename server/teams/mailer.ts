// The seam through which an invitation's link is sent by email. Email delivery arrives with the
// approval-routing issue (30, SMTP channels); until a deployment configures it, invitations are
// shown once to the admin and the answer says `email_sent: false`.

export interface InvitationEmail {
  to: string;
  orgName: string;
  invitedBy: string;
  role: string;
  /** The single-use link; the only place besides the admin's answer where the token appears. */
  link: string;
  expiresAt: Date;
}

export interface InvitationMailer {
  /** False: nothing is sent, and the answer says so. */
  readonly configured: boolean;
  send(mail: InvitationEmail): Promise<void>;
}

export const notConfiguredMailer: InvitationMailer = {
  configured: false,
  async send() {
    throw new Error('email delivery is not configured');
  },
};
