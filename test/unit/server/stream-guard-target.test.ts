// Which open streams a credential change re-checks (server/auth/stream-guard.ts): the
// notification names an identity, an org, or nobody in particular (everyone).
import { describe, expect, it } from 'vitest';
import { concernsStream, credentialTarget } from '../../../server/auth/stream-guard.ts';

describe('credential change targets', () => {
  it('reads identity:<id>, org:<id>, and anything else as everyone', () => {
    expect(credentialTarget('identity:8d1c')).toEqual({ identity: '8d1c' });
    expect(credentialTarget('org:42')).toEqual({ org: '42' });
    for (const other of ['', undefined, 'identity:', 'session:1', 'org']) expect(credentialTarget(other)).toBe('everyone');
  });

  it("a change to an identity concerns its own streams and those of everyone below it, never a sibling's or another org's", () => {
    const subagent = { orgId: 'o1', chain: new Set(['sub', 'agent', 'ann']) };
    const sibling = { orgId: 'o1', chain: new Set(['agent2', 'ann']) };
    const bob = { orgId: 'o1', chain: new Set(['bob']) };
    const elsewhere = { orgId: 'o2', chain: new Set(['zed']) };
    const streams = [subagent, sibling, bob, elsewhere];
    const concerned = (payload: string) => streams.filter((s) => concernsStream(credentialTarget(payload), s));
    expect(concerned('identity:agent')).toEqual([subagent]);
    expect(concerned('identity:ann')).toEqual([subagent, sibling]);
    expect(concerned('identity:bob')).toEqual([bob]);
    expect(concerned('org:o1')).toEqual([subagent, sibling, bob]);
    expect(concerned('')).toEqual(streams);
  });
});
