// Who the command acts as, and the typed REST client for it. In order:
//   GATEWAY_TOKEN (any bearer) or GATEWAY_AGENT_KEY (an osk_ key), with GATEWAY_URL or the profile's URL;
//   the profile's person session (`gateway login`; --profile NAME, else $GATEWAY_PROFILE, else "default");
//   the agent's OAuth credentials stored by `gateway mcp login` (refreshed as they expire).
import { createClient, type ApiClient } from '../../core/api/client.ts';
import { credentialsPath, normalizeBaseUrl, readCredentials } from '../mcp/credentials.ts';
import { CliError } from './errors.ts';
import { DEFAULT_PROFILE, readProfile } from './profiles.ts';

export interface Caller {
  url: string;
  /** A person's session (gws_…) or an agent (agent key, OAuth access token). */
  kind: 'person' | 'agent';
  /** Where the credentials came from, for `whoami`. */
  source: string;
  profile: string;
  api: ApiClient;
  /** fetch with the bearer (renewed once after a 401 when it can be), for streams. */
  fetch: typeof globalThis.fetch;
}

interface TokenSource {
  token(): Promise<string>;
  renew(sent: string): Promise<string | null>;
}

const fixed = (value: string): TokenSource => ({ token: async () => value, renew: async () => null });

export const profileName = (opt: string | undefined): string => opt ?? (process.env.GATEWAY_PROFILE?.trim() || DEFAULT_PROFILE);

/** fetch that sets `Authorization: Bearer` and retries once with a renewed token after a 401. */
function authedFetch(tokens: TokenSource): typeof globalThis.fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const retry = request.clone();
    // The caller's signal goes to fetch itself. Passed only inside `request`, it reaches the
    // fetch through that Request's own signal, which undici holds weakly: once `request` is
    // garbage-collected an abort is lost, and an event stream stays open after the command has
    // finished (`call --wait` never exiting after long waits).
    const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    const direct = signal ? { signal } : undefined;
    const sent = await tokens.token();
    request.headers.set('authorization', `Bearer ${sent}`);
    const res = await fetch(request, direct);
    if (res.status !== 401) return res;
    const next = await tokens.renew(sent);
    if (!next) return res;
    retry.headers.set('authorization', `Bearer ${next}`);
    return fetch(retry, direct);
  };
}

function build(url: string, kind: Caller['kind'], source: string, profile: string, tokens: TokenSource): Caller {
  const f = authedFetch(tokens);
  return { url, kind, source, profile, fetch: f, api: createClient({ baseUrl: url, fetch: f }) };
}

const kindOf = (token: string): Caller['kind'] => (token.startsWith('gws_') ? 'person' : 'agent');

export function checkUrl(url: string, what: string): string {
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw new CliError(`${what} must be an http(s) URL (got ${JSON.stringify(url)})`);
  return normalizeBaseUrl(url);
}

export async function resolveCaller(opts: { profile?: string | undefined }): Promise<Caller> {
  const profile = profileName(opts.profile);
  const envUrl = process.env.GATEWAY_URL?.trim() ? checkUrl(process.env.GATEWAY_URL.trim(), 'GATEWAY_URL') : undefined;
  const stored = await readProfile(profile);
  const envToken = process.env.GATEWAY_TOKEN?.trim();
  const agentKey = process.env.GATEWAY_AGENT_KEY?.trim();
  const explicit = envToken ? { token: envToken, source: 'GATEWAY_TOKEN' } : agentKey ? { token: agentKey, source: 'GATEWAY_AGENT_KEY' } : null;
  if (explicit) {
    const url = envUrl ?? stored?.url;
    if (!url) throw new CliError(`${explicit.source} is set but GATEWAY_URL is not (and profile "${profile}" names no gateway)`);
    return build(url, kindOf(explicit.token), explicit.source, profile, fixed(explicit.token));
  }
  if (stored?.token && (!envUrl || envUrl === stored.url)) {
    if (stored.expires_at && Date.parse(stored.expires_at) <= Date.now()) {
      throw new CliError(`the session of profile "${profile}" expired: run \`gateway login${profile === DEFAULT_PROFILE ? '' : ` --profile ${profile}`}\``);
    }
    return build(stored.url, kindOf(stored.token), `profile "${profile}"`, profile, fixed(stored.token));
  }
  const file = credentialsPath();
  const creds = await readCredentials(file).catch(() => null);
  if (creds && (!envUrl || envUrl === creds.url) && (!stored || stored.url === creds.url)) {
    // Loaded only here: the OAuth client (and the MCP SDK under it) is not needed by other callers.
    const { OAuthSession } = await import('../mcp/oauth.ts');
    const session = new OAuthSession(file, creds);
    return build(creds.url, 'agent', `gateway mcp login (${file})`, profile, session);
  }
  const where = envUrl ?? stored?.url;
  throw new CliError(
    `not signed in${where ? ` to ${where}` : ''}: run \`gateway login --url <gateway URL>\` (people), ` +
      '`gateway mcp login` or set GATEWAY_URL and GATEWAY_AGENT_KEY (agents)',
  );
}

/** The gateway's error envelope as one line, e.g. "not_found: approval not found". */
export function envelopeMessage(error: unknown, status: number): { code: string; message: string } {
  const e = (error as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  if (e && typeof e.code === 'string') return { code: e.code, message: typeof e.message === 'string' ? e.message : e.code };
  return { code: `http_${status}`, message: `the gateway answered HTTP ${status}` };
}

const listOf = (v: unknown) => (Array.isArray(v) ? (v as Record<string, unknown>[]).filter((x) => x && typeof x === 'object') : []);

/**
 * What the envelope's details say about the request's fields, one line each ("  slack.bot_token:
 * must be a Slack bot token (xoxb-…)"): the validation issues (`path`) or a call's parameter
 * problems (`field`), else the one field named.
 */
export function detailLines(error: unknown): string[] {
  const details = (error as { error?: { details?: Record<string, unknown> } } | undefined)?.error?.details;
  if (!details) return [];
  const items = [...listOf(details.issues).map((i) => ({ at: i.path, message: i.message })), ...listOf(details.problems).map((p) => ({ at: p.field, message: p.message }))];
  if (items.length) return items.map((i) => `  ${typeof i.at === 'string' && i.at ? i.at : '(request)'}: ${String(i.message)}`);
  return typeof details.field === 'string' ? [`  field: ${details.field}`] : [];
}

/** The gateway's error as the CLI prints it: "<message> (<code>)", then what it says of each field. */
export function envelopeText(error: unknown, status: number): string {
  const { code, message } = envelopeMessage(error, status);
  return [`${message} (${code})`, ...detailLines(error)].join('\n');
}

/** The data of a 2xx answer, or a CliError (exit 2) naming the gateway's error. */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let r: Awaited<typeof call>;
  try {
    r = await call;
  } catch (err) {
    throw new CliError(`could not reach the gateway: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`);
  }
  if (r.response.ok) return r.data as T;
  throw new CliError(envelopeText(r.error, r.response.status));
}
