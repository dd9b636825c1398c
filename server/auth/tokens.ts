// Bearer token kinds are told apart by format, then checked by different validators
// (DESIGN.md §5): agent keys `osk_…`, dashboard sessions `gws_…`, OAuth access tokens are JWTs.
import { createHash, randomBytes } from 'node:crypto';

export const AGENT_KEY_PREFIX = 'osk_';
export const SESSION_PREFIX = 'gws_';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Base62 of the bytes as one big number: no padding, no ambiguous symbols for copy-paste. */
export function base62(bytes: Buffer): string {
  let n = BigInt('0x' + (bytes.toString('hex') || '0'));
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(Math.ceil((bytes.length * 8) / Math.log2(62)), '0');
}

/** 32 random bytes (256 bits) behind a kind prefix. */
export function newToken(prefix: string): string {
  return prefix + base62(randomBytes(32));
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

export type TokenKind = 'agent_key' | 'session' | 'jwt' | 'unknown';

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export function tokenKind(token: string): TokenKind {
  if (token.startsWith(AGENT_KEY_PREFIX) && /^osk_[0-9A-Za-z]{40,60}$/.test(token)) return 'agent_key';
  if (token.startsWith(SESSION_PREFIX) && /^gws_[0-9A-Za-z]{40,60}$/.test(token)) return 'session';
  if (JWT.test(token)) return 'jwt';
  return 'unknown';
}

/** What an agent key is listed by: the prefix plus its first characters, never the whole key. */
export function displayPrefix(token: string): string {
  return token.slice(0, AGENT_KEY_PREFIX.length + 6);
}
