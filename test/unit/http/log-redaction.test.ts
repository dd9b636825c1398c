// The access log's view of a URL: credentials in paths and query strings never reach a log line.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signLink } from '../../../core/notifications/email-links.ts';
import { newToken } from '../../../server/auth/tokens.ts';
import { loggableUrl, REDACTED } from '../../../server/http/log-redaction.ts';

const linkToken = signLink(Buffer.alloc(32, 7), { linkId: randomUUID(), approvalId: randomUUID(), personId: randomUUID(), decision: 'deny', expiresAt: 1_900_000_000 });

describe('loggableUrl', () => {
  it('replaces an email decision link token in its path, keeping the route', () => {
    const line = loggableUrl(`/v1/integrations/email/decisions/${linkToken}`);
    expect(line).toEqual({ path: `/v1/integrations/email/decisions/${REDACTED}` });
    expect(JSON.stringify(line)).not.toContain(linkToken.split('.')[2]);
  });

  it('replaces token-shaped segments on any route (agent keys, sessions, invitations, JWTs)', () => {
    for (const token of [newToken('osk_'), newToken('gws_'), newToken('gwi_'), 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhYmMifQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ']) {
      expect(loggableUrl(`/v1/invitations/${encodeURIComponent(token)}/x`).path).toBe(`/v1/invitations/${REDACTED}/x`);
    }
  });

  it('keeps ids and ordinary names', () => {
    const id = randomUUID();
    expect(loggableUrl(`/v1/approvals/${id}/resolve`)).toEqual({ path: `/v1/approvals/${id}/resolve` });
    expect(loggableUrl('/v1/services/widgets?limit=20&status=pending')).toEqual({ path: '/v1/services/widgets', query: 'limit=20&status=pending' });
  });

  it('replaces credential query values (OAuth code and state, tokens) and token-shaped values under any name', () => {
    const code = newToken('');
    const out = loggableUrl(`/v1/connections/callback?code=${code}&state=abc123&scope=read&next=${newToken('gws_')}`);
    expect(out.path).toBe('/v1/connections/callback');
    expect(out.query).toBe(`code=${REDACTED}&state=${REDACTED}&scope=read&next=${REDACTED}`);
    expect(loggableUrl('/v1/auth/sso/callback?STATE=x&Code=y').query).toBe(`STATE=${REDACTED}&Code=${REDACTED}`);
  });
});
