// Rule patterns over permission keys. Segments split on the first two `:`:
//   service, action (verb) — literal or a whole-segment `*`;
//   arg — glob where `*` matches any run of characters, `/` included.
// For `http` keys the verb `ANY` matches every verb, and the third segment is matched as
// host and path separately: `*` in the path spans `/`, but `*` in the host stays inside the
// host, so `http:GET:*.example.com/*` cannot match `evil.com/x.example.com/…`.
// Malformed patterns match nothing (both allow and deny rules are validated on creation).

import { HTTP_SERVICE, parsePermissionKey, splitHostPath } from './keys.ts';

export const ANY_VERB = 'ANY';
const MAX_PATTERN_LENGTH = 2048;

/** Glob match where `*` matches any run (possibly empty); linear-time, no regex backtracking. */
export function globMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let starP = -1;
  let starT = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (p < pattern.length && pattern[p] === '*') {
      starP = p++;
      starT = t;
    } else if (starP >= 0) {
      p = starP + 1;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

function matchesWhole(patternSegment: string, keySegment: string): boolean {
  return patternSegment === '*' || patternSegment === keySegment;
}

function matchesHostPath(patternSegment: string, keySegment: string): boolean {
  if (patternSegment === '*') return true;
  const pat = splitHostPath(patternSegment);
  const key = splitHostPath(keySegment);
  if (pat === null || key === null) return false;
  return globMatch(pat.host, key.host) && globMatch(pat.path, key.path);
}

export function matchesPattern(pattern: string, key: string): boolean {
  const pat = parsePermissionKey(pattern);
  const k = parsePermissionKey(key);
  if (pat === null || k === null) return false;
  if (!matchesWhole(pat.service, k.service)) return false;
  const http = k.service === HTTP_SERVICE;
  if (!(matchesWhole(pat.action, k.action) || (http && pat.action === ANY_VERB))) return false;
  return http ? matchesHostPath(pat.arg, k.arg) : globMatch(pat.arg, k.arg);
}

// Service/action names: no `:`, `*`, whitespace or control characters.
const NAME = /^[^:*\s\p{Cc}]+$/u;
const HTTP_VERB = /^[A-Z]+$/;
const CONTROL = /\p{Cc}/u;

export type PatternValidation = { ok: true } | { ok: false; reason: string };

/** Checks a pattern before it becomes a rule; returns the reason when it is rejected. */
export function validatePattern(pattern: string): PatternValidation {
  if (pattern.length > MAX_PATTERN_LENGTH) return { ok: false, reason: 'pattern is too long' };
  const parsed = parsePermissionKey(pattern);
  if (parsed === null) return { ok: false, reason: 'expected service:action:arg' };
  const { service, action, arg } = parsed;
  if (service !== '*' && !NAME.test(service)) return { ok: false, reason: 'invalid service segment' };
  if (action !== '*' && !NAME.test(action)) return { ok: false, reason: 'invalid action segment' };
  if (arg === '') return { ok: false, reason: 'empty arg segment (use * for any)' };
  if (CONTROL.test(arg)) return { ok: false, reason: 'control characters in arg segment' };
  if (service === HTTP_SERVICE) {
    if (action !== '*' && !HTTP_VERB.test(action)) {
      return { ok: false, reason: 'HTTP verb must be uppercase letters, ANY or *' };
    }
    if (arg !== '*') {
      // A host without `/` would never match a key (keys always carry host/path).
      const hostPath = splitHostPath(arg);
      if (hostPath === null) {
        return { ok: false, reason: 'http pattern needs host/path (e.g. api.example.com/*) or *' };
      }
      if (hostPath.host === '') return { ok: false, reason: 'empty host in http pattern' };
      // Key hosts are lowercase; an uppercase host pattern would silently never match.
      if (hostPath.host !== hostPath.host.toLowerCase()) {
        return { ok: false, reason: 'host must be lowercase' };
      }
    }
  }
  return { ok: true };
}

export function isValidPattern(pattern: string): boolean {
  return validatePattern(pattern).ok;
}
