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

/**
 * The approval's headline: what ran when the approver allowed an edited request (the amount they
 * set, not the agent's), else what the agent asked for.
 */
export function headlineOf(a: { action: { description: string } | null; modified_by_approver?: boolean; edited_description?: string }): string {
  if (a.modified_by_approver && a.edited_description) return a.edited_description;
  return a.action?.description ?? 'An action';
}
