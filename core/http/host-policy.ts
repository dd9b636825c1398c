// Which Host and Origin headers the gateway answers on endpoints a browser could be tricked into
// reaching (DNS rebinding: a page on evil.example whose name resolves to the gateway's address).
// Pure: built from configuration, asked per request.

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export interface HostPolicy {
  /** Host names (lowercase, without port) the gateway is reached by. */
  hosts: ReadonlySet<string>;
  /** Exact origins (scheme://host[:port]) a browser client may call from. */
  origins: ReadonlySet<string>;
  /** The public URL is on loopback: every loopback name and port is the same machine. */
  loopback: boolean;
}

/** The host name of a `Host` header or a URL's host (`[::1]:8080` → `[::1]`, `A.example:443` → `a.example`). */
export function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end === -1 ? h : h.slice(0, end + 1);
  }
  const colon = h.lastIndexOf(':');
  return colon === -1 ? h : h.slice(0, colon);
}

const isLoopback = (name: string) => LOOPBACK_NAMES.has(name) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);

/** A comma-separated list of host names (ports ignored); throws on an entry that is not one. */
export function parseHostList(value: string | undefined): string[] {
  const out: string[] = [];
  for (const raw of (value ?? '').split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    if (/[\s/@?#*]/.test(entry)) throw new Error(`"${entry}" is not a host name (no scheme, path or wildcard)`);
    out.push(hostName(entry));
  }
  return out;
}

/** A comma-separated list of exact origins; throws on an entry that is not `scheme://host[:port]`. */
export function parseOriginList(value: string | undefined): string[] {
  const out: string[] = [];
  for (const raw of (value ?? '').split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new Error(`"${entry}" is not an origin (scheme://host[:port])`);
    }
    if (!/^https?:$/.test(url.protocol) || url.origin !== entry.replace(/\/$/, '')) throw new Error(`"${entry}" is not an origin (scheme://host[:port])`);
    out.push(url.origin);
  }
  return out;
}

export function hostPolicy(publicUrl: string, extraHosts: readonly string[] = [], extraOrigins: readonly string[] = []): HostPolicy {
  const url = new URL(publicUrl);
  const own = hostName(url.host);
  return { hosts: new Set([own, ...extraHosts]), origins: new Set([url.origin, ...extraOrigins]), loopback: isLoopback(own) };
}

/** May a request carrying this Host header be answered? */
export function hostAllowed(policy: HostPolicy, host: string | undefined): boolean {
  if (!host) return false;
  const name = hostName(host);
  return policy.hosts.has(name) || (policy.loopback && isLoopback(name));
}

/** May a browser page of this Origin call? (Absent Origin = not a browser's cross-origin call.) */
export function originAllowed(policy: HostPolicy, origin: string | undefined): boolean {
  if (origin === undefined) return true;
  if (policy.origins.has(origin)) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // `null` (sandboxed frames, file://) and garbage
  }
  const name = hostName(url.host);
  return policy.hosts.has(name) || (policy.loopback && isLoopback(name));
}
