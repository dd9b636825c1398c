// What a log line may say about a request's URL. Some URLs are credentials in themselves (an email
// decision link decides an approval without a session; OAuth and SSO callbacks carry codes and
// states; a stray client may put a bearer token in a path): the access log keeps the shape of the
// URL for debugging and never the secret. Pure.

export const REDACTED = '[REDACTED]';

/**
 * Paths whose `:secret` segments are credentials, relative to the site root. A route that takes a
 * token in its path belongs here (the email decision link is the only one today: invitation links
 * carry theirs in the fragment, which browsers never send).
 */
export const SECRET_PATHS: readonly string[] = ['/v1/integrations/email/decisions/:secret'];

/** Query parameters whose values are credentials wherever they appear (OAuth, OIDC, links). */
const SECRET_QUERY_KEYS = new Set([
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'id_token_hint',
  'logout_token',
  'code',
  'code_verifier',
  'state',
  'nonce',
  'client_secret',
  'assertion',
  'client_assertion',
  'password',
  'secret',
  'key',
  'api_key',
  'signature',
  'sig',
]);

/**
 * A value shaped like a credential, whatever route or parameter carries it: the gateway's own
 * tokens (agent keys, sessions, invitations), a JWT, an email decision link token, or any long run
 * of token alphabet that is not a plain UUID (ids are fine to log; random strings are not).
 */
export function looksLikeSecret(value: string): boolean {
  if (/^(osk|gws|gwi)_/i.test(value)) return true;
  if (/^[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$/.test(value)) return true;
  if (/^[0-9a-f-]{36}\.\d{1,12}\.[A-Za-z0-9_-]{20,}$/i.test(value)) return true;
  const withoutUuids = value.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '');
  return /[A-Za-z0-9_]{32,}/.test(withoutUuids);
}

const secretPatterns = SECRET_PATHS.map((p) => p.split('/').filter(Boolean));

function redactPath(path: string): string {
  const parts = path.split('/');
  const segments = parts.filter(Boolean);
  const secretAt = new Set<number>();
  for (const pattern of secretPatterns) {
    if (pattern.length !== segments.length) continue;
    if (!pattern.every((seg, i) => seg.startsWith(':') || seg === segments[i])) continue;
    pattern.forEach((seg, i) => seg === ':secret' && secretAt.add(i));
  }
  let index = -1;
  return parts
    .map((part) => {
      if (part === '') return part;
      index += 1;
      return secretAt.has(index) || looksLikeSecret(safeDecode(part)) ? REDACTED : part;
    })
    .join('/');
}

function redactQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const cut = pair.indexOf('=');
      if (cut < 0) return looksLikeSecret(safeDecode(pair)) ? REDACTED : pair;
      const key = pair.slice(0, cut);
      const value = safeDecode(pair.slice(cut + 1));
      return SECRET_QUERY_KEYS.has(safeDecode(key).toLowerCase()) || looksLikeSecret(value) ? `${key}=${REDACTED}` : pair;
    })
    .join('&');
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** A request URL (path and query, as a request line has it) fit for a log line: credentials replaced. */
export function loggableUrl(url: string): { path: string; query?: string } {
  const cut = url.indexOf('?');
  const path = redactPath(cut < 0 ? url : url.slice(0, cut));
  const query = cut < 0 ? '' : url.slice(cut + 1);
  return query ? { path, query: redactQuery(query) } : { path };
}
