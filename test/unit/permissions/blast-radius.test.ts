// The pure blast-radius computation: planted where allow_remember plants, judged by checkPermission.
import { describe, expect, it } from 'vitest';
import { blastRadius, chainOf } from '../../../core/permissions/blast-radius.ts';
import type { Identity, Rule } from '../../../core/permissions/chain.ts';

const user: Identity = { id: 'u', kind: 'user', parentId: null, inheritPermissions: false };
const bot: Identity = { id: 'bot', kind: 'agent', parentId: 'u', inheritPermissions: false };
const other: Identity = { id: 'other', kind: 'agent', parentId: 'u', inheritPermissions: false };
const heir: Identity = { id: 'heir', kind: 'subagent', parentId: 'bot', inheritPermissions: true };
const loner: Identity = { id: 'loner', kind: 'subagent', parentId: 'bot', inheritPermissions: false };
const identities = new Map([user, bot, other, heir, loner].map((i) => [i.id, i]));
const now = new Date('2026-01-01T00:00:00Z');
const base = { identities, rules: [] as Rule[], resolverId: 'u', now, pastCalls: [] };
const gated = (id: string, requesterId: string, ...keys: string[]) => ({ id, requesterId, keys });

describe('blast radius', () => {
  it('plants on the requester and counts only what the new rules help cover', () => {
    const r = blastRadius({
      ...base,
      approval: gated('a', 'bot', 'svc:write:x'),
      tierKeys: ['svc:write:*'],
      pending: [gated('a', 'bot', 'svc:write:x'), gated('b', 'bot', 'svc:write:y'), gated('c', 'bot', 'svc:read:*'), gated('d', 'other', 'svc:write:y')],
      pastCalls: [gated('c1', 'bot', 'svc:write:z'), gated('c2', 'other', 'svc:write:z'), gated('c3', 'u', 'svc:write:z')],
    });
    expect(r.targetIds).toEqual(['bot']);
    expect(r.coveredPendingIds).toEqual(['b']); // not itself, not another key, not another agent
    expect(r.coveredCallIds).toEqual(['c1']); // a user's own call was never gated
  });

  it('reaches an inheriting subagent through its parent, not a non-inheriting one', () => {
    const r = blastRadius({
      ...base,
      approval: gated('a', 'bot', 'svc:write:x'),
      tierKeys: ['svc:*:*'],
      pending: [gated('h', 'heir', 'svc:delete:1'), gated('l', 'loner', 'svc:delete:1')],
    });
    expect(r.coveredPendingIds).toEqual(['h']);
  });

  it('plants on the closest non-inheriting ancestor of an inheriting requester', () => {
    const r = blastRadius({ ...base, approval: gated('a', 'heir', 'svc:write:x'), tierKeys: ['svc:write:*'], pending: [gated('b', 'bot', 'svc:write:q')] });
    expect(r.targetIds).toEqual(['bot']);
    expect(r.coveredPendingIds).toEqual(['b']);
  });

  it('lets a deny rule win, as the engine does', () => {
    const deny: Rule = { id: 'd', identityId: 'bot', effect: 'deny', pattern: 'svc:write:secret', expiresAt: null };
    const r = blastRadius({ ...base, rules: [deny], approval: gated('a', 'bot', 'svc:write:x'), tierKeys: ['svc:write:*'], pending: [gated('b', 'bot', 'svc:write:secret')] });
    expect(r.coveredPendingIds).toEqual([]);
  });

  it('walks chains and refuses unknown ids', () => {
    expect(chainOf(identities, 'heir')?.map((i) => i.id)).toEqual(['heir', 'bot', 'u']);
    expect(chainOf(identities, 'nobody')).toBeNull();
    expect(blastRadius({ ...base, approval: gated('a', 'nobody', 'k:k:k'), tierKeys: ['k:k:*'], pending: [] })).toEqual({ targetIds: [], coveredPendingIds: [], coveredCallIds: [] });
  });
});

describe('blast radius of a tier with a condition', () => {
  const request = (amount: number) => ({ method: 'POST', url: 'https://pay.example.test/v1', host: 'pay.example.test', path: '/v1', query: {}, params: {}, body: { amount } });
  const input = {
    ...base,
    approval: gated('a', 'bot', 'pay:create:x'),
    tierKeys: ['pay:create:*'],
    tierCondition: 'body.amount <= 60',
    pending: [
      { ...gated('low', 'bot', 'pay:create:y'), request: request(30) },
      { ...gated('high', 'bot', 'pay:create:y'), request: request(80) },
      gated('unknown', 'bot', 'pay:create:y'),
    ],
    pastCalls: [gated('c1', 'bot', 'pay:create:z')],
  };

  it('counts a pending approval only when the condition holds for its request', () => {
    expect(blastRadius(input).coveredPendingIds).toEqual(['low']);
  });

  it('weighs past calls, which carry no request, by the keys', () => {
    expect(blastRadius(input).coveredCallIds).toEqual(['c1']);
  });
});
