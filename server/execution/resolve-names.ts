// Parameter `resolve {get, pick}`: turns an opaque id into a readable name for the action's
// description (`action_description`, the approval view). `get` is a GET path on the service's
// own server with `{param}` placeholders; it is called with the credential the executor would
// inject, through the executor's outbound client (address policy, redirect rules, size cap).
// Best effort, never an error: lookups run in parallel under one deadline, each distinct URL is
// fetched once per call, and any failure (no credential, timeout, non-2xx, not JSON, nothing at
// `pick`) leaves the raw id in place.
import type { CompiledAction, CompiledService } from '../../core/registry/types.ts';
import type { ResolvedInstance } from '../registry/service.ts';
import { credentialFor, templateTrusted, type ExecutorDeps, type Injection } from './execute.ts';
import { sendOutbound } from './http-client.ts';

export const RESOLVE_LIMITS = {
  /** For all lookups of one call together, credential included. */
  timeoutMs: 2_000,
  maxResponseBytes: 1024 * 1024,
  /** Longest name kept (longer ones are clamped). */
  maxNameChars: 200,
};

export interface ResolveNamesInput {
  orgId: string;
  /** The human whose chain the lookup acts for (their own secrets are usable, others' are not). */
  userId?: string;
  instance: ResolvedInstance;
  action: CompiledAction;
  /** Path and query parameter values after defaults (`BuiltRequest.params`). */
  params: Readonly<Record<string, unknown>>;
  /** Only these parameters' lookups (those the caller may read itself); absent = all. */
  only?: readonly string[];
}

function placeholderValue(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return encodeURIComponent(typeof value === 'string' ? value : JSON.stringify(value));
}

/** The lookup URL for one parameter, or undefined when a placeholder has no value. */
export function lookupUrl(baseUrl: string, get: string, params: Readonly<Record<string, unknown>>): URL | undefined {
  let missing = false;
  const path = get.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = placeholderValue(params[name.trim()]);
    if (v === undefined) missing = true;
    return v ?? '';
  });
  if (missing) return undefined;
  try {
    return new URL(baseUrl.replace(/\/+$/, '') + path);
  } catch {
    return undefined;
  }
}

/**
 * The fixed headers (an API version such as `Notion-Version`) of the service's own action that is
 * this GET, so the lookup is the request the API expects; none when no action declares it.
 */
export function lookupHeaders(service: CompiledService, get: string): Readonly<Record<string, string>> {
  const norm = (path: string) => path.replace(/\{[^}]*\}/g, '{}');
  const action = [...service.actions.values()].find((a) => a.method === 'GET' && norm(a.pathTemplate) === norm(get));
  return action?.fixedHeaders ?? {};
}

/** Follows a dot-path (`channel.name`, `items.0.title`) into parsed JSON. */
export function pickPath(value: unknown, pick: string): unknown {
  let node = value;
  for (const key of pick.split('.')) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function lowerKeys(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

function asName(value: unknown): string | undefined {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value !== 'string') return undefined;
  const name = value.replace(/\s+/g, ' ').trim();
  if (name === '') return undefined;
  return name.length > RESOLVE_LIMITS.maxNameChars ? `${name.slice(0, RESOLVE_LIMITS.maxNameChars - 1)}…` : name;
}

function timeout(ms: number): { promise: Promise<undefined>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

/**
 * Readable names for the parameters of `action` that declare `resolve`, by parameter name.
 * Parameters whose lookup fails are absent from the result (callers keep the raw id).
 */
export async function resolveNames(deps: ExecutorDeps, input: ResolveNamesInput, limits = RESOLVE_LIMITS): Promise<Record<string, string>> {
  const service = input.instance.service;
  const base = service.baseUrls[0];
  const wanted = input.action.parameters.filter((p) => p.resolve && input.params[p.name] !== undefined && (!input.only || input.only.includes(p.name)));
  if (wanted.length === 0 || !base || service.runtime !== 'http') return {};

  const deadline = Date.now() + limits.timeoutMs;
  const stop = timeout(limits.timeoutMs);
  let credential: Promise<Injection | undefined> | undefined;
  const credentialOnce = () =>
    (credential ??= Promise.race([
      credentialFor(deps, input.orgId, service, input.instance.credentials, input.action, input.userId, { host: new URL(base).hostname, origin: input.instance.origin }).catch(() => undefined),
      stop.promise,
    ]));
  // One fetch per distinct URL per call (two params may share a lookup).
  const fetches = new Map<string, Promise<unknown>>();
  const fetchJson = (url: URL, fixedHeaders: Readonly<Record<string, string>>): Promise<unknown> => {
    const key = url.toString();
    let pending = fetches.get(key);
    if (!pending) {
      pending = (async () => {
        const injection = await credentialOnce();
        const remaining = deadline - Date.now();
        if (!injection || remaining <= 0) return undefined;
        const target = new URL(url);
        for (const [k, v] of Object.entries(injection.query)) target.searchParams.set(k, v);
        const res = await sendOutbound(
          {
            method: 'GET',
            url: target,
            headers: { accept: 'application/json', 'user-agent': 'agent-action-gateway/0.1', ...lowerKeys(fixedHeaders), ...injection.headers },
          },
          {
            timeoutMs: remaining,
            maxResponseBytes: limits.maxResponseBytes,
            policy: deps.outbound.policy,
            trustedHosts: new Set(templateTrusted(input.instance.origin) ? service.hosts : []),
            credentialQuery: Object.keys(injection.query),
          },
        );
        if (res.status < 200 || res.status >= 300) return undefined;
        return JSON.parse(res.body.toString('utf8')) as unknown;
      })().catch(() => undefined);
      fetches.set(key, pending);
    }
    return pending;
  };

  const names: Record<string, string> = {};
  try {
    await Promise.race([
      Promise.all(
        wanted.map(async (p) => {
          const url = lookupUrl(base, p.resolve!.get, input.params);
          // The lookup stays on the service's own hosts, like every call the executor makes.
          if (!url || (service.hosts.length > 0 && !service.hosts.includes(url.hostname.toLowerCase()))) return;
          const name = asName(pickPath(await fetchJson(url, lookupHeaders(service, p.resolve!.get)), p.resolve!.pick));
          if (name !== undefined) names[p.name] = name;
        }),
      ),
      stop.promise,
    ]);
  } finally {
    stop.cancel();
  }
  return { ...names };
}
