import { describe, expect, it } from 'vitest';
import { ApiError, sessionLost } from '../../../web/src/lib/client.ts';

describe('sessionLost: which errors send the dashboard to sign-in', () => {
  it('is true only for a 401 unauthenticated (the session itself is gone)', () => {
    expect(sessionLost(new ApiError(401, { code: 'unauthenticated', message: 'sign in' }))).toBe(true);
  });

  it("is false for a third party's 401s, which the page shows instead", () => {
    expect(sessionLost(new ApiError(401, { code: 'reauth_required', message: 'the provider revoked the grant' }))).toBe(false);
    expect(sessionLost(new ApiError(401, { code: 'needs_authentication', message: 'connect first' }))).toBe(false);
  });

  it('is false for other statuses and for errors that are not API errors', () => {
    expect(sessionLost(new ApiError(403, { code: 'forbidden', message: 'no' }))).toBe(false);
    expect(sessionLost(new Error('network down'))).toBe(false);
  });
});
