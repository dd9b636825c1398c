import { describe, expect, it } from 'vitest';
import { checkPermission } from '../../../core/permissions/chain.ts';
import { injectedSecrets, PermissionKeyError, secretPermissionKey } from '../../../core/permissions/keys.ts';
import { suggestedTiers } from '../../../core/permissions/tiers.ts';

describe('secret:<NAME>:<host> keys', () => {
  it('names the secret and the host (lowercase, non-default port kept)', () => {
    expect(secretPermissionKey('STRIPE_KEY', new URL('https://API.Stripe.com/v1/charges'))).toBe('secret:STRIPE_KEY:api.stripe.com');
    expect(secretPermissionKey('K', new URL('http://127.0.0.1:8090/x'))).toBe('secret:K:127.0.0.1:8090');
    expect(() => secretPermissionKey('A:B', new URL('https://x.io'))).toThrow(PermissionKeyError);
    expect(injectedSecrets(['http:GET:x.io/a', 'secret:K:x.io:81'])).toEqual([{ name: 'K', host: 'x.io:81' }]);
  });

  it('broadens to any allowed host of that secret, never to other secrets', () => {
    const tiers = suggestedTiers(['http:GET:x.io/a', 'secret:K:x.io']);
    expect(tiers.map((t) => t.keys)).toEqual([
      ['http:GET:x.io/a', 'secret:K:x.io'],
      ['http:GET:x.io/*', 'secret:K:*'],
      ['http:ANY:x.io/*', 'secret:K:*'],
    ]);
    expect(tiers[1]!.description).toBe('Any GET request to x.io; Secret K toward any of its allowed hosts');
  });

  it('is walked on the chain: a host-only rule does not cover the injection', () => {
    const chain = [
      { id: 'a', kind: 'agent' as const, parentId: 'u', inheritPermissions: false },
      { id: 'u', kind: 'user' as const, parentId: null, inheritPermissions: false },
    ];
    const rule = (pattern: string) => ({ id: pattern, identityId: 'a', effect: 'allow' as const, pattern, expiresAt: null });
    const keys = ['http:GET:x.io/exfil/a', 'secret:PLANT:x.io'];
    expect(checkPermission({ chain, rules: [rule('http:GET:x.io/exfil/*')], keys, now: new Date() }).outcome).toBe('gap');
    expect(checkPermission({ chain, rules: [rule('http:GET:x.io/exfil/*'), rule('secret:PLANT:*')], keys, now: new Date() }).outcome).toBe('covered');
    expect(checkPermission({ chain, rules: [rule('http:GET:x.io/exfil/*'), rule('secret:OTHER:*')], keys, now: new Date() }).outcome).toBe('gap');
  });
});
