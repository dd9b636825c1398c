// Words for an approval's state and its decision, shared by the inbox rows and the approval page.

/** A decided (or closed) approval's status, short. */
export const STATUS_TEXT: Record<string, string> = {
  pending: 'Pending',
  allowed: 'Allowed',
  denied: 'Denied',
  bubbled: 'Bubbled up',
  expired: 'Expired',
  superseded: 'Superseded',
  cancelled: 'Cancelled',
};

/** The recorded decision, as a verb phrase ("denied by …"). */
export const DECISION_TEXT: Record<string, string> = {
  allow_once: 'allowed once',
  allow: 'allowed once',
  allow_remember: 'allowed and remembered',
  allow_always: 'allowed and remembered',
  deny: 'denied',
  expire: 'expired',
  supersede: 'superseded',
  cancel: 'cancelled',
};
