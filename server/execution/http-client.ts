// Outbound HTTP for the executor. Every connection's resolved address is checked against the
// address policy inside `lookup`, i.e. on the very address the socket will use (no DNS-rebinding
// window); redirects are followed by hand so each hop is re-checked, and credentials never follow
// a redirect to another origin. Responses are read up to a size cap.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { refusal, type AddressPolicy } from '../../core/execution/address-policy.ts';
import { AppError } from '../errors.ts';

export interface OutboundRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
}

export interface OutboundOptions {
  timeoutMs: number;
  maxResponseBytes: number;
  maxRedirects?: number;
  policy: AddressPolicy;
  /** Hosts the service declares: trusted as configured (its template was vetted by an admin). */
  trustedHosts: ReadonlySet<string>;
  /** Query parameters that carry credentials: dropped when a redirect leaves the origin. */
  credentialQuery?: readonly string[];
  /** Every header the gateway injected a credential into (any name): dropped like the standard ones. */
  credentialHeaders?: readonly string[];
  /** Called once the first request has been handed to the connection in full (or could not be). */
  onRequestSent?: () => void;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  finalUrl: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization', 'x-api-key', 'api-key'];

class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
}

function checkingLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as dns.LookupAddress[];
      // Refuse when any answer is private: picking a "good" one would still let DNS choose later.
      for (const a of list) {
        const why = refusal(policy, hostname, a.address);
        if (why) return callback(new BlockedAddressError(why), '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      const first = list[0]!;
      callback(null, first.address, first.family);
    });
  };
}

/**
 * The address policy for a connection this module does not make itself (the MCP runtime's client):
 * every address the host resolves to now must be allowed. It cannot pin the address the other
 * client then connects to, so a rebinding DNS server keeps a window; `sendOutbound` has none.
 */
export async function assertAddressAllowed(url: URL, policy: AddressPolicy): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [{ address: host }] : await dns.promises.lookup(host, { all: true }).catch(() => []);
  for (const a of addresses) {
    const why = refusal(policy, host, a.address);
    if (why) throw new AppError('forbidden', `outbound request refused: ${why}`, { host: url.hostname });
  }
}

// Keep-alive pools, one per protocol, each keeping warm connections per upstream host:port, so a
// covered call does not pay a TCP (and TLS) handshake. A pooled connection was made to that very
// host (and, for a checked host, to an address the policy allowed), so reusing it is as safe.
const AGENT_OPTIONS = { keepAlive: true, keepAliveMsecs: 1_000, maxSockets: 256, maxFreeSockets: 32, scheduling: 'lifo' as const, timeout: 60_000 };
const agents = { http: new http.Agent(AGENT_OPTIONS), https: new https.Agent(AGENT_OPTIONS) };

function sendOnce(req: OutboundRequest, opts: OutboundOptions, checked: boolean, signal: AbortSignal): Promise<OutboundResponse> {
  return new Promise((resolve, reject) => {
    const secure = req.url.protocol === 'https:';
    const lib = secure ? https : http;
    const literal = isIP(req.url.hostname.replace(/^\[|\]$/g, '')) ? req.url.hostname.replace(/^\[|\]$/g, '') : null;
    if (checked && literal) {
      // IP literals never reach `lookup`: check them here.
      const why = refusal(opts.policy, literal, literal);
      if (why) return reject(new BlockedAddressError(why));
    }
    const r = lib.request(
      req.url,
      {
        method: req.method,
        headers: { ...req.headers, ...(req.body !== undefined ? { 'content-length': String(Buffer.byteLength(req.body)) } : {}) },
        signal,
        agent: secure ? agents.https : agents.http,
        ...(checked ? { lookup: checkingLookup(opts.policy) } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > opts.maxResponseBytes) {
            res.destroy();
            reject(new AppError('upstream_error', `the upstream response is larger than ${opts.maxResponseBytes} bytes`, { limit_bytes: opts.maxResponseBytes }));
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
          resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks), finalUrl: req.url.toString() });
        });
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    if (opts.onRequestSent) {
      const sent = opts.onRequestSent;
      r.once('finish', sent);
      r.once('error', sent);
    }
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}

export async function sendOutbound(first: OutboundRequest, opts: OutboundOptions): Promise<OutboundResponse> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), opts.timeoutMs);
  const origin = first.url.origin;
  // Only the first request's departure is announced: a redirect's is not news.
  const { onRequestSent: _first, ...laterHops } = opts;
  let req = first;
  try {
    for (let hop = 0; ; hop++) {
      const checked = !opts.trustedHosts.has(req.url.hostname.toLowerCase());
      let res: OutboundResponse;
      try {
        res = await sendOnce(req, hop === 0 ? opts : laterHops, checked, controller.signal);
      } catch (err) {
        throw toAppError(err, req.url, opts.timeoutMs, controller.signal.aborted);
      }
      const location = res.headers.location;
      if (!REDIRECTS.has(res.status) || !location) return res;
      if (hop >= (opts.maxRedirects ?? 5)) throw new AppError('upstream_error', `more than ${opts.maxRedirects ?? 5} redirects`);
      let next: URL;
      try {
        next = new URL(location, req.url);
      } catch {
        throw new AppError('upstream_error', `the upstream redirected to a malformed location (${JSON.stringify(location.slice(0, 200))})`);
      }
      if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new AppError('upstream_error', `redirect to a ${next.protocol} URL refused`);
      const headers = { ...req.headers };
      if (next.origin !== origin) {
        // Credentials belong to the origin they were issued for.
        for (const h of [...CREDENTIAL_HEADERS, ...(opts.credentialHeaders ?? [])]) delete headers[h];
        for (const q of opts.credentialQuery ?? []) next.searchParams.delete(q);
      }
      const keepMethod = res.status === 307 || res.status === 308;
      if (!keepMethod) delete headers['content-type'];
      req = {
        method: keepMethod ? req.method : req.method === 'HEAD' ? 'HEAD' : 'GET',
        url: next,
        headers,
        ...(keepMethod && req.body !== undefined ? { body: req.body } : {}),
      };
    }
  } finally {
    clearTimeout(timer);
  }
}

function toAppError(err: unknown, url: URL, timeoutMs: number, timedOut: boolean): AppError {
  if (err instanceof AppError) return err;
  const e = err as NodeJS.ErrnoException;
  if (e instanceof BlockedAddressError || e.cause instanceof BlockedAddressError) {
    return new AppError('forbidden', `outbound request refused: ${(e instanceof BlockedAddressError ? e : (e.cause as Error)).message}`, { host: url.hostname });
  }
  if (timedOut || e.name === 'AbortError') return new AppError('upstream_timeout', `${url.host} did not answer within ${timeoutMs} ms`);
  return new AppError('upstream_unreachable', `could not reach ${url.host}: ${e.code ?? e.message}`);
}
