// Who receives a people's event, judged against the viewer as they are at delivery (issue 4).
import { describe, expect, it } from 'vitest';
import { mayReceive, sameStanding, type ViewerNow } from '../../../server/events/visibility.ts';

const event = (userId: string, approvalId: string) => ({ user_id: userId, data: { approval_id: approvalId } });
const viewer = (role: ViewerNow['role'], readable: string[] = []): ViewerNow => ({ userId: 'me', role, readable: new Set(readable) });

describe('event visibility', () => {
  it('an admin receives the org’s events; nobody receives anything once no longer an active person', () => {
    expect(mayReceive(viewer('admin'), event('someone-else', 'a1'))).toBe(true);
    expect(mayReceive(viewer(null, ['a1']), event('me', 'a1'))).toBe(false);
  });

  it('anyone else: only events addressed to them about an approval they may still read', () => {
    expect(mayReceive(viewer('member', ['a1']), event('me', 'a1'))).toBe(true);
    expect(mayReceive(viewer('member', ['a1']), event('someone-else', 'a1'))).toBe(false);
    // Routed to them as an approver once, routed elsewhere since.
    expect(mayReceive(viewer('approver', []), event('me', 'a1'))).toBe(false);
  });

  it('a stream’s standing: admin or not, as it was opened', () => {
    expect(sameStanding(true, 'admin')).toBe(true);
    expect(sameStanding(true, 'member')).toBe(false);
    expect(sameStanding(false, 'approver')).toBe(true);
    expect(sameStanding(false, 'admin')).toBe(false);
    expect(sameStanding(false, null)).toBe(false);
  });
});
