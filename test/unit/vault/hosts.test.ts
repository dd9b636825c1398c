import { describe, expect, it } from 'vitest';
import { checkHostPattern, hostMatches, secretAllowedForHost } from '../../../core/vault/hosts.ts';

describe('allowed_hosts entries', () => {
  it.each([
    ['API.Stripe.com', 'api.stripe.com'],
    ['*.example.com', '*.example.com'],
    ['127.0.0.1', '127.0.0.1'],
    ['[::1]', '[::1]'],
    ['localhost', 'localhost'],
  ])('accepts %s as %s', (raw, value) => {
    expect(checkHostPattern(raw)).toEqual({ ok: true, value });
  });

  it.each(['', 'https://api.stripe.com', 'api.stripe.com/v1', 'api.stripe.com:443', '*.com', '*', 'a.*.com', 'api*.x.com', '-bad.com', 'sp ace.com'])('refuses %j', (raw) => {
    expect(checkHostPattern(raw).ok).toBe(false);
  });
});

describe('matching a request host', () => {
  it('matches exact hosts and subdomains of a wildcard, never the bare domain or a look-alike', () => {
    expect(hostMatches('api.stripe.com', 'api.stripe.com')).toBe(true);
    expect(hostMatches('api.stripe.com', 'api.stripe.com.evil.io')).toBe(false);
    expect(hostMatches('*.example.com', 'a.example.com')).toBe(true);
    expect(hostMatches('*.example.com', 'a.b.example.com')).toBe(true);
    expect(hostMatches('*.example.com', 'example.com')).toBe(false);
    expect(hostMatches('*.example.com', 'evilexample.com')).toBe(false);
    expect(hostMatches('*.example.com', 'example.com.evil.io')).toBe(false);
  });

  it('a secret without a list may not be injected anywhere by raw HTTP', () => {
    expect(secretAllowedForHost(null, 'api.stripe.com')).toBe(false);
    expect(secretAllowedForHost([], 'api.stripe.com')).toBe(false);
    expect(secretAllowedForHost(['api.stripe.com'], 'API.STRIPE.COM')).toBe(true);
  });
});
