// The seam through which an invitation's link is sent by email: through the org's email channel
// (issue 30, server/notifications/invitation-mail.ts). An org without one gets the link shown once
// to the admin, and the answer says `email_sent: false`.

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
  /** False: nothing is sent for this org, and the answer says so. */
  configured(orgId: string): Promise<boolean>;
  send(orgId: string, mail: InvitationEmail): Promise<void>;
}

