import { describe, expect, it } from 'vitest';
import { globMatch, isValidPattern, matchesPattern, validatePattern } from '../../../core/permissions/patterns.ts';

describe('matchesPattern', () => {
  it.each([
    // literal
    ['slack:post:C1', 'slack:post:C1', true],
    ['slack:post:C1', 'slack:post:C2', false],
    ['slack:post:C1', 'slack:read:C1', false],
    ['slack:post:C1', 'github:post:C1', false],
    // whole-segment *
    ['slack:post:*', 'slack:post:C1', true],
    ['slack:post:*', 'slack:post:<missing>', true],
    ['slack:*:*', 'slack:read:C1', true],
    ['*:*:*', 'github:merge:7', true],
    ['*:*:*', 'http:GET:h/x', true],
    ['*:post:C1', 'slack:post:C1', true],
    ['slack:*:C1', 'slack:read:C1', true],
    ['slack:*:C1', 'slack:read:C2', false],
    // `*` inside a service/action segment is literal (and invalid)
    ['sl*:post:C1', 'slack:post:C1', false],
    ['slack:po*:C1', 'slack:post:C1', false],
    // glob inside arg, spanning `/`
    ['drive:get:folder/*', 'drive:get:folder/a/b/c', true],
    ['drive:get:folder/*', 'drive:get:folder/', true],
    ['drive:get:folder/*', 'drive:get:folder', false],
    ['drive:get:*/report', 'drive:get:a/b/report', true],
    ['drive:get:a*c', 'drive:get:abbbc', true],
    ['drive:get:a*c', 'drive:get:abbbd', false],
    ['drive:get:*a*b*', 'drive:get:xaxbx', true],
    // escaped `*` in keys only matches a literal pattern or a glob
    ['slack:post:%2A', 'slack:post:%2A', true],
    ['slack:post:%2A', 'slack:post:C1', false],
    // http: ANY verb, path glob spans `/`
    ['http:ANY:api.example.com/*', 'http:DELETE:api.example.com/a/b', true],
    ['http:ANY:api.example.com/*', 'http:GET:other.com/a', false],
    ['http:POST:api.example.com/*', 'http:POST:api.example.com/v1/x/y', true],
    ['http:POST:api.example.com/*', 'http:GET:api.example.com/v1', false],
    ['http:*:api.example.com/*', 'http:PUT:api.example.com/v1', true],
    ['http:POST:api.example.com/v1/*/items', 'http:POST:api.example.com/v1/a/b/items', true],
    ['http:GET:api.example.com/a', 'http:GET:api.example.com/a', true],
    ['http:GET:api.example.com/a', 'http:GET:api.example.com/a/b', false],
    ['http:GET:*', 'http:GET:anything.com/x', true],
    ['*:ANY:h.com/*', 'http:GET:h.com/x', true],
    // host glob stays inside the host
    ['http:GET:*.example.com/*', 'http:GET:api.example.com/x', true],
    ['http:GET:*.example.com/*', 'http:GET:evil.com/x.example.com/y', false],
    ['http:GET:*.example.com/*', 'http:GET:api.example.com:8080/x', false],
    ['http:GET:api.example.com:*/*', 'http:GET:api.example.com:8080/x', true],
    // ANY is only special for http keys
    ['svc:ANY:*', 'svc:post:x', false],
    ['svc:ANY:*', 'svc:ANY:x', true],
    // malformed patterns match nothing
    ['slack:post', 'slack:post:x', false],
    ['', 'slack:post:x', false],
    ['http:GET:nohost', 'http:GET:nohost', false],
  ])('%s vs %s → %s', (pattern, key, expected) => {
    expect(matchesPattern(pattern, key)).toBe(expected);
  });
});

describe('globMatch', () => {
  it('runs in linear time on adversarial input', () => {
    const pattern = `${'*a'.repeat(50)}b`;
    const text = 'a'.repeat(20000);
    const start = performance.now();
    expect(globMatch(pattern, text)).toBe(false);
    expect(performance.now() - start).toBeLessThan(2000);
  });
});

describe('isValidPattern', () => {
  it.each([
    'slack:post:C1',
    'slack:post:*',
    'slack:*:*',
    '*:*:*',
    'drive:get:folder/*',
    'http:ANY:api.example.com/*',
    'http:POST:api.example.com/v1/*',
    'http:*:*',
    'http:GET:*.example.com/*',
    'http:GET:[::1]:8080/x',
    'slack:post:a:b',
  ])('accepts %s', (pattern) => {
    expect(isValidPattern(pattern)).toBe(true);
  });

  it.each([
    '',
    'slack',
    'slack:post',
    ':post:x',
    'slack::x',
    'slack:post:',
    'sl*ck:post:x',
    'slack:po*t:x',
    'sl ack:post:x',
    'slack:post:a\nb',
    'http:get:h/x',
    'http:G3T:h/x',
    'http:GET:api.example.com',
    'http:GET:/x',
    'http:GET:API.example.com/x',
    `slack:post:${'x'.repeat(3000)}`,
  ])('rejects %j', (pattern) => {
    const result = validatePattern(pattern);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toBeTruthy();
  });
});
