// Permission keys: `service:action:arg` for registry actions, `http:VERB:host/path` for raw HTTP.
// A key splits on its first two `:` only, so the third segment may itself contain `:`
// (a host port, an IPv6 literal); service and action names never do.

export type Risk = 'read' | 'write' | 'delete';
export type ApprovalRisk = 'low' | 'med' | 'high';

export interface ParsedPermissionKey {
  service: string;
  /** The action key, or the HTTP verb for `http` keys. */
  action: string;
  /** The scope argument, or `host/path` for `http` keys. */
  arg: string;
}

export class PermissionKeyError extends Error {
  override name = 'PermissionKeyError';
}

export const HTTP_SERVICE = 'http';
/** First segment of `secret:<NAME>:<host>`: injecting vault secret NAME into a request to host. */
export const SECRET_SERVICE = 'secret';
/** Arg of an action without `scope_param`: the whole action. */
export const WHOLE_ACTION_ARG = '*';
/**
 * Arg when an action declares `scope_param` but the call does not supply it. Using `*` here
 * would be unsafe: the "only this exact call" tier would then plant a wildcard rule. The
 * sentinel only matches itself (or a `*` pattern), and encodeArg escapes `<`/`>` in real
 * values so no supplied value can collide with it.
 */
export const MISSING_ARG = '<missing>';

// `%` first keeps the encoding injective; `*` must never reach a key literally (it would act
// as a wildcard once an exact key is remembered as a rule); `:` keeps keys splittable by
// naive readers; `<`/`>` reserve MISSING_ARG.
const ARG_ESCAPES: Record<string, string> = {
  '%': '%25',
  '*': '%2A',
  ':': '%3A',
  '<': '%3C',
  '>': '%3E',
};

/** Percent-encodes the characters that carry meaning in keys and patterns. */
export function encodeArg(value: string): string {
  return value.replace(/[%*:<>]/g, (ch) => ARG_ESCAPES[ch] ?? ch);
}

function lookupScopeValue(
  scopeParam: string,
  params: Record<string, unknown>,
  body: unknown,
): unknown {
  // Own properties only: `constructor` or `toString` must not resolve through the prototype.
  if (Object.hasOwn(params, scopeParam) && params[scopeParam] != null) return params[scopeParam];
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const record = body as Record<string, unknown>;
    if (Object.hasOwn(record, scopeParam) && record[scopeParam] != null) return record[scopeParam];
  }
  return undefined;
}

function stringifyScopeValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value);
  }
  // Objects/arrays: a stable-enough textual form; such scope params are unusual.
  return JSON.stringify(value) ?? String(value);
}

function assertNamePart(kind: string, value: string): void {
  if (value === '' || /[:*\s]/.test(value)) {
    throw new PermissionKeyError(`invalid ${kind} for a permission key: ${JSON.stringify(value)}`);
  }
}

/**
 * Key of a registry action call. The scope value comes from `params`, then from the top level
 * of a JSON object body; null and '' count as absent (→ MISSING_ARG).
 */
export function actionPermissionKey(
  serviceInstance: string,
  actionKey: string,
  scopeParam: string | undefined,
  params: Record<string, unknown>,
  body?: unknown,
): string {
  assertNamePart('service', serviceInstance);
  assertNamePart('action', actionKey);
  if (scopeParam === undefined || scopeParam === '' || scopeParam === '*') {
    return `${serviceInstance}:${actionKey}:${WHOLE_ACTION_ARG}`;
  }
  const value = lookupScopeValue(scopeParam, params, body);
  const text = value === undefined ? '' : stringifyScopeValue(value);
  // An empty value scopes nothing either: treat it as missing rather than as an empty arg.
  const arg = text === '' ? MISSING_ARG : encodeArg(text);
  return `${serviceInstance}:${actionKey}:${arg}`;
}

const VERB = /^[A-Z]+$/;

/**
 * Key of a raw HTTP call: `http:VERB:host/path`. Host is lowercased with a non-default port
 * (WHATWG URL does both); query, fragment, scheme and userinfo are dropped. A literal `*` in the
 * path is encoded as `%2A` so the exact key can never act as a wildcard.
 */
export function httpPermissionKey(method: string, url: URL | string): string {
  const verb = method.toUpperCase();
  // `ANY` is the pattern wildcard verb, never a real request verb.
  if (!VERB.test(verb) || verb === 'ANY') {
    throw new PermissionKeyError(`invalid HTTP method: ${JSON.stringify(method)}`);
  }
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    throw new PermissionKeyError(`invalid URL: ${JSON.stringify(String(url))}`);
  }
  if (parsed.host === '') throw new PermissionKeyError(`URL has no host: ${parsed.href}`);
  const path = parsed.pathname
    .replace(/^\//, '')
    .replace(/\*/g, '%2A')
    // Uppercase percent-escapes so `%2f` and `%2F` give one key.
    .replace(/%[0-9a-fA-F]{2}/g, (esc) => esc.toUpperCase());
  return `${HTTP_SERVICE}:${verb}:${parsed.host.toLowerCase()}/${path}`;
}

/**
 * Key of injecting vault secret `name` into a raw HTTP request to `url`: `secret:<NAME>:<host>`
 * (host lowercased with a non-default port, as in `http` keys). Walked on the chain like any key.
 */
export function secretPermissionKey(name: string, url: URL): string {
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(name)) throw new PermissionKeyError(`invalid secret name: ${JSON.stringify(name)}`);
  if (url.host === '') throw new PermissionKeyError(`URL has no host: ${url.href}`);
  return `${SECRET_SERVICE}:${name}:${url.host.toLowerCase()}`;
}

/**
 * The key of sending a connection's OAuth token to a host outside its provider's servers:
 * `connection:<name>:<host>`. Like a secret's key, it must be covered (or approved) on its own.
 */
export function connectionPermissionKey(name: string, url: URL): string {
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(name)) throw new PermissionKeyError(`invalid connection name: ${JSON.stringify(name)}`);
  if (url.host === '') throw new PermissionKeyError(`URL has no host: ${url.href}`);
  return `connection:${name}:${url.host.toLowerCase()}`;
}

/** The secrets a call's keys inject, by name and host (for audit rows and webhooks; never values). */
export function injectedSecrets(keys: readonly string[]): { name: string; host: string }[] {
  return keys.flatMap((k) => {
    const p = parsePermissionKey(k);
    return p && p.service === SECRET_SERVICE ? [{ name: p.action, host: p.arg }] : [];
  });
}

/** Splits on the first two `:`; null when a key lacks them or has an empty service/action. */
export function parsePermissionKey(key: string): ParsedPermissionKey | null {
  const first = key.indexOf(':');
  if (first <= 0) return null;
  const second = key.indexOf(':', first + 1);
  if (second <= first + 1) return null;
  return {
    service: key.slice(0, first),
    action: key.slice(first + 1, second),
    arg: key.slice(second + 1),
  };
}

/** Splits the third segment of an `http` key into host and path (path without leading `/`). */
export function splitHostPath(hostPath: string): { host: string; path: string } | null {
  const slash = hostPath.indexOf('/');
  if (slash < 0) return null;
  return { host: hostPath.slice(0, slash), path: hostPath.slice(slash + 1) };
}

export function riskForHttpMethod(method: string): Risk {
  switch (method.toUpperCase()) {
    case 'GET':
    case 'HEAD':
    case 'OPTIONS':
      return 'read';
    case 'DELETE':
      return 'delete';
    default:
      return 'write';
  }
}

const APPROVAL_RISK: Record<Risk, ApprovalRisk> = { read: 'low', write: 'med', delete: 'high' };

export function approvalRisk(risk: Risk): ApprovalRisk {
  return APPROVAL_RISK[risk];
}
