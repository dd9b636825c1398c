// Whether the approval view offers "Bubble up" (server/approvals/present.ts): from the people
// its row carries (store.ts), through core/permissions/routing.ts.
import { describe, expect, it } from 'vitest';
import { bubbleUpPossible } from '../../../server/approvals/present.ts';

const user = { id: 'u', name: 'Ann', role: 'admin' as const, approver_id: null };
const row = (over: Partial<Parameters<typeof bubbleUpPossible>[0]> = {}): Parameters<typeof bubbleUpPossible>[0] => ({
  status: 'pending',
  routed_to: 'chain',
  resolver_id: 'u',
  people: { user, routed_from: null, approver: null, admin_ids: ['u'] },
  ...over,
});

describe('bubbleUpPossible', () => {
  it("is false for the only admin's own approval, true once another admin exists", () => {
    expect(bubbleUpPossible(row())).toBe(false);
    expect(bubbleUpPossible(row({ people: { user, routed_from: null, approver: null, admin_ids: ['u', 'v'] } }))).toBe(true);
  });

  it("goes by the user's approver while they are active and may decide", () => {
    const member = { ...user, role: 'member' as const, approver_id: 'd' };
    const approver = { id: 'd', name: 'Dana', role: 'approver' as const, active: true };
    expect(bubbleUpPossible(row({ people: { user: member, routed_from: null, approver, admin_ids: [] } }))).toBe(true);
    expect(bubbleUpPossible(row({ people: { user: member, routed_from: null, approver: { ...approver, active: false }, admin_ids: [] } }))).toBe(false);
    expect(bubbleUpPossible(row({ people: { user: member, routed_from: null, approver: { ...approver, role: 'member' }, admin_ids: [] } }))).toBe(false);
  });

  it('is true inside the chain below the user, and false once decided', () => {
    expect(bubbleUpPossible(row({ resolver_id: 'parent-agent' }))).toBe(true);
    expect(bubbleUpPossible(row({ resolver_id: 'parent-agent', status: 'allowed' }))).toBe(false);
  });
});
