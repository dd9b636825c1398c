// Email decision links: `<link id>.<expiry>.<signature>`, the signature an HMAC-SHA256 over the
// link id, the approval, the person, the decision and the expiry. Deciding from the link without
// a dashboard session is allowed only when it verifies against all five; the link id's row makes
// it single-use (server/notifications/email-links.ts). Pure.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type LinkDecision = 'allow_once' | 'deny';

export interface LinkClaims {
  linkId: string;
  approvalId: string;
  personId: string;
  decision: LinkDecision;
  /** Unix seconds: the approval's own expiry. */
  expiresAt: number;
}

const mac = (key: Buffer, c: LinkClaims) =>
  createHmac('sha256', key).update(`email-link:v1:${c.linkId}:${c.approvalId}:${c.personId}:${c.decision}:${c.expiresAt}`).digest('base64url');

export function signLink(key: Buffer, c: LinkClaims): string {
  return `${c.linkId}.${c.expiresAt}.${mac(key, c)}`;
}

/** The token's parts, unverified (the link id finds the row holding the rest). */
export function parseLinkToken(token: string): { linkId: string; expiresAt: number; signature: string } | null {
  const m = /^([0-9a-f-]{36})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  return m ? { linkId: m[1]!, expiresAt: Number(m[2]), signature: m[3]! } : null;
}

export function linkSignatureHolds(key: Buffer, c: LinkClaims, signature: string): boolean {
  const expected = Buffer.from(mac(key, c));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
