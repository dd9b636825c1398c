// Runs one upstream call: picks the instance's credential, resolves it (vault secret or a fresh
// OAuth token) only here, injects it, makes the request with a timeout, shapes the result.
// Secrets live in local variables of this module and nowhere else.
import { randomBytes } from 'node:crypto';
import { encodeFormBody } from '../../core/execution/form-body.ts';
import { buildActionRequest } from '../../core/execution/request.ts';
import { compactResult, verboseResult, type RawResponse } from '../../core/execution/result.ts';
import type { CredentialChoice } from '../../core/registry/instances.ts';
import type { CompiledAction, CompiledService } from '../../core/registry/types.ts';
import type { TemplateOrigin } from '../../core/registry/catalog.ts';
import type { CallResult } from '../../workflows/definitions.ts';
import type { AddressPolicy } from '../../core/execution/address-policy.ts';
import { secretAllowedForHost } from '../../core/vault/hosts.ts';
import { AppError, invalidParams } from '../errors.ts';
import { sendOutbound } from './http-client.ts';
import { loggableUrl } from '../http/log-redaction.ts';
import { context, propagation, type Attributes } from '@opentelemetry/api';
import { isTraced } from '../../core/telemetry/spans.ts';
import type { ResolvedInstance } from '../registry/service.ts';
import type { StoredRequest } from './stored-request.ts';


/**
 * A non-HTTP runtime (`mcp`: tools on an external MCP server; `platform`: in-process handlers).
 * It gets the same input and must answer with the same result shapes.
 */
/** Who waits for a call's progress: the requester, in the API request that made the call. */
export interface ProgressTarget {
  requesterId: string;
  requestId: string;
}

/** An upstream tool's `notifications/progress`, as MCP defines its fields. */
export interface ToolProgress {
  progress: number;
  total?: number | undefined;
  message?: string | undefined;
}

export type RuntimeHandler = (deps: ExecutorDeps, input: ExecuteInput) => Promise<ExecuteOutput>;

export interface ExecutorDeps {
  /** Handlers for `runtime: mcp` and `runtime: platform` services. */
  runtimes?: Partial<Record<'mcp' | 'platform', RuntimeHandler>>;
  /**
   * A long MCP tool's progress, for the request that made the call. Best effort (never rejects);
   * the call awaits what it reported, briefly, before it ends, so the progress leaves before the answer.
   */
  reportProgress?: (to: ProgressTarget, progress: ToolProgress) => Promise<void>;
  /**
   * Runs `abort` when the agent cancels the request waiting for the call (server/events/call-cancels.ts)
   * until the returned release is called; resolves once a cancellation can be heard.
   */
  onCancel?: (to: ProgressTarget, abort: () => void) => Promise<() => void>;
  /** The value of a vault secret usable by `userId`'s chains (the org's or that user's own). */
  secretValue(orgId: string, name: string, userId?: string): Promise<string | null>;
  /** The same, with what binds it (allowed_hosts, owner), in one round trip (a template's credential). */
  secretWithBinding?(orgId: string, name: string, userId?: string): Promise<{ value: string; allowedHosts: string[] | null; ownerId: string | null } | null>;
  /**
   * Opens a secret's current envelope that another statement already read (the covered call's
   * check, issue 28): the same answer as `secretWithBinding` for that read.
   */
  openPrefetchedSecret?(envelope: unknown, userId?: string): { value: string; allowedHosts: string[] | null; ownerId: string | null } | null;
  /** Where a secret may be injected by raw HTTP (never the value); absent → raw injection is refused. */
  secretForUse?(orgId: string, name: string, userId: string): Promise<{ allowedHosts: string[] | null; ownerId: string | null } | null>;
  connectionToken(orgId: string, connectionId: string, requiredScopes: readonly string[]): Promise<{ accessToken: string }>;
  /** Outbound limits and the address policy for raw HTTP and off-host redirects. */
  /** `propagateTrace`: the outbound request carries the trace's `traceparent` (off unless set). */
  outbound: { policy: AddressPolicy; timeoutMs: number; maxResponseBytes: number; propagateTrace?: boolean };
  /** Stores a binary download and returns its handle (`response_type: binary`). */
  saveDownload?: (d: { orgId: string; requesterId: string | undefined; contentType: string; data: Buffer }) => Promise<DownloadHandle>;
}

export interface DownloadHandle {
  id: string;
  url: string;
  content_type: string;
  size: number;
  sha256: string;
  expires_at: string;
}

export interface Injection {
  headers: Record<string, string>;
  query: Record<string, string>;
  /** Path placeholders the credential fills (apiKey `in: path`); only an action's URL has them. */
  path: Record<string, string>;
}

export interface ExecuteInput {
  orgId: string;
  /** The identity making the call (downloads are readable by its chain; platform actions act as it). */
  requesterId?: string;
  /** The human owning the requester's chain. */
  userId?: string;
  /** The API request the call was made in (null: none, e.g. an approved call replayed later): a long tool's progress is addressed to it. */
  requestId?: string | null;
  instance: ResolvedInstance;
  action: CompiledAction | null;
  request: StoredRequest;
  verbose: boolean;
}

export interface ExecuteOutput {
  result: CallResult;
  httpStatusCode: number;
}

/** Where a template's credential would go: the host, and who vetted the template (see `templateTrusted`). */
export interface CredentialTarget {
  host: string;
  origin: TemplateOrigin;
}

/**
 * Templates an admin vetted: the built-in catalog and the org's own. A member's user-scope
 * template is not: its hosts get the outbound address policy like raw HTTP, and a vault secret
 * without `allowed_hosts` (meant for vetted templates) is not injected into it unless it is that
 * member's own.
 */
export const templateTrusted = (origin: TemplateOrigin): boolean => origin !== 'user';

/**
 * A vault secret goes into a template's request only where it is bound: a host on its
 * `allowed_hosts` when it has the list (on every path: templates, instances, raw HTTP, runtimes);
 * without the list, a vetted template, or the requester's own template with the requester's own secret.
 */
function assertSecretBound(name: string, use: { allowedHosts: string[] | null; ownerId: string | null }, userId: string | undefined, target: CredentialTarget): void {
  if (use.allowedHosts !== null) {
    if (!secretAllowedForHost(use.allowedHosts, target.host)) {
      throw new AppError('secret_not_allowed_for_host', `secret "${name}" may not be sent to ${target.host} (allowed_hosts: ${use.allowedHosts.join(', ') || 'none'})`, { secret_name: name, host: target.host });
    }
    return;
  }
  if (!templateTrusted(target.origin) && use.ownerId !== userId) {
    throw new AppError(
      'secret_not_allowed_for_host',
      `secret "${name}" belongs to the organisation and has no allowed_hosts: it serves the org's and the built-in templates, not a personal template (an admin can add ${target.host} to its allowed_hosts)`,
      { secret_name: name, host: target.host },
    );
  }
}

/** A template's secret: its value once its binding allows `target` (null: no such secret). */
async function boundSecretValue(deps: ExecutorDeps, orgId: string, name: string, userId: string | undefined, target: CredentialTarget): Promise<string | null> {
  if (deps.secretWithBinding) {
    const found = await deps.secretWithBinding(orgId, name, userId);
    if (!found) return null;
    assertSecretBound(name, found, userId, target);
    return found.value;
  }
  const use = userId !== undefined && deps.secretForUse ? await deps.secretForUse(orgId, name, userId) : null;
  if (use) assertSecretBound(name, use, userId, target);
  return deps.secretValue(orgId, name, userId);
}

/**
 * Which credential a template's call injects, without reading any: the first usable choice in the
 * order below. Pure, so the covered path can read the chosen secret's envelope inside a statement
 * it already makes (issue 28) and `credentialFor` still decides the same way.
 */
export function chooseCredential(
  choices: readonly CredentialChoice[],
  action: Pick<CompiledAction, 'securitySchemes'> | null,
):
  | { kind: 'none' }
  | { kind: 'connection'; connectionId: string }
  | { kind: 'secret'; choice: Extract<CredentialChoice, { type: 'secret' }> }
  | { kind: 'missing' } {
  if (choices.some((c) => c.type === 'none')) return { kind: 'none' };
  const allowed = action?.securitySchemes;
  const usable = (c: CredentialChoice | undefined) => c && c.type !== 'none' && (!allowed || allowed.includes(c.method));
  const conn = choices.find((c) => c.type === 'connection' && c.status === 'active');
  if (usable(conn) && conn?.type === 'connection' && conn.connectionId) return { kind: 'connection', connectionId: conn.connectionId };
  const secret = choices.find((c) => c.type === 'secret' && c.available);
  if (usable(secret) && secret?.type === 'secret') return { kind: 'secret', choice: secret };
  return { kind: 'missing' };
}

/** The credential to inject, or the typed error that says why there is none. */
export async function credentialFor(
  deps: ExecutorDeps,
  orgId: string,
  service: CompiledService,
  choices: readonly CredentialChoice[],
  action: CompiledAction | null,
  userId: string | undefined,
  target: CredentialTarget,
): Promise<Injection> {
  const none: Injection = { headers: {}, query: {}, path: {} };
  const chosen = chooseCredential(choices, action);
  if (chosen.kind === 'none') return none;
  if (chosen.kind === 'connection') {
    const token = await deps.connectionToken(orgId, chosen.connectionId, action?.requiredScopes ?? []);
    return { headers: { authorization: `Bearer ${token.accessToken}` }, query: {}, path: {} };
  }
  const secretChoice = chosen.kind === 'secret' ? chosen.choice : undefined;
  if (secretChoice) {
    const value = await boundSecretValue(deps, orgId, secretChoice.secretName, userId, target);
    if (value !== null) {
      const method = service.authMethods.find((m) => m.name === secretChoice.method);
      if (method?.type === 'apiKey') {
        const v = (method.prefix ?? '') + value;
        if (method.in === 'header') return { headers: { [method.paramName.toLowerCase()]: v }, query: {}, path: {} };
        if (method.in === 'query') return { headers: {}, query: { [method.paramName]: v }, path: {} };
        return { headers: {}, query: {}, path: { [method.paramName]: v } };
      }
      return { headers: { authorization: `Bearer ${value}` }, query: {}, path: {} };
    }
  }
  // Nothing usable: say what is missing, most actionable first.
  const conn = choices.find((c) => c.type === 'connection');
  const secret = choices.find((c) => c.type === 'secret');
  if (conn?.type === 'connection' && conn.connectionId && (conn.status === 'pending' || conn.status === 'reauth_required')) {
    // The connection service raises needs_authentication / reauth_required with the auth_url.
    await deps.connectionToken(orgId, conn.connectionId, []);
  }
  if (secret?.type === 'secret') {
    throw new AppError('credential_missing', `no vault secret "${secret.secretName}" for ${service.key}: create it with POST /v1/secrets`, {
      secret_name: secret.secretName,
    });
  }
  if (conn?.type === 'connection') {
    throw new AppError('needs_authentication', `no ${conn.provider} connection for ${service.key}: connect one with POST /v1/connections`, {
      provider: conn.provider,
      connection_id: conn.connectionId,
      auth_url: null,
    });
  }
  throw new AppError('credential_missing', `no usable credential for ${service.key}`);
}

function assertHostAllowed(service: CompiledService, url: URL): void {
  // A service instance may only reach its own servers; the http pseudo-service has no hosts.
  if (service.hosts.length > 0 && !service.hosts.includes(url.hostname.toLowerCase())) {
    throw new AppError('invalid_request', `${url.hostname} is not a host of service ${service.key} (${service.hosts.join(', ')})`);
  }
}

/**
 * Raw HTTP may inject a secret only toward a host on the secret's `allowed_hosts`, and only a
 * secret the caller's user may use; refused with a typed error before anything is sent.
 */
export async function assertInjectable(deps: ExecutorDeps, orgId: string, userId: string | undefined, name: string, url: URL): Promise<void> {
  const use = userId !== undefined && deps.secretForUse ? await deps.secretForUse(orgId, name, userId) : null;
  if (!use) throw new AppError('credential_missing', `no vault secret "${name}" you may use`, { secret_name: name });
  if (!secretAllowedForHost(use.allowedHosts, url.hostname)) {
    throw new AppError(
      'secret_not_allowed_for_host',
      use.allowedHosts === null
        ? `secret "${name}" has no allowed_hosts: it is for service templates only, not raw HTTP`
        : `secret "${name}" may not be sent to ${url.hostname} (allowed_hosts: ${use.allowedHosts.join(', ') || 'none'})`,
      { secret_name: name, host: url.hostname },
    );
  }
}

/**
 * A request ready to leave: credentials resolved, nothing sent yet. `idempotent` says whether
 * sending it again is safe (GET/HEAD, or the service declared an idempotency key header, which
 * `send` then fills with the key the caller passes: the execution or call id).
 */
export interface PlannedUpstream {
  method: string;
  idempotent: boolean;
  /** What a trace may say about the request: method, host, URL without any credential. */
  traced: Attributes;
  /** `onRequestSent`: once the request has left (or could not), before its answer is awaited. */
  send(idempotencyKey: string | null, onRequestSent?: () => void): Promise<ExecuteOutput>;
}

export async function planUpstream(deps: ExecutorDeps, input: ExecuteInput): Promise<PlannedUpstream> {
  const { instance, request } = input;
  const service = instance.service;
  if (service.runtime !== 'http') {
    const handler = deps.runtimes?.[service.runtime];
    if (!handler) throw new AppError('unavailable', `the ${service.runtime} runtime is not available in this process`);
    // A tool call or a platform action has no idempotency contract: never repeated.
    // Another runtime's request leaves somewhere inside its handler: said to have left as it starts.
    const send = (_key: string | null, onRequestSent?: () => void) => {
      onRequestSent?.();
      return handler(deps, input);
    };
    return { method: service.runtime.toUpperCase(), idempotent: false, traced: { 'gateway.runtime': service.runtime }, send };
  }
  let method: string;
  let url: URL;
  let body: unknown;
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'agent-action-gateway/0.1' };
  if (request.kind === 'action') {
    if (!input.action) throw new AppError('invalid_request', 'action missing');
    const built = buildActionRequest(service, input.action, request.params);
    if (!built.ok) throw invalidParams(built.problems);
    method = built.request.method;
    url = new URL(built.request.url);
    body = built.request.body;
    // The template's fixed headers (an API version); the loader kept credentials and framing out of them.
    for (const [k, v] of Object.entries(input.action.fixedHeaders ?? {})) headers[k.toLowerCase()] = v;
  } else {
    method = request.method;
    url = new URL(request.url);
    body = request.body;
    for (const [k, v] of Object.entries(request.headers ?? {})) headers[k.toLowerCase()] = v;
  }
  assertHostAllowed(service, url);
  // Described before any credential is added to the query (and only when a trace records it).
  const traced = isTraced() ? tracedRequest(method, url) : {};

  const injection =
    request.kind === 'http' && request.connection
      ? { headers: { authorization: `Bearer ${(await deps.connectionToken(input.orgId, request.connection, [])).accessToken}` }, query: {} as Record<string, string>, path: {} }
      : await credentialFor(deps, input.orgId, service, instance.credentials, input.action, input.userId, { host: url.hostname, origin: instance.origin });
  if (Object.keys(injection.path).length > 0) {
    // The secret enters the URL here, bound to the host just checked, and nowhere else: every
    // stored or displayed form of this request was built without it and reads `***`.
    if (request.kind !== 'action' || !input.action) throw new AppError('invalid_request', `${service.key} carries its credential in the URL path: call one of its actions`);
    const withSecret = buildActionRequest(service, input.action, request.params, injection.path);
    if (!withSecret.ok) throw invalidParams(withSecret.problems);
    url = new URL(withSecret.request.url);
  }
  if (request.kind === 'http' && request.inject) {
    // Checked again here, on the URL actually sent: the list may have changed since the call began.
    await assertInjectable(deps, input.orgId, input.userId, request.inject.secret, url);
    const value = await deps.secretValue(input.orgId, request.inject.secret, input.userId);
    if (value === null) throw new AppError('credential_missing', `no vault secret "${request.inject.secret}"`, { secret_name: request.inject.secret });
    const v = (request.inject.prefix ?? '') + value;
    if (request.inject.in === 'header') injection.headers[request.inject.name.toLowerCase()] = v;
    else injection.query[request.inject.name] = v;
  }
  for (const [k, v] of Object.entries(injection.query)) url.searchParams.set(k, v);
  Object.assign(headers, injection.headers);
  // Whatever the gateway injected — a template's API key under any header name, a connection's
  // bearer token, a per-call secret — is a credential: none of it follows a cross-origin redirect.
  const credentialHeaders = Object.keys(injection.headers).map((h) => h.toLowerCase());
  let payload: string | undefined;
  if (body !== undefined && method !== 'GET' && method !== 'HEAD') {
    const form = request.kind === 'action' ? input.action?.bodyForm : undefined;
    const encoded = form ? encodeFormBody(body as Record<string, unknown>, form, randomBytes(16).toString('hex')) : { contentType: 'application/json', payload: JSON.stringify(body) };
    payload = encoded.payload;
    headers['content-type'] = encoded.contentType;
  }
  const keyHeader = service.idempotencyKeyHeader?.toLowerCase();

  const send = async (idempotencyKey: string | null, onRequestSent?: () => void): Promise<ExecuteOutput> => {
    const keyed = keyHeader && idempotencyKey ? { ...headers, [keyHeader]: idempotencyKey } : headers;
    // The trace's `traceparent` only where the operator chose to share it (OTEL_PROPAGATE_UPSTREAM).
    const sentHeaders = deps.outbound.propagateTrace ? withTraceContext(keyed) : keyed;
    const started = performance.now();
    const res = await sendOutbound(
      { method, url, headers: sentHeaders, ...(payload !== undefined ? { body: payload } : {}) },
      {
        timeoutMs: deps.outbound.timeoutMs,
        maxResponseBytes: deps.outbound.maxResponseBytes,
        policy: deps.outbound.policy,
        // Only hosts of vetted templates skip the outbound address policy (see templateTrusted).
        trustedHosts: new Set(templateTrusted(instance.origin) ? service.hosts : []),
        credentialQuery: Object.keys(injection.query),
        credentialHeaders,
        ...(onRequestSent ? { onRequestSent } : {}),
      },
    );
    const durationMs = Math.round(performance.now() - started);
    if (input.action?.responseType === 'binary' && res.status >= 200 && res.status < 300 && deps.saveDownload) {
      const download = await deps.saveDownload({
        orgId: input.orgId,
        requesterId: input.requesterId,
        contentType: res.headers['content-type'] ?? 'application/octet-stream',
        data: res.body,
      });
      return { result: { status_code: res.status, duration_ms: durationMs, body: { download } }, httpStatusCode: res.status };
    }
    const raw: RawResponse = { status: res.status, headers: res.headers, bodyText: res.body.toString('utf8'), durationMs };
    return { result: input.verbose ? verboseResult(raw) : compactResult(raw), httpStatusCode: res.status };
  };
  return { method, idempotent: method === 'GET' || method === 'HEAD' || keyHeader !== undefined, traced, send };
}

/** A copy of `headers` with the active trace's W3C `traceparent` (and `tracestate`). */
function withTraceContext(headers: Record<string, string>): Record<string, string> {
  const out = { ...headers };
  propagation.inject(context.active(), out);
  return out;
}

/** The span attributes of an outbound HTTP request: its URL as a log line would show it. */
function tracedRequest(method: string, url: URL): Attributes {
  const shown = loggableUrl(url.pathname + url.search);
  return {
    'http.request.method': method,
    'server.address': url.hostname,
    'url.full': `${url.origin}${shown.path}${shown.query ? `?${shown.query}` : ''}`,
  };
}
