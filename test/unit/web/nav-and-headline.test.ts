// The shell's navigation (web/src/lib/components/shell/nav.ts) and an approval's headline
// (web/src/lib/components/approvals/decision.ts).
import { describe, expect, it } from 'vitest';
import { headlineOf } from '../../../web/src/lib/components/approvals/decision.ts';
import { currentHref, NAV } from '../../../web/src/lib/components/shell/nav.ts';

describe('navigation', () => {
  it('lists People for everyone, not only admins', () => {
    expect(NAV.find((i) => i.label === 'People')).toEqual({ href: '/settings/people', label: 'People' });
  });

  it('marks only the most specific entry of a page current', () => {
    expect(currentHref(NAV, '/settings/people')).toBe('/settings/people');
    expect(currentHref(NAV, '/settings')).toBe('/settings');
    expect(currentHref(NAV, '/approvals/0b6a')).toBe('/approvals');
    expect(currentHref(NAV, '/signin')).toBeNull();
  });
});

describe("an approval's headline", () => {
  const action = { description: 'Refund 5000 of payment pi_123' };
  it('is what ran when the approver allowed an edit, else what the agent asked', () => {
    expect(headlineOf({ action, modified_by_approver: true, edited_description: 'Refund 50 of payment pi_123' })).toBe('Refund 50 of payment pi_123');
    expect(headlineOf({ action })).toBe('Refund 5000 of payment pi_123');
    expect(headlineOf({ action: null })).toBe('An action');
  });
});
