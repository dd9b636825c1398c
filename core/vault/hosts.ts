// Where a vault secret may be sent: exact hostnames (`api.stripe.com`, `127.0.0.1`, `[::1]`) or
// one leading wildcard label (`*.example.com`, which matches any subdomain, not the bare domain).
// Ports are not part of an entry: a host is a host on every port. A wildcard over a public suffix
// (`*.co.uk`, `*.github.io`: names anyone can register under) is refused, judged by the Public
// Suffix List as the maintained `tldts` package ships it (ICANN and private sections). Pure; no I/O.
import { parse } from 'tldts';

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const HOSTNAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);
const IPV6 = /^\[[0-9a-f:.]+\]$/;

export type HostPatternCheck = { ok: true; value: string } | { ok: false; reason: string };

/** Normalises (lowercase) and checks one `allowed_hosts` entry. */
export function checkHostPattern(raw: string): HostPatternCheck {
  const value = raw.trim().toLowerCase();
  if (value === '' || value.length > 253) return { ok: false, reason: 'must be a hostname of 1-253 characters' };
  if (value.startsWith('*.')) {
    const rest = value.slice(2);
    // `*.com` would be any site on a TLD: at least two labels after the wildcard.
    if (!HOSTNAME.test(rest) || !rest.includes('.')) return { ok: false, reason: `"${raw}": a wildcard needs a domain of two labels or more after "*."` };
    if (isPublicSuffix(rest)) return { ok: false, reason: `"${raw}": ${rest} is a public suffix (anyone can register a name under it): name the domain, e.g. "*.example.${rest}"` };
    return { ok: true, value };
  }
  if (value.includes('*')) return { ok: false, reason: `"${raw}": "*" is allowed only as a whole leading label ("*.example.com")` };
  if (IPV6.test(value) || HOSTNAME.test(value)) return { ok: true, value };
  return { ok: false, reason: `"${raw}" is not a hostname (no scheme, port or path)` };
}

/** Whether `hostname` (a URL's `hostname`: lowercase, IPv6 in brackets) matches one pattern. */
export function hostMatches(pattern: string, hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return host === pattern;
}

/** Raw HTTP may inject a secret toward `hostname` only when its list names the host. No list: never. */
export function secretAllowedForHost(allowedHosts: readonly string[] | null, hostname: string): boolean {
  return allowedHosts !== null && allowedHosts.some((p) => hostMatches(p, hostname));
}

/** Whether `domain` is itself a public suffix (ICANN or private section of the list). */
function isPublicSuffix(domain: string): boolean {
  const parsed = parse(domain, { allowPrivateDomains: true });
  return parsed.publicSuffix === domain && parsed.domain === null;
}
