// The sign-in throttle's policy: per source, per account and source, per account (a ceiling that
// only delays addresses already failing), exponential backoff, never a long lockout of the owner.
import { describe, expect, it } from 'vitest';
import { afterSuccess, backoffSeconds, decideAttempt, LOGIN_BACKOFF, LOGIN_WINDOW_SECONDS, sourceOf, throttleKeys, type ThrottleCounter, type ThrottleKind } from '../../../server/auth/login-throttle.ts';

const T0 = new Date('2026-11-27T12:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

function fresh(email: string, source: string): ThrottleCounter[] {
  const keys = throttleKeys(email, source);
  return (Object.keys(keys) as ThrottleKind[]).map((kind) => ({ kind, key: keys[kind], failures: 0, lastFailureAt: null, blockedUntil: null }));
}

/** Runs failed attempts against `counters` (a shared map, as the table is), each at `when`. */
function fail(table: Map<string, ThrottleCounter>, email: string, source: string, when: Date) {
  const counters = fresh(email, source).map((c) => table.get(c.key) ?? c);
  const d = decideAttempt(counters, when);
  if (d.allowed) for (const u of d.updates) table.set(u.key, u);
  return d;
}

describe('sign-in throttle policy', () => {
  it('counts an IPv6 address by its /64 and an IPv4-mapped one as IPv4', () => {
    expect(sourceOf('203.0.113.5')).toBe('203.0.113.5');
    expect(sourceOf('::ffff:203.0.113.5')).toBe('203.0.113.5');
    expect(sourceOf('2001:db8:0:1:aaaa::1')).toBe('2001:db8:0:1::/64');
    expect(sourceOf('2001:0db8:0000:0001:ffff:1:2:3')).toBe('2001:db8:0:1::/64');
    expect(sourceOf('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(sourceOf('::1')).toBe('0:0:0:0::/64');
    expect(throttleKeys('A@x.test', '2001:db8:0:1::9').account_source).toBe(throttleKeys('a@x.test', '2001:db8:0:1::42').account_source);
  });

  it('backs off exponentially after the free attempts, capped', () => {
    const b = LOGIN_BACKOFF.account_source;
    expect(backoffSeconds(b, b.free)).toBe(0);
    expect(backoffSeconds(b, b.free + 1)).toBe(b.baseSeconds);
    expect(backoffSeconds(b, b.free + 2)).toBe(b.baseSeconds * 2);
    expect(backoffSeconds(b, b.free + 3)).toBe(b.baseSeconds * 4);
    expect(backoffSeconds(b, 10_000)).toBe(b.capSeconds);
  });

  it('holds back the guessing address, not the owner from another one', () => {
    const table = new Map<string, ThrottleCounter>();
    for (let i = 0; i <= LOGIN_BACKOFF.account_source.free; i++) expect(fail(table, 'Owner@x.test', '198.51.100.1', at(i)).allowed).toBe(true);
    const refused = fail(table, 'owner@x.test', '198.51.100.1', at(LOGIN_BACKOFF.account_source.free + 0.5));
    expect(refused).toEqual({ allowed: false, retryAfterSeconds: expect.any(Number) });
    expect(fail(table, 'owner@x.test', '203.0.113.5', at(10)).allowed).toBe(true);
  });

  it('the per-account ceiling delays only addresses already failing against the account, and briefly', () => {
    const table = new Map<string, ThrottleCounter>();
    // Guesses spread over many addresses, each under its own limit.
    for (let i = 0; i < LOGIN_BACKOFF.account.free + 5; i++) expect(fail(table, 'owner@x.test', `198.51.100.${i % 200}`, at(i * 0.01)).allowed).toBe(true);
    // An address that already failed here waits (at most the ceiling's cap)…
    const held = fail(table, 'owner@x.test', '198.51.100.1', at(2));
    expect(held).toEqual({ allowed: false, retryAfterSeconds: expect.any(Number) });
    expect((held as { retryAfterSeconds: number }).retryAfterSeconds).toBeLessThanOrEqual(LOGIN_BACKOFF.account.capSeconds);
    // …a new one (the owner's phone) does not.
    expect(fail(table, 'owner@x.test', '203.0.113.5', at(2)).allowed).toBe(true);
  });

  it('one address guessing across many accounts is held back on every account', () => {
    const table = new Map<string, ThrottleCounter>();
    for (let i = 0; i <= LOGIN_BACKOFF.source.free; i++) expect(fail(table, `user${i}@x.test`, '198.51.100.9', at(i)).allowed).toBe(true);
    expect(fail(table, 'someone-new@x.test', '198.51.100.9', at(LOGIN_BACKOFF.source.free + 1)).allowed).toBe(false);
    expect(fail(table, 'someone-new@x.test', '198.51.100.10', at(LOGIN_BACKOFF.source.free + 1)).allowed).toBe(true);
  });

  it('forgets after a quiet window, and a success clears the account and takes its own count back from the source', () => {
    const table = new Map<string, ThrottleCounter>();
    for (let i = 0; i < 8; i++) fail(table, 'a@x.test', '198.51.100.2', at(i * 100));
    expect(fail(table, 'a@x.test', '198.51.100.2', at(LOGIN_WINDOW_SECONDS * 2)).allowed).toBe(true);

    const t2 = new Map<string, ThrottleCounter>();
    for (let i = 0; i < 3; i++) fail(t2, 'b@x.test', '198.51.100.3', at(i));
    const counted = fresh('b@x.test', '198.51.100.3').map((c) => t2.get(c.key)!);
    const cleared = afterSuccess(counted, at(4));
    expect(cleared.find((c) => c.kind === 'account_source')).toMatchObject({ failures: 0, blockedUntil: null });
    expect(cleared.find((c) => c.kind === 'account')).toMatchObject({ failures: 0, blockedUntil: null });
    expect(cleared.find((c) => c.kind === 'source')!.failures).toBe(2);
  });
});
