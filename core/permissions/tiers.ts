// Suggested tiers for remembering an approval: the exact keys, then every key broadened one
// step, then two steps — all keys together, so each tier covers the whole call.
//   svc:act:arg          → svc:act:*        → svc:*:*
//   http:POST:host/a/b   → http:POST:host/* → http:ANY:host/*
//   secret:NAME:host     → secret:NAME:*    (never broader: each secret is approved by name)
// Then, for an action call, a tier per condition derived from the call (derived-conditions.ts): the
// action's keys broadened one step, remembered with that condition.

import {
  HTTP_SERVICE,
  MISSING_ARG,
  SECRET_SERVICE,
  PermissionKeyError,
  parsePermissionKey,
  splitHostPath,
} from './keys.ts';
import type { ParsedPermissionKey } from './keys.ts';
import type { DerivedCondition } from './derived-conditions.ts';
import { ANY_VERB } from './patterns.ts';

export interface Tier {
  keys: string[];
  description: string;
  /**
   * A condition the remembered rule carries (sent as `remember_condition` with the keys): the tier
   * grants the keys only when it holds. Absent: the keys alone.
   */
  condition?: string;
}

const LEVELS = 3;

function parseOrThrow(key: string): ParsedPermissionKey {
  const parsed = parsePermissionKey(key);
  if (parsed === null) throw new PermissionKeyError(`invalid permission key: ${JSON.stringify(key)}`);
  return parsed;
}

function hostOf(parsed: ParsedPermissionKey): string {
  const hostPath = splitHostPath(parsed.arg);
  if (hostPath === null) throw new PermissionKeyError(`invalid http key arg: ${parsed.arg}`);
  return hostPath.host;
}

/** The key broadened `level` steps (0 = unchanged). */
function broaden(key: string, level: number): string {
  const p = parseOrThrow(key);
  if (level === 0) return key;
  if (p.service === HTTP_SERVICE) {
    const verb = level >= 2 ? ANY_VERB : p.action;
    return `${HTTP_SERVICE}:${verb}:${hostOf(p)}/*`;
  }
  if (p.service === SECRET_SERVICE) return `${SECRET_SERVICE}:${p.action}:*`;
  return level >= 2 ? `${p.service}:*:*` : `${p.service}:${p.action}:*`;
}

function unique(values: Iterable<string>): string[] {
  return [...new Set(values)];
}

function decodeArg(arg: string): string {
  if (arg === MISSING_ARG) return '(no value)';
  try {
    return decodeURIComponent(arg);
  } catch {
    return arg;
  }
}

/**
 * What one (possibly broadened) key grants, in words — exactly what it matches, never less: a raw
 * HTTP key binds method, host and path, not the query or the body; an action key binds the action
 * and its scope argument, not its other parameters.
 */
function describeKey(key: string): string {
  const p = parseOrThrow(key);
  if (p.service === HTTP_SERVICE) {
    const host = hostOf(p);
    if (p.action === ANY_VERB || p.action === '*') return `Any request to ${host}`;
    if (p.arg === `${host}/*`) return `Any ${p.action} request to ${host}`;
    return `${p.action} ${decodeArg(p.arg)} with any query and body`;
  }
  if (p.service === SECRET_SERVICE) {
    // The host stays bound by the secret's own allowed_hosts even when the rule says `*`.
    return p.arg === '*' ? `Secret ${p.action} toward any of its allowed hosts` : `Secret ${p.action} sent to ${p.arg}`;
  }
  if (p.action === '*') return `Any action on ${p.service}`;
  if (p.arg === '*') return `Any ${p.action} on ${p.service}`;
  if (p.arg === MISSING_ARG) return `${p.action} on ${p.service} without its scope parameter, with any other parameters`;
  return `${p.action} on ${p.service} for ${decodeArg(p.arg)}, with any other parameters`;
}

/** A tier says exactly what its keys grant (issue 26: "only this exact call" was never true). */
function describeTier(keys: readonly string[]): string {
  return unique(keys.map(describeKey)).join('; ');
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(a);
  return a.length === b.length && b.every((k) => set.has(k));
}

/**
 * The key tiers, narrowest first, then one tier per derived condition (after them, so a key tier's
 * index never moves). Throws PermissionKeyError on an unparseable key.
 */
export function suggestedTiers(keys: readonly string[], conditions: readonly DerivedCondition[] = []): Tier[] {
  const exact = unique(keys);
  const tiers: Tier[] = [];
  for (let level = 0; level < LEVELS; level++) {
    const tierKeys = unique(exact.map((k) => broaden(k, level)));
    if (tiers.some((t) => sameSet(t.keys, tierKeys))) continue;
    tiers.push({ keys: tierKeys, description: describeTier(tierKeys) });
  }
  const actionWide = unique(exact.map((k) => broaden(k, 1)));
  for (const c of conditions) tiers.push({ keys: actionWide, description: `${describeTier(actionWide)}, ${c.description}`, condition: c.condition });
  return tiers;
}

/** `derived_keys` of an approval: the exact keys, deduplicated in order. */
export function derivedKeys(keys: readonly string[]): string[] {
  return unique(keys);
}

export function tierKeys(tiers: readonly Tier[]): string[] {
  return unique(tiers.flatMap((t) => t.keys));
}

/**
 * Whether `remember_keys` may be planted: each key must appear in some tier. An empty list is
 * rejected — remembering nothing would report allow_remember while planting no rule.
 */
export function isSubsetOfTiers(rememberKeys: readonly string[], tiers: readonly Tier[]): boolean {
  if (rememberKeys.length === 0) return false;
  const allowed = new Set(tierKeys(tiers));
  return rememberKeys.every((k) => allowed.has(k));
}
