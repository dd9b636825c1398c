// The identities listing's keyset cursor: the last row's created_at in whole microseconds and its
// id, opaque to clients. Microseconds, not a Date: PostgreSQL keeps them, and a cursor rounded to
// the millisecond would skip or repeat identities created within the same millisecond.
import { invalidRequest } from '../errors.ts';
import type { IdentityPosition } from './page-store.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Since 1970, under 10^17 µs (the year 5138): always within PostgreSQL's timestamps, so a forged one is a 400, never a database error. */
const MICROS = /^\d{1,17}$/;

export const encodeIdentityCursor = (p: { at_micros: string; id: string }): string =>
  Buffer.from(`${p.at_micros}|${p.id}`).toString('base64url');

/** The position a cursor names; 400 `invalid_request` naming `cursor` for anything this module did not write. */
export function decodeIdentityCursor(cursor: string): IdentityPosition {
  const [micros, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (rest.length > 0 || !micros || !MICROS.test(micros) || !id || !UUID.test(id)) {
    throw invalidRequest('cursor is not valid: pass back a next_cursor of this listing', { field: 'cursor' });
  }
  return { atMicros: BigInt(micros), id: id.toLowerCase() };
}
