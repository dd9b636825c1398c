// Who decides an approval past the requester's user (core/permissions/routing.ts).
import { describe, expect, it } from 'vitest';
import { canBubble, nextRouting, resolversAt, whyYours, type Person } from '../../../core/permissions/routing.ts';

const person = (id: string, role: Person['role'], approverId: string | null = null, active = true): Person => ({ id, name: id[0]!.toUpperCase() + id.slice(1), role, approverId, active });

const dana = person('dana', 'approver');
const sam = person('sam', 'member', 'dana');
const ann = person('ann', 'admin');
const bob = person('bob', 'admin');
const lee = person('lee', 'member');

describe('nextRouting', () => {
  it('goes from the user to their approver, then to the admins, then nowhere', () => {
    const people = [dana, sam, ann, bob, lee];
    expect(nextRouting('chain', sam, people)).toEqual({ stage: 'approver', resolverIds: ['dana'] });
    expect(nextRouting('approver', sam, people)).toEqual({ stage: 'admins', resolverIds: ['ann', 'bob'] });
    expect(nextRouting('admins', sam, people)).toBeNull();
  });

  it('skips a missing or deactivated approver, and leaves the user out of the admins', () => {
    expect(nextRouting('chain', lee, [lee, ann])).toEqual({ stage: 'admins', resolverIds: ['ann'] });
    expect(nextRouting('chain', sam, [sam, { ...dana, active: false }, ann])).toEqual({ stage: 'admins', resolverIds: ['ann'] });
    // Named while an approver, since made a plain member: no longer decides for Sam.
    expect(nextRouting('chain', sam, [sam, { ...dana, role: 'member' }, ann])).toEqual({ stage: 'admins', resolverIds: ['ann'] });
    // An admin may be someone's approver.
    expect(nextRouting('chain', { ...sam, approverId: 'bob' }, [sam, ann, bob])).toEqual({ stage: 'approver', resolverIds: ['bob'] });
    expect(nextRouting('chain', ann, [ann, bob])).toEqual({ stage: 'admins', resolverIds: ['bob'] });
    // The only admin's own approval has nobody above.
    expect(nextRouting('chain', ann, [ann, lee])).toBeNull();
    // Inactive admins decide nothing.
    expect(nextRouting('chain', lee, [lee, { ...ann, active: false }])).toBeNull();
  });

  it('names everyone who may decide at a stage', () => {
    expect(resolversAt('approver', 'dana', [dana, ann])).toEqual(['dana']);
    expect(resolversAt('admins', 'dana', [dana, ann, bob, { ...person('cy', 'admin'), active: false }])).toEqual(['ann', 'bob']);
    expect(resolversAt('chain', 'sam', [sam])).toEqual(['sam']);
  });
});

describe('whyYours', () => {
  it('says why an approval routed to you is yours, and nothing otherwise', () => {
    expect(whyYours(dana, { stage: 'approver', resolverId: 'dana', routedFrom: sam, user: sam })).toBe("bubbled from Sam: you are Sam's approver");
    expect(whyYours(ann, { stage: 'admins', resolverId: 'dana', routedFrom: dana, user: sam })).toBe("bubbled from Dana: it went to the org's admins");
    expect(whyYours(dana, { stage: 'admins', resolverId: 'dana', routedFrom: dana, user: sam })).toBeNull();
    expect(whyYours(ann, { stage: 'chain', resolverId: 'sam', routedFrom: null, user: sam })).toBeNull();
    expect(whyYours(lee, { stage: 'approver', resolverId: 'dana', routedFrom: sam, user: sam })).toBeNull();
  });
});

describe('canBubble', () => {
  it('moves an approval inside the chain below the user, always', () => {
    expect(canBubble({ stage: 'chain', resolverId: 'parent-agent', user: ann }, [ann])).toBe(true);
  });

  it('from the user or their approver, only when someone is above', () => {
    expect(canBubble({ stage: 'chain', resolverId: 'sam', user: sam }, [dana, sam, ann])).toBe(true);
    expect(canBubble({ stage: 'approver', resolverId: 'dana', user: sam }, [dana, sam, ann])).toBe(true);
    // The only admin's own approval, and one already with the admins: nobody is above.
    expect(canBubble({ stage: 'chain', resolverId: 'ann', user: ann }, [ann, lee])).toBe(false);
    expect(canBubble({ stage: 'admins', resolverId: 'sam', user: sam }, [dana, sam, ann])).toBe(false);
    // With the approver, and no admin besides the user: nobody.
    expect(canBubble({ stage: 'approver', resolverId: 'bob', user: ann }, [{ ...ann, approverId: 'bob' }, { ...bob, active: false }])).toBe(false);
  });
});
