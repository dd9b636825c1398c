// Which redirect URIs a dynamically registered client may use (RFC 8252 / OAuth 2.1): https, http
// on a loopback address only, or a private-use URI scheme of a native app (`com.example.app:/cb`,
// `cursor://…`). Never a fragment, never credentials, never a scheme a browser would run or render.
export type RedirectUriVerdict =
  | { ok: true; kind: 'https' | 'loopback' | 'private-use' }
  | { ok: false; reason: string };

export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Schemes that execute, render or reach somewhere other than the client app. */
const FORBIDDEN_SCHEMES: ReadonlySet<string> = new Set([
  'about', 'blob', 'data', 'file', 'filesystem', 'ftp', 'javascript', 'mailto', 'sms', 'tel',
  'urn', 'vbscript', 'view-source', 'ws', 'wss',
]);

const SCHEME = /^[a-z][a-z0-9+.-]*$/;
const MAX_LENGTH = 2000;

export function checkRedirectUri(uri: unknown): RedirectUriVerdict {
  if (typeof uri !== 'string' || uri.length === 0 || uri.length > MAX_LENGTH) {
    return { ok: false, reason: `must only contain URIs of at most ${MAX_LENGTH} characters` };
  }
  const parsed = URL.parse(uri);
  if (!parsed) return { ok: false, reason: 'must only contain valid absolute URIs' };
  if (uri.includes('#')) return { ok: false, reason: 'must not contain fragments' };
  if (parsed.username || parsed.password) return { ok: false, reason: 'must not contain credentials' };
  const scheme = parsed.protocol.slice(0, -1).toLowerCase();
  if (scheme === 'https') {
    return parsed.hostname ? { ok: true, kind: 'https' } : { ok: false, reason: 'https URIs must name a host' };
  }
  if (scheme === 'http') {
    if (LOOPBACK_HOSTS.has(parsed.hostname)) return { ok: true, kind: 'loopback' };
    return { ok: false, reason: 'using http must point at a loopback address (127.0.0.1, [::1] or localhost); use https otherwise' };
  }
  if (!SCHEME.test(scheme) || FORBIDDEN_SCHEMES.has(scheme)) {
    return { ok: false, reason: `must use https, loopback http or a private-use scheme (the ${scheme} scheme is not allowed)` };
  }
  return { ok: true, kind: 'private-use' };
}
