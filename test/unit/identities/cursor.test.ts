// The identities listing's cursor (server/identities/cursor.ts): what it writes it reads back
// exactly, to the microsecond; anything else is 400 naming `cursor`.
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../server/errors.ts';
import { decodeIdentityCursor, encodeIdentityCursor } from '../../../server/identities/cursor.ts';

const ID = '0b6f1e7a-3c2d-4e5f-8a9b-0c1d2e3f4a5b';

describe('the identities cursor', () => {
  it('reads back the position it wrote, microseconds included', () => {
    const at_micros = '1767225600000123';
    expect(decodeIdentityCursor(encodeIdentityCursor({ at_micros, id: ID }))).toEqual({ atMicros: 1767225600000123n, id: ID });
  });

  it.each([
    ['not base64 of a position', 'not-a-cursor'],
    ['a date instead of microseconds', Buffer.from(`2026-01-01T00:00:00.000Z|${ID}`).toString('base64url')],
    ['no id', Buffer.from('12|').toString('base64url')],
    ['an id that is no uuid', Buffer.from('12|abc').toString('base64url')],
    ['a third part', Buffer.from(`12|${ID}|x`).toString('base64url')],
    ['a time past what PostgreSQL holds', Buffer.from(`${'9'.repeat(18)}|${ID}`).toString('base64url')],
    ['a time before 1970', Buffer.from(`-${'9'.repeat(17)}|${ID}`).toString('base64url')],
  ])('refuses %s with invalid_request naming cursor', (_what, cursor) => {
    let thrown: unknown;
    try {
      decodeIdentityCursor(cursor);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ code: 'invalid_request', details: { field: 'cursor' } });
  });
});
