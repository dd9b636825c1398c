// The API side of an action call: resolve the instance and action, validate, derive permission
// keys, persist the (encrypted) request, and start the call workflow with Update-with-Start so the
// caller's answer comes back as soon as the workflow knows it. Also: resume by approval_id,
// resolve, and the approval views.
import { createHmac, randomUUID } from 'node:crypto';
import { ApplicationFailure, defineSearchAttributeKey, WorkflowNotFoundError } from '@temporalio/common';
import { WithStartWorkflowOperation, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { buildActionRequest } from '../../core/execution/request.ts';
import { checkPermission as checkChain, isAncestor, PermissionInputError } from '../../core/permissions/chain.ts';
import { lookupAction } from '../../core/registry/lookup-action.ts';
import { actionPermissionKey, approvalRisk, httpPermissionKey, riskForHttpMethod, secretPermissionKey } from '../../core/permissions/keys.ts';
import { parseTtl } from '../../core/permissions/ttl.ts';
import { credentialGap } from '../../core/registry/instances.ts';
import { renderSummary } from '../../core/registry/summary.ts';
import {
  callWorkflowId,
  outcomeUpdate,
  replayUpdate,
  resolveUpdate,
  UPDATE_ERRORS,
  type ApprovalRecord,
  type CallOutcome,
  type CallSpec,
  type ChainMember,
  type Decision,
  type DisclosedValue,
  type Risk,
} from '../../workflows/definitions.ts';
import type { Principal } from '../auth/principal.ts';
import { requestChainOf, type RequestChain } from '../auth/request-chain.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { ConnectionService } from '../connections/service.ts';
import { AppError, forbidden, invalidRequest, notFound } from '../errors.ts';
import { redactedProjection, runDisclose } from '../execution/disclose.ts';
import { assertInjectable, type ExecutorDeps } from '../execution/execute.ts';
import { resolveNames } from '../execution/resolve-names.ts';
import { requestAad, storedRequestSchema, type StoredRequest } from '../execution/stored-request.ts';
import type { Envelope } from '../../core/vault/envelope.ts';
import * as identities from '../identities/store.ts';
import type { RegistryService, ResolvedInstance } from '../registry/service.ts';
import { unavailable, type TemporalHealth } from '../temporal/health.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import { offerPreparedCall, withdrawPreparedCall } from './handoff.ts';
import { enforceRateLimit } from './rate-limit.ts';
import * as store from './store.ts';
import { createWorkflowGoneSettler } from './workflow-gone.ts';

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

export type ResolveDecision = 'allow_once' | 'allow_always' | 'allow' | 'allow_remember' | 'deny' | 'bubble';

export interface ResolveBody {
  decision: ResolveDecision;
  remember_keys?: string[] | undefined;
  ttl?: string | undefined;
  reason?: string | undefined;
}

export interface CallServiceDeps {
  pool: DatabasePool;
  temporal: Client;
  taskQueue: string;
  registry: RegistryService;
  keyring: VaultKeyring;
  masterKey: Buffer;
  config: Pick<Config, 'publicUrl' | 'executionWindowSeconds' | 'rateLimitPerMinute'>;
  /** Credentials and outbound client for `resolve` lookups; without it ids stay as they are. */
  executor?: ExecutorDeps;
  /** Refuses Temporal operations at once while Temporal is down (503 instead of a long hang). */
  temporalHealth?: TemporalHealth;
  /** Turns a missing or unauthorized connection into its typed error (with an auth_url). */
  connections: Pick<ConnectionService, 'credentialError'>;
  logger: Logger;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const DECISIONS: Record<ResolveDecision, Decision> = {
  allow_once: 'allow',
  allow: 'allow',
  allow_always: 'allow_remember',
  allow_remember: 'allow_remember',
  deny: 'deny',
  bubble: 'bubble',
};

const SA = {
  org: defineSearchAttributeKey('GatewayOrg', 'KEYWORD'),
  agent: defineSearchAttributeKey('GatewayAgent', 'KEYWORD'),
  service: defineSearchAttributeKey('GatewayService', 'KEYWORD'),
  action: defineSearchAttributeKey('GatewayAction', 'KEYWORD'),
  status: defineSearchAttributeKey('GatewayStatus', 'KEYWORD'),
};

/** Validator rejections from the workflow, as REST errors. */
function mapUpdateError(err: unknown): never {
  if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
    const { type, message } = err.cause;
    switch (type) {
      case UPDATE_ERRORS.notInChain:
        throw new AppError('not_in_your_chain', message);
      case UPDATE_ERRORS.selfResolve:
      case UPDATE_ERRORS.notRequester:
        throw new AppError('forbidden', message);
      case UPDATE_ERRORS.invalidRemember:
        throw new AppError('invalid_request', message);
      default:
        throw new AppError('conflict', message, { reason: type });
    }
  }
  if (err instanceof WorkflowNotFoundError || (err instanceof Error && /already completed|not found/i.test(err.message))) {
    throw new AppError('conflict', 'this approval is no longer open');
  }
  throw err;
}

/** The update could not reach a running workflow: it finished, or it is gone. */
function workflowNotRunning(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError || (err instanceof Error && /already completed|not found/i.test(err.message));
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function createCallService(deps: CallServiceDeps) {
  const { pool, temporal, registry } = deps;
  const settleWithoutWorkflow = createWorkflowGoneSettler(deps);
  /** A Temporal operation, refused or released with 503 `unavailable` while Temporal is down. */
  const viaTemporal = <T>(what: string, op: () => Promise<T>): Promise<T> =>
    deps.temporalHealth ? deps.temporalHealth.guard((signal) => temporal.connection.withAbortSignal(signal, op), what) : op();
  const assertTemporalUp = (what: string) => {
    if (deps.temporalHealth && !deps.temporalHealth.up()) throw unavailable('temporal', `Temporal is unreachable: ${what} cannot run now; retry shortly`);
  };

  /** The caller's chain and org settings: as read while authenticating this request, else now. */
  async function chainOf(p: Principal): Promise<{ chain: ChainMember[]; rows: identities.IdentityRow[]; org: RequestChain['org'] }> {
    const known = requestChainOf(p);
    const [rows, org] = known ? [known.chain, known.org] : await Promise.all([identities.getChain(pool, p.identityId), identities.getOrg(pool, p.orgId)]);
    if (rows.length === 0 || rows.some((r) => r.status !== 'active')) throw forbidden('the calling identity or one of its ancestors is not active');
    return { rows, org, chain: rows.map((r) => ({ id: r.id, kind: r.kind, parentId: r.parent_id, inheritPermissions: r.inherit_permissions })) };
  }

  /** Whether every key is covered for `identityId`'s chain right now (people are never checked). */
  async function covers(p: Principal, identityId: string, keys: readonly string[]): Promise<boolean> {
    if (p.type === 'user') return true;
    const { chain: rows, rules } = await identities.getChainWithRules(pool, identityId);
    if (rows.length === 0 || rows.some((r) => r.status !== 'active')) return false;
    try {
      return checkChain({ chain: rows.map(identities.toChainIdentity), rules, keys: [...keys], now: new Date() }).outcome === 'covered';
    } catch (err) {
      if (err instanceof PermissionInputError) return false;
      throw err;
    }
  }

  /**
   * Readable names from `resolve` lookups, run only where the caller could read the data itself:
   * the call is covered, or the lookup is itself one of the service's GET actions the caller is
   * covered for. Otherwise the id stays raw (the approver's view resolves with its own authority).
   */
  async function namesFor(
    p: Principal,
    instanceName: string,
    instance: Awaited<ReturnType<RegistryService['resolveInstance']>>,
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

  interface Prepared {
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
    stored: StoredRequest;
    verbose: boolean;
    /** Handed to the covered-call activity when it runs in this process (handoff.ts). */
    instance: ResolvedInstance;
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

  async function prepareAction(p: Principal, input: ActionCallInput, onlyRisk?: Risk): Promise<Prepared> {
    const instance = await registry.resolveInstance(p, input.service);
    const action = instance.service.actions.get(input.action);
    if (!action) throw invalidRequest(`service "${input.service}" has no action "${input.action}"`, { field: 'action' });
    if (action.disabled) throw new AppError('forbidden', `action "${input.action}" of "${input.service}" is disabled`);
    if (onlyRisk && action.risk !== onlyRisk) {
      throw forbidden(`this call runs ${onlyRisk} actions only; "${input.action}" of "${input.service}" has risk "${action.risk}": use gateway_call`);
    }
    const params = input.params ?? {};
    const built = buildActionRequest(instance.service, action, params);
    if (!built.ok) throw invalidRequest('the action parameters are not valid', { problems: built.problems });
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
      stored: { kind: 'action', params },
      verbose: input.verbose ?? false,
      instance,
    };
  }

  async function prepareHttp(p: Principal, input: RawHttpInput, connectionId?: string): Promise<Prepared> {
    const instance = await registry.resolveInstance(p, input.service);
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
    const keys = [httpPermissionKey(method, url)];
    let description = `${method} ${url.origin}${url.pathname}`;
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
    const stored: StoredRequest = {
      kind: 'http',
      method,
      url: url.toString(),
      ...(input.headers ? { headers: input.headers } : {}),
      ...(input.body !== undefined ? { body: input.body } : {}),
      ...(input.secret ? { inject: { secret: input.secret.name, in: input.secret.in, name: input.secret.param, ...(input.secret.prefix ? { prefix: input.secret.prefix } : {}) } } : {}),
      ...(connectionId ? { connection: connectionId } : {}),
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
        url: `${url.origin}${url.pathname}`,
        params: Object.fromEntries(url.searchParams),
        body: input.body ?? null,
        headers: Object.keys(input.headers ?? {}),
        ...(input.secret ? { secret: { name: input.secret.name, in: input.secret.in, param: input.secret.param } } : {}),
      },
      disclosed,
      stored,
      verbose: input.verbose ?? false,
      instance,
    };
  }

  async function start(p: Principal, prepared: Prepared, requestId: string | null): Promise<CallOutcome> {
    const { chain, rows, org } = await chainOf(p);
    const requester = rows[0];
    // Refused before anything is written: a call Temporal cannot run must leave no trace.
    assertTemporalUp('a call');
    const callId = randomUUID();
    const callDigest = createHmac('sha256', deps.masterKey).update(`dedupe:${prepared.instanceName}:${prepared.action}:${canonical(prepared.stored)}`).digest('base64url');
    const envelope = deps.keyring.encryptShortLived(JSON.stringify(prepared.stored), requestAad(callId));
    await store.insertCall(pool, {
      id: callId,
      orgId: p.orgId,
      requesterId: p.identityId,
      userId: p.userId,
      service: prepared.instanceName,
      template: prepared.template,
      action: prepared.action,
      runtime: prepared.runtime,
      risk: prepared.risk,
      permissionKeys: prepared.keys,
      description: prepared.description,
      requestRedacted: prepared.redacted,
      requestEnvelope: envelope,
      disclosed: prepared.disclosed,
      requestId,
    });
    const spec: CallSpec = {
      callId,
      orgId: p.orgId,
      requesterId: p.identityId,
      userId: p.userId,
      chain,
      service: prepared.instanceName,
      template: prepared.template,
      action: prepared.action,
      runtime: prepared.runtime,
      risk: prepared.risk,
      approvalRisk: approvalRisk(prepared.risk),
      permissionKeys: prepared.keys,
      description: prepared.description,
      autoCallOnApprove: requester?.auto_call_on_approve ?? true,
      maxPendingPerAgent: org.max_pending_per_agent,
      clocks: {
        approvalTtlMs: org.approval_ttl_seconds * 1000,
        executionWindowMs: deps.config.executionWindowSeconds * 1000,
        autoBubbleMs: org.approval_auto_bubble_seconds ? org.approval_auto_bubble_seconds * 1000 : null,
      },
      approvalUrlBase: deps.config.publicUrl,
      requestId,
      verbose: prepared.verbose,
      callDigest,
      ...(prepared.disclosed.length > 0 ? { disclosed: prepared.disclosed } : {}),
    };
    offerPreparedCall(callId, { stored: prepared.stored, redacted: prepared.redacted, instance: prepared.instance });
    try {
      return await viaTemporal('the call', () => temporal.workflow.executeUpdateWithStart(outcomeUpdate, {
        startWorkflowOperation: new WithStartWorkflowOperation('callWorkflow', {
          workflowId: callWorkflowId(callId),
          taskQueue: deps.taskQueue,
          args: [spec],
          workflowIdConflictPolicy: 'FAIL',
          typedSearchAttributes: [
            { key: SA.org, value: p.orgId },
            { key: SA.agent, value: p.identityId },
            { key: SA.service, value: prepared.instanceName },
            { key: SA.action, value: prepared.action },
            { key: SA.status, value: 'checking' },
          ],
          memo: { description: prepared.description },
        }),
      }));
    } catch (err) {
      withdrawPreparedCall(callId);
      if (err instanceof AppError && err.code === 'unavailable') {
        // Temporal died while the call was starting: it may still run once Temporal is back, so
        // the row is left to the workflow, and the caller gets the call id to look it up.
        throw new AppError('unavailable', err.message, { ...err.details, call_id: callId });
      }
      await store.finishCall(pool, callId, 'failed', null);
      throw err;
    }
  }

  /** Who may see an approval: its requester's chain upward, the owning user, org admins. */
  async function loadVisibleApproval(p: Principal, id: string) {
    const a = await store.getApproval(pool, id);
    if (!a || a.org_id !== p.orgId) throw notFound('approval');
    const chainRows = await identities.getChain(pool, a.requester_id);
    const chain = chainRows.map(identities.toChainIdentity);
    const admin = p.type === 'user' && p.role === 'admin';
    const self = a.requester_id === p.identityId;
    const ancestor = isAncestor(chain, p.identityId, a.requester_id);
    if (!admin && !self && !ancestor) throw notFound('approval');
    return { a, chainRows, relationship: self ? 'self' : ancestor ? 'downstream' : 'not_in_your_chain' } as const;
  }

  /**
   * The call's description with `resolve` names looked up with the viewer's own authority (what
   * the viewer could read itself); the stored description keeps raw ids where the requester could
   * not. Best effort: any failure gives the stored description.
   */
  async function describeFor(p: Principal, call: store.CallRow): Promise<string> {
    if (!deps.executor) return call.description;
    try {
      const instance = await registry.resolveInstance({ orgId: call.org_id, userId: call.user_id }, call.service);
      const action = instance.service.actions.get(call.action);
      if (!action || !action.parameters.some((x) => x.resolve)) return call.description;
      const stored = storedRequestSchema.parse(JSON.parse(deps.keyring.decrypt(call.request_envelope as Envelope, requestAad(call.id)).toString('utf8')));
      if (stored.kind !== 'action') return call.description;
      const built = buildActionRequest(instance.service, action, stored.params);
      if (!built.ok) return call.description;
      const { request } = built;
      const key = actionPermissionKey(call.service, action.key, action.scopeParam, request.params, request.body);
      const names = await namesFor(p, call.service, instance, action, request.params, key);
      if (Object.keys(names).length === 0) return call.description;
      const values = { ...(request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {}), ...request.params, ...names };
      return renderSummary(action.summary, values);
    } catch {
      return call.description;
    }
  }

  async function approvalView(p: Principal, id: string, resolveForViewer = false) {
    const { a, chainRows, relationship } = await loadVisibleApproval(p, id);
    const [exec, call] = await Promise.all([store.getExecutionByApproval(pool, a.id), store.getCall(pool, a.call_id)]);
    const description = call && resolveForViewer ? await describeFor(p, call) : call?.description;
    const requester = chainRows[0];
    return {
      id: a.id,
      status: a.status,
      relationship,
      risk: a.risk,
      permission_keys: a.permission_keys,
      suggested_tiers: a.suggested_tiers,
      derived_keys: a.derived_keys,
      expires_at: (exec ? exec.expires_at : a.expires_at).toISOString(),
      ...(exec && a.status === 'allowed'
        ? {
            execution: {
              id: exec.id,
              status: exec.status,
              runtime: exec.runtime,
              ...(exec.triggered_by ? { triggered_by: exec.triggered_by } : {}),
              ...(exec.http_status_code !== null ? { http_status_code: exec.http_status_code } : {}),
              ...(exec.result !== null ? { result: exec.result } : {}),
              // Why it did not run (e.g. `outcome_unknown`): the approver sees it too.
              ...(exec.error !== null && exec.status !== 'executed' ? { error: exec.error } : {}),
            },
          }
        : {}),
      action: call
        ? { service: call.service, template: call.template, action: call.action, description, request: call.request_redacted, disclosed: call.disclosed }
        : null,
      requester: requester ? { id: requester.id, kind: requester.kind, name: requester.name } : { id: a.requester_id },
      resolver_id: a.resolver_id,
      auto_call_on_approve: a.auto_call_on_approve,
      decision: a.decision,
      reason: a.reason,
      resolved_by: a.resolved_by,
      resolved_at: a.resolved_at?.toISOString() ?? null,
      created_at: a.created_at.toISOString(),
      approval_url: `${deps.config.publicUrl}/approvals/${a.id}`,
    };
  }

  /** Every call, fresh or resumed, from any transport, first takes a token from its identity's bucket. */
  const admit = (p: Principal) => enforceRateLimit(pool, p.identityId, deps.config.rateLimitPerMinute);

  return {
    /** A service action; `onlyRisk` refuses any other risk (gateway_read runs read actions only). */
    async callAction(p: Principal, input: ActionCallInput, requestId: string | null, opts: { onlyRisk?: Risk } = {}): Promise<CallOutcome> {
      await admit(p);
      return start(p, await prepareAction(p, input, opts.onlyRisk), requestId);
    },

    async callHttp(p: Principal, input: RawHttpInput, requestId: string | null, connectionId?: string): Promise<CallOutcome> {
      await admit(p);
      return start(p, await prepareHttp(p, input, connectionId), requestId);
    },

    /** The requester resumes its approved call (or reads the stored result once executed). */
    async resume(p: Principal, approvalId: string): Promise<CallOutcome> {
      await admit(p);
      const { a } = await loadVisibleApproval(p, approvalId);
      if (a.requester_id !== p.identityId) throw forbidden('only the identity that made the call can resume it');
      if (a.status === 'denied') return { status: 'denied', reason: a.reason ?? 'denied' };
      if (a.status !== 'allowed') throw new AppError('conflict', `the approval is ${a.status}`, { status: a.status });
      const exec = await store.getExecutionByApproval(pool, a.id);
      if (exec && (exec.status === 'executed' || exec.status === 'failed')) {
        const call = await store.getCall(pool, a.call_id);
        return exec.status === 'executed'
          ? { status: 'called', result: exec.result as never, action_description: call?.description ?? a.action_description }
          : { status: 'error', error: exec.error as never };
      }
      if (exec && (exec.status === 'expired' || exec.status === 'cancelled')) throw new AppError('conflict', `the execution is ${exec.status}`, { status: exec.status });
      try {
        return await viaTemporal('the resume', () =>
          temporal.workflow.getHandle(callWorkflowId(a.call_id)).executeUpdate(replayUpdate, {
            args: [{ callerId: p.identityId, triggeredBy: p.type === 'user' ? 'user' : 'agent' }],
          }),
        );
      } catch (err) {
        if (workflowNotRunning(err)) await settleWithoutWorkflow(a.id);
        mapUpdateError(err);
      }
    },

    async resolve(p: Principal, approvalId: string, body: ResolveBody): Promise<ApprovalRecord & { disclosed: unknown }> {
      const a = await store.getApproval(pool, approvalId);
      if (!a || a.org_id !== p.orgId) throw notFound('approval');
      const admin = p.type === 'user' && p.role === 'admin';
      if (a.requester_id === p.identityId) throw forbidden('the requester cannot resolve its own approval');
      if (!admin) {
        const chain = (await identities.getChain(pool, a.requester_id)).map(identities.toChainIdentity);
        if (!isAncestor(chain, p.identityId, a.requester_id)) throw new AppError('not_in_your_chain', 'only an ancestor of the requester (or an org admin) may resolve this approval');
      }
      const decision = DECISIONS[body.decision];
      let rememberTtlMs: number | undefined;
      if (decision === 'allow_remember') {
        if (!body.remember_keys?.length) throw invalidRequest('allow_remember needs remember_keys (a subset of the suggested tier keys)', { field: 'remember_keys' });
        if (!body.ttl) throw invalidRequest('allow_remember needs a ttl such as "24h" or "7d"', { field: 'ttl' });
        const ttl = parseTtl(body.ttl);
        if (!ttl.ok) throw invalidRequest(ttl.message, { field: 'ttl' });
        rememberTtlMs = ttl.ms;
      } else if (body.remember_keys || body.ttl) {
        throw invalidRequest('remember_keys and ttl go with allow_remember / allow_always only');
      }
      try {
        const [record, call] = await Promise.all([
          viaTemporal('the decision', () => temporal.workflow.getHandle(callWorkflowId(a.call_id)).executeUpdate(resolveUpdate, {
            args: [
              {
                decision,
                resolverId: p.identityId,
                resolverIsAdmin: admin,
                ...(body.remember_keys ? { rememberKeys: body.remember_keys } : {}),
                ...(rememberTtlMs ? { rememberTtlMs, rememberTtl: body.ttl! } : {}),
                ...(body.reason ? { reason: body.reason } : {}),
              },
            ],
          })),
          store.getCall(pool, a.call_id).catch(() => null),
        ]);
        // What the resolver saw: the `disclose` values recorded with the call.
        return { ...record, disclosed: call?.disclosed ?? [] };
      } catch (err) {
        if (workflowNotRunning(err)) await settleWithoutWorkflow(a.id);
        mapUpdateError(err);
      }
    },

    /**
     * `gateway_approve_self`: an agent resolves its OWN approval, acting for the human who enabled
     * `self_approve_enabled` on its MCP binding (the MCP tool checks the flag on every call). The
     * decision runs exactly like the human's: resolver = the user, never as an admin.
     */
    async resolveSelf(p: Principal, approvalId: string, body: ResolveBody): Promise<ApprovalRecord & { disclosed: unknown }> {
      if (p.type !== 'agent' || p.via !== 'oauth') throw forbidden('only an MCP connection whose owner enabled self-approval may approve its own requests');
      const a = await store.getApproval(pool, approvalId);
      if (!a || a.org_id !== p.orgId) throw notFound('approval');
      if (a.requester_id !== p.identityId) {
        const chain = (await identities.getChain(pool, a.requester_id)).map(identities.toChainIdentity);
        if (!isAncestor(chain, p.identityId, a.requester_id)) throw notFound('approval');
        throw forbidden("gateway_approve_self resolves only your own approvals; use gateway_approve for a descendant's");
      }
      const asUser: Principal = { ...p, identityId: p.userId };
      const record = await this.resolve(asUser, approvalId, {
        ...body,
        reason: body.reason ?? 'resolved by the requesting agent with gateway_approve_self (self-approval enabled by its user)',
      });
      return { ...record, relationship: 'self' };
    },

    getApproval: (p: Principal, id: string) => approvalView(p, id, true),

    async listApprovals(p: Principal, q: { status?: string | undefined; scope?: 'mine' | 'assigned' | 'actionable' | undefined; limit: number; cursor?: string | undefined }) {
      const admin = p.type === 'user' && p.role === 'admin';
      let requesterIds: string[] | undefined;
      let resolverId: string | undefined;
      const subtree = (await identities.getSubtree(pool, p.identityId)).map((r) => r.id);
      if (q.scope === 'mine') requesterIds = subtree;
      else if (q.scope === 'assigned') resolverId = p.identityId;
      else if (!admin) requesterIds = subtree;
      let before: { at: Date; id: string } | undefined;
      if (q.cursor) {
        const [at, id] = Buffer.from(q.cursor, 'base64url').toString('utf8').split('|');
        if (!at || !id || Number.isNaN(Date.parse(at)) || !UUID.test(id)) throw invalidRequest('cursor is not valid', { field: 'cursor' });
        before = { at: new Date(at), id };
      }
      const statusFilter = q.scope === 'actionable' ? undefined : q.status;
      let rows = await store.listApprovals(pool, { orgId: p.orgId, status: statusFilter, requesterIds, resolverId, beforeCreatedAt: before, limit: q.limit + 1 });
      if (q.scope === 'actionable') {
        rows = rows.filter((r) => (r.status === 'pending' || r.status === 'bubbled') && r.requester_id !== p.identityId);
        if (!admin) rows = rows.filter((r) => subtree.includes(r.requester_id));
      }
      const page = rows.slice(0, q.limit);
      const last = page.at(-1);
      const views = await Promise.all(page.map((r) => approvalView(p, r.id)));
      return {
        approvals: views,
        next_cursor: rows.length > q.limit && last ? Buffer.from(`${last.created_at.toISOString()}|${last.id}`).toString('base64url') : null,
      };
    },
  };
}

export type CallService = ReturnType<typeof createCallService>;
