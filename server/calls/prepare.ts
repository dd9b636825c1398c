// A call's request prepared from what the caller sent — a service action's parameters or a raw
// HTTP request: validated against the template (or the raw-call rules), its permission keys, the
// description and `disclose` values an approver reads, the redacted projection and the stored
// request. Nothing is written and nothing is sent here; the same preparation derives an approver's
// edit (server/approvals/edits.ts), so an edited request is judged exactly as the requester's own.
import { buildActionRequest } from '../../core/execution/request.ts';
import { deriveConditions, type DerivedCondition } from '../../core/permissions/derived-conditions.ts';
import { actionPermissionKey, connectionPermissionKey, httpPermissionKey, riskForHttpMethod, secretPermissionKey } from '../../core/permissions/keys.ts';
import { lookupAction } from '../../core/registry/lookup-action.ts';
import { credentialGap } from '../../core/registry/instances.ts';
import { renderSummary } from '../../core/registry/summary.ts';
import type { CallSpec, DisclosedValue, Risk } from '../../workflows/definitions.ts';
import type { Principal } from '../auth/principal.ts';
import { alongInstance, type ReadAlong } from '../auth/read-along.ts';
import type { ConnectionService } from '../connections/service.ts';
import { AppError, forbidden, invalidParams, invalidRequest } from '../errors.ts';
import { redactedProjection, runDisclose } from '../execution/disclose.ts';
import { assertInjectable, templateTrusted, type ExecutorDeps } from '../execution/execute.ts';
import { assertAddressAllowed } from '../execution/http-client.ts';
import { resolveNames } from '../execution/resolve-names.ts';
import type { StoredRequest } from '../execution/stored-request.ts';
import type { RegistryService, ResolvedInstance } from '../registry/service.ts';

export interface ActionCallInput {
  service: string;
  action: string;
  params?: Record<string, unknown> | undefined;
  verbose?: boolean | undefined;
}

export interface RawHttpInput {
  service: string;
  method: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string> | undefined;
  secret?: { name: string; in: 'header' | 'query'; param: string; prefix?: string | undefined } | undefined;
  verbose?: boolean | undefined;
}

/** A connection a raw call sends its token with (resolved from the caller's reference). */
export interface ConnectionRef {
  id: string;
  name: string;
  provider: string;
  ownerId: string;
}

/**
 * Headers the gateway owns on the outbound connection: framing and hop-by-hop headers describe the
 * caller's connection to the gateway, not the gateway's to the upstream (and `Host` would let a
 * caller aim a request at another virtual host than the URL it was allowed for).
 */
const CONNECTION_HEADERS = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'te', 'trailer', 'upgrade', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'expect']);

/** A raw call's own headers: no connection or framing header, no control character (CR/LF) in a value. */
function assertForwardableHeaders(headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) {
    if (CONNECTION_HEADERS.has(name.toLowerCase())) {
      throw invalidRequest(`header ${name} is set by the gateway for the outbound connection and cannot be sent by a caller`, { field: `headers.${name}` });
    }
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value)) {
      throw invalidRequest(`header ${name} has a control character (such as CR or LF) in its value`, { field: `headers.${name}` });
    }
  }
}

export interface CallPreparerDeps {
  registry: RegistryService;
  /** Whether keys are covered for an identity's chain now (identities/chain-check.ts coverageCheck). */
  covers: (identityId: string, keys: readonly string[]) => Promise<boolean>;
  /** Credentials and outbound client for `resolve` lookups; without it ids stay as they are. */
  executor?: ExecutorDeps | undefined;
  /** Turns a missing or unauthorized connection into its typed error (with an auth_url). */
  connections: Pick<ConnectionService, 'credentialError'>;
}

/** A call ready to start: what is stored, checked, shown and sent. */
export interface Prepared {
  instanceName: string;
  template: string;
  action: string;
  runtime: CallSpec['runtime'];
  risk: Risk;
  keys: string[];
  description: string;
  redacted: unknown;
  /** `disclose` values, computed over the redacted request. */
  disclosed: DisclosedValue[];
  /** Conditions a person may remember the call with, derived from its schema and redacted request. */
  conditions: DerivedCondition[];
  stored: StoredRequest;
  verbose: boolean;
  /** Handed to the covered-call activity when it runs in this process (the local exchange). */
  instance: ResolvedInstance;
}

export function createCallPreparer(deps: CallPreparerDeps) {
  const { registry } = deps;

  /** Whether every key is covered for `identityId`'s chain right now (people are never checked). */
  async function covers(p: Principal, identityId: string, keys: readonly string[]): Promise<boolean> {
    return p.type === 'user' || deps.covers(identityId, keys);
  }

  /**
   * Readable names from `resolve` lookups, run only where the caller could read the data itself:
   * the call is covered, or the lookup is itself one of the service's GET actions the caller is
   * covered for. Otherwise the id stays raw (the approver's view resolves with its own authority).
   */
  async function namesFor(
    p: Principal,
    instanceName: string,
    instance: ResolvedInstance,
    action: NonNullable<ReturnType<typeof instance.service.actions.get>>,
    params: Record<string, unknown>,
    callKey: string,
  ): Promise<Record<string, string>> {
    const withLookup = action.parameters.filter((x) => x.resolve && params[x.name] !== undefined);
    if (!deps.executor || withLookup.length === 0) return {};
    const input = { orgId: p.orgId, userId: p.userId, instance, action, params };
    if (await covers(p, p.identityId, [callKey])) return resolveNames(deps.executor, input);
    const only: string[] = [];
    for (const x of withLookup) {
      const read = lookupAction(instance.service, x.resolve!.get, params);
      if (!read) continue;
      const readKey = actionPermissionKey(instanceName, read.action.key, read.action.scopeParam, read.params);
      if (await covers(p, p.identityId, [readKey])) only.push(x.name);
    }
    return only.length > 0 ? resolveNames(deps.executor, { ...input, only }) : {};
  }

  /**
   * A call that could never run — its credential does not exist for the requester — is answered at
   * once with the typed error (and an auth_url where a person can fix it), instead of raising an
   * approval that a human would grant only to see the execution fail.
   */
  async function assertCredentialAvailable(p: Principal, choices: Parameters<typeof credentialGap>[0], action: Parameters<typeof credentialGap>[1]) {
    const gap = credentialGap(choices, action);
    if (!gap) return;
    if (gap.kind === 'secret') {
      throw new AppError('credential_missing', `no vault secret "${gap.secretName}" for this service: create it with POST /v1/secrets`, { secret_name: gap.secretName });
    }
    throw await deps.connections.credentialError(p, gap);
  }

  /** `onlyRisk` refuses any other risk (gateway_read); `along`: what the request's authentication read. */
  async function prepareAction(p: Principal, input: ActionCallInput, opts: { onlyRisk?: Risk | undefined; along?: ReadAlong | undefined } = {}): Promise<Prepared> {
    const { onlyRisk } = opts;
    const instance = await registry.resolveInstance(p, input.service, alongInstance(opts.along, input.service));
    const action = instance.service.actions.get(input.action);
    if (!action) throw invalidRequest(`service "${input.service}" has no action "${input.action}"`, { field: 'action' });
    if (action.disabled) throw new AppError('forbidden', `action "${input.action}" of "${input.service}" is disabled`);
    if (onlyRisk && action.risk !== onlyRisk) {
      throw forbidden(`this call runs ${onlyRisk} actions only; "${input.action}" of "${input.service}" has risk "${action.risk}": use gateway_call`);
    }
    const params = input.params ?? {};
    const built = buildActionRequest(instance.service, action, params);
    if (!built.ok) throw invalidParams(built.problems);
    const { request } = built;
    await assertCredentialAvailable(p, instance.credentials, action);
    // Disclose runs over the redacted projection, so `redact` always wins over `disclose`.
    const redacted = redactedProjection(instance.service, action, request);
    const key = actionPermissionKey(input.service, action.key, action.scopeParam, request.params, request.body);
    const [names, disclosed] = await Promise.all([
      namesFor(p, input.service, instance, action, request.params, key),
      runDisclose(action.disclose, redacted),
    ]);
    // Readable names from `resolve` lookups replace their ids in the description only.
    const values = { ...(request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {}), ...request.params, ...names };
    return {
      instanceName: input.service,
      template: instance.service.key,
      action: action.key,
      runtime: instance.service.runtime,
      risk: action.risk,
      keys: [key],
      description: renderSummary(action.summary, values),
      redacted,
      disclosed,
      conditions: deriveConditions(action, redacted),
      stored: { kind: 'action', params },
      verbose: input.verbose ?? false,
      instance,
    };
  }

  async function prepareHttp(p: Principal, input: RawHttpInput, connection?: ConnectionRef, along?: ReadAlong): Promise<Prepared> {
    const instance = await registry.resolveInstance(p, input.service, alongInstance(along, input.service));
    if (instance.service.runtime !== 'http') {
      throw invalidRequest(`"${input.service}" runs on the ${instance.service.runtime} runtime: call its actions, raw HTTP does not apply`, { field: 'service' });
    }
    const method = input.method.toUpperCase();
    if (!/^[A-Z]{3,10}$/.test(method)) throw invalidRequest('method must be an HTTP verb', { field: 'method' });
    const pseudo = instance.service.baseUrls.length === 0;
    let url: URL;
    try {
      // The http service takes absolute URLs; a service instance takes a path on its own server.
      url = pseudo || /^https?:\/\//i.test(input.path) ? new URL(input.path) : new URL(`${instance.service.baseUrls[0]!.replace(/\/+$/, '')}/${input.path.replace(/^\/+/, '')}`);
    } catch {
      throw invalidRequest(pseudo ? 'path must be an absolute http(s) URL for the http service' : 'path is not a valid URL path', { field: 'path' });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidRequest('only http and https URLs are allowed', { field: 'path' });
    if (instance.service.hosts.length > 0 && !instance.service.hosts.includes(url.hostname.toLowerCase())) {
      throw invalidRequest(`${url.hostname} is not a host of service ${instance.service.key}`, { field: 'path' });
    }
    if (input.secret && instance.service.key !== 'http') throw invalidRequest('per-call secret injection is only for the http service', { field: 'secret' });
    assertForwardableHeaders(input.headers ?? {});

    const keys = [httpPermissionKey(method, url)];
    // The query is part of what is sent: an approver reads it where they read the target (issue 9).
    let description = `${method} ${url.origin}${url.pathname}${url.search}`;
    const disclosed: DisclosedValue[] = [];
    if (input.secret) {
      // Refused before anything is stored or sent: a secret the caller's user may not use, or a
      // host outside the secret's allowed_hosts. Otherwise the injection is part of what is
      // checked (its own key on the chain) and of what an approver sees (description, disclosed).
      if (!deps.executor) throw new AppError('unavailable', 'secret injection is not available in this process');
      await assertInjectable(deps.executor, p.orgId, p.userId, input.secret.name, url);
      keys.push(secretPermissionKey(input.secret.name, url));
      const where = `${input.secret.in === 'header' ? 'header' : 'query parameter'} ${input.secret.param}`;
      description += ` with secret ${input.secret.name} in ${where}`;
      disclosed.push({ label: 'Injected secret', value: `${input.secret.name} in ${where}` });
    }
    if (connection) {
      // A connection's token is for its provider's hosts (the servers of vetted templates using it).
      // Any other host needs the connection named in what is permitted: `connection:<name>:<host>`,
      // so an agent needs a rule or a person's approval that says so; a person only for their own.
      const hosts = await registry.providerHosts(p, connection.provider);
      if (!hosts.has(url.hostname.toLowerCase())) {
        if (p.type === 'user' && connection.ownerId !== p.userId) {
          throw new AppError('forbidden', `the ${connection.provider} token of connection "${connection.name}" is for ${[...hosts].join(', ') || 'its provider'}; only its owner may send it to ${url.hostname}`);
        }
        keys.push(connectionPermissionKey(connection.name, url));
      }
      description += ` with the ${connection.provider} token of connection ${connection.name}`;
      disclosed.push({ label: 'Connection token', value: `${connection.name} (${connection.provider}) to ${url.host}` });
    }
    // A call that could never be sent is refused now, with the error the send would give, instead
    // of asking a person first (vetted templates' hosts are exempt, as at the send). After the
    // credential checks: a missing or misbound credential is the more useful answer.
    if (deps.executor && !(templateTrusted(instance.origin) && instance.service.hosts.includes(url.hostname.toLowerCase()))) {
      await assertAddressAllowed(url, deps.executor.outbound.policy);
    }
    const stored: StoredRequest = {
      kind: 'http',
      method,
      url: url.toString(),
      ...(input.headers ? { headers: input.headers } : {}),
      ...(input.body !== undefined ? { body: input.body } : {}),
      ...(input.secret ? { inject: { secret: input.secret.name, in: input.secret.in, name: input.secret.param, ...(input.secret.prefix ? { prefix: input.secret.prefix } : {}) } } : {}),
      ...(connection ? { connection: connection.id } : {}),
    };
    return {
      instanceName: input.service,
      template: instance.service.key,
      action: `${method} ${url.host}${url.pathname}`,
      runtime: 'http',
      risk: riskForHttpMethod(method),
      keys,
      description,
      // Raw headers may carry credentials the caller typed in: never persisted. The injected
      // secret is named (never its value).
      redacted: {
        method,
        url: `${url.origin}${url.pathname}${url.search}`,
        params: Object.fromEntries(url.searchParams),
        body: input.body ?? null,
        headers: Object.keys(input.headers ?? {}),
        ...(input.secret ? { secret: { name: input.secret.name, in: input.secret.in, param: input.secret.param } } : {}),
      },
      disclosed,
      // A raw request has no schema to say which of its fields are amounts or ids.
      conditions: [],
      stored,
      verbose: input.verbose ?? false,
      instance,
    };
  }


  return { prepareAction, prepareHttp, namesFor };
}

export type CallPreparer = ReturnType<typeof createCallPreparer>;
