// The API side of an action call: resolve the instance and action, validate, derive permission
// keys, persist the (encrypted) request, and start the call workflow with Update-with-Start so the
// caller's answer comes back as soon as the workflow knows it. Also: resume by approval_id (the
// approvals themselves live in server/approvals/).
import { createHmac, randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { applyEdit, fieldDiff, keysBeyondOriginal, RequestEditError, wideningKey, type RequestEdit } from '../../core/approvals/request-edit.ts';
import { REDACTED } from '../../core/execution/redact.ts';
import { buildActionRequest } from '../../core/execution/request.ts';
import { PermissionInputError } from '../../core/permissions/chain.ts';
import { checkLiveChain } from '../identities/chain-check.ts';
import { lookupAction } from '../../core/registry/lookup-action.ts';
import { actionPermissionKey, approvalRisk, connectionPermissionKey, httpPermissionKey, riskForHttpMethod, secretPermissionKey } from '../../core/permissions/keys.ts';
import { credentialGap } from '../../core/registry/instances.ts';
import { renderSummary } from '../../core/registry/summary.ts';
import {
  CALL_SEARCH_ATTRIBUTES,
  callWorkflowId,
  cancelUpdate,
  outcomeUpdate,
  replayUpdate,
  type ApprovedEdit,
  type CallOutcome,
  type CallSpec,
  type ChainMember,
  type DisclosedValue,
  type Risk,
} from '../../workflows/definitions.ts';
import type { Principal } from '../auth/principal.ts';
import { requestChainOf, type RequestChain } from '../auth/request-chain.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { ConnectionService } from '../connections/service.ts';
import { readVisibleApproval } from '../approvals/service.ts';
import { updateError, workflowNotRunning } from '../approvals/update-errors.ts';
import { AppError, forbidden, invalidParams, invalidRequest, notFound } from '../errors.ts';
import { isAdmin } from '../auth/principal.ts';
import { redactedProjection, runDisclose } from '../execution/disclose.ts';
import { assertInjectable, templateTrusted, type ExecutorDeps } from '../execution/execute.ts';
import { assertAddressAllowed } from '../execution/http-client.ts';
import { resolveNames } from '../execution/resolve-names.ts';
import { editedRequestAad, requestAad, type StoredRequest } from '../execution/stored-request.ts';
import { decryptStoredRequest } from './stored-call.ts';
import type { ChainReader, IdentityRow } from '../identities/readers.ts';
import type { OrgReader } from '../orgs/readers.ts';
import type { RegistryService, ResolvedInstance } from '../registry/service.ts';
import { unavailable, viaTemporal as guardedBy, type TemporalHealth } from '../temporal/health.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import { expectFirstAnswer } from './first-answers.ts';
import { settleIfNeverStarted } from './never-started.ts';
import { offerPreparedCall, withdrawPreparedCall } from './handoff.ts';
import { openOutcome } from './sealed-results.ts';
import { canonicalJson } from '../../core/text/canonical-json.ts';
import type { MessageSigner } from '../temporal/message-signer.ts';
import { callBucket, enforceRateLimit, rateLimited } from './rate-limit.ts';
import * as store from './store.ts';
import { approvalAnswer, finalAnswer, keyedCallId, pendingAnswer, presentCall } from './call-answers.ts';
import { namingCall } from './naming-call.ts';
import { findStartedWorkflow } from './uncertain-start.ts';
import { createWorkflowGoneSettler } from './workflow-gone.ts';

/** GET /v1/approvals/{id}/edit: what the dashboard's "Edit before allowing" form is built from. */
export interface EditForm {
  kind: 'params' | 'request';
  editable: boolean;
  reason?: string;
  parameters?: { name: string; in: 'path' | 'query' | 'body'; required: boolean; type: string; enum?: unknown[]; description?: string; redacted: boolean; value?: unknown }[];
  request?: { method: string; url: string; headers: string[]; body: unknown };
}

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

/** An answer and the call it belongs to (`GET /v1/calls/{call_id}` reads it back). */
export type IdentifiedOutcome = CallOutcome & { call_id: string };

/** A connection a raw call sends its token with (resolved from the caller's reference). */
export interface ConnectionRef {
  id: string;
  name: string;
  provider: string;
  ownerId: string;
}

export interface CallServiceDeps {
  pool: DatabasePool;
  temporal: Client;
  taskQueue: string;
  registry: RegistryService;
  keyring: VaultKeyring;
  masterKey: Buffer;
  /** Signs what the API sends a call's workflow (resumes, cancels); the spec carries its public keys. */
  signer: MessageSigner;
  config: Pick<Config, 'publicUrl' | 'executionWindowSeconds' | 'rateLimitPerMinute'> & Partial<Pick<Config, 'eagerAnswerPatienceMs'>>;
  /** Credentials and outbound client for `resolve` lookups; without it ids stay as they are. */
  executor?: ExecutorDeps;
  /** Refuses Temporal operations at once while Temporal is down (503 instead of a long hang). */
  temporalHealth?: TemporalHealth;
  /** Turns a missing or unauthorized connection into its typed error (with an auth_url). */
  connections: Pick<ConnectionService, 'credentialError' | 'refOf'>;
  /** What calls read of identities and orgs (readers bound in server/services.ts). */
  chains: ChainReader;
  orgs: Pick<OrgReader, 'getOrg'>;
  logger: Logger;
  /**
   * A client on this process's own worker connection (role `all`): calls start their workflow
   * eagerly and take their first answer in-process (first-answers.ts). Absent (role `api`):
   * Update-with-Start, the answer from the `outcome` update.
   */
  eagerClient?: Client;
}


const SA = CALL_SEARCH_ATTRIBUTES;

/** The call workflow's start options. */
type StartOptions = Parameters<Client['workflow']['start']>[1] & { args: [CallSpec]; workflowIdConflictPolicy: 'USE_EXISTING' | 'FAIL' };

/**
 * How long a start whose answer was lost waits for Temporal to say whether the workflow exists:
 * a dev server or frontend restarting comes back within seconds; past this the caller gets 503
 * with the call id (the call may still run, and reads back with GET /v1/calls/{id}).
 */
const START_RECOVERY_PATIENCE_MS = 10_000;

/** A replay update that found no workflow, while Temporal still shows it running, is sent this many times in all. */
const REPLAY_ATTEMPTS = 3;

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

export function createCallService(deps: CallServiceDeps) {
  const { pool, temporal, registry } = deps;
  const settleWithoutWorkflow = createWorkflowGoneSettler(deps);
  /** A Temporal operation, refused or released with 503 `unavailable` while Temporal is down. */
  const viaTemporal = guardedBy(temporal, deps.temporalHealth);
  const assertTemporalUp = (what: string) => {
    if (deps.temporalHealth && !deps.temporalHealth.up()) throw unavailable('temporal', `Temporal is unreachable: ${what} cannot run now; retry shortly`);
  };

  /** The caller's chain and org settings: as read while authenticating this request, else now. */
  async function chainOf(p: Principal): Promise<{ chain: ChainMember[]; rows: IdentityRow[]; org: RequestChain['org'] }> {
    const known = requestChainOf(p);
    const [rows, org] = known ? [known.chain, known.org] : await Promise.all([deps.chains.getChain(p.identityId), deps.orgs.getOrg(p.orgId)]);
    if (rows.length === 0 || rows.some((r) => r.status !== 'active')) throw forbidden('the calling identity or one of its ancestors is not active');
    return { rows, org, chain: rows.map((r) => ({ id: r.id, kind: r.kind, parentId: r.parent_id, inheritPermissions: r.inherit_permissions })) };
  }

  /** Whether every key is covered for `identityId`'s chain right now (people are never checked). */
  async function covers(p: Principal, identityId: string, keys: readonly string[]): Promise<boolean> {
    if (p.type === 'user') return true;
    try {
      const { decision } = await checkLiveChain(pool, identityId, keys);
      return decision?.outcome === 'covered';
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
      stored: { kind: 'action', params },
      verbose: input.verbose ?? false,
      instance,
    };
  }

  async function prepareHttp(p: Principal, input: RawHttpInput, connection?: ConnectionRef): Promise<Prepared> {
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
      stored,
      verbose: input.verbose ?? false,
      instance,
    };
  }

  /** Starts (or, with a known Idempotency-Key, attaches to) the call; every answer names its call. */
  async function start(p: Principal, prepared: Prepared, requestId: string | null, idempotencyKey?: string): Promise<IdentifiedOutcome> {
    const callId = idempotencyKey ? keyedCallId(p.identityId, idempotencyKey) : randomUUID();
    return { ...(await startCall(p, prepared, requestId, callId, idempotencyKey !== undefined)), call_id: callId };
  }

  async function startCall(p: Principal, prepared: Prepared, requestId: string | null, callId: string, keyed: boolean): Promise<CallOutcome> {
    const { chain, rows, org } = await chainOf(p);
    const requester = rows[0];
    // Refused before anything is written: a call Temporal cannot run must leave no trace.
    assertTemporalUp('a call');
    // An Idempotency-Key names the call (scoped to the calling identity, see keyedCallId): a retry
    // with the same key finds the same row and the same workflow, and never sends again.
    const callDigest = createHmac('sha256', deps.masterKey).update(`dedupe:${prepared.instanceName}:${prepared.action}:${canonicalJson(prepared.stored)}`).digest('base64url');
    const envelope = deps.keyring.encryptShortLived(JSON.stringify(prepared.stored), requestAad(callId));
    const written = await store.insertCall(pool, {
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
      requestDigest: callDigest,
    }, callBucket(p.identityId, deps.config.rateLimitPerMinute));
    if (written.kind === 'rate_limited') throw rateLimited(deps.config.rateLimitPerMinute, written.tokens);
    const existing = written.kind === 'existing' ? written.row : null;
    if (existing && existing.request_digest !== callDigest) {
      throw new AppError('idempotency_key_reused', 'this Idempotency-Key was already used for a different request: use a new key for a new request', { call_id: callId });
    }
    try {
      // A retry: the outcome the call already has, or its workflow's answer (waiting if still running).
      const known = existing && (await recordedAnswer(existing));
      if (known) return known;
      return await startWorkflow(p, prepared, requestId, { callId, keyed, existing, chain, callDigest, org, autoCallOnApprove: requester?.auto_call_on_approve ?? true });
    } catch (err) {
      throw namingCall(err, callId);
    }
  }

  /** What the call's rows already answer for a keyed retry (null: its workflow answers). */
  async function recordedAnswer(call: store.CallRow): Promise<CallOutcome | null> {
    const final = finalAnswer(call);
    if (final) return final;
    // Raised (or joined) an approval: once it was decided and ran, the execution's outcome.
    const approval = call.approval_id ? await store.getApproval(pool, call.approval_id) : await store.getApprovalOfCall(pool, call.id);
    if (!approval) return null;
    return approvalAnswer(approval, await store.getExecutionByApproval(pool, approval.id), call.description);
  }

  interface StartContext {
    callId: string;
    keyed: boolean;
    existing: store.CallRow | null;
    chain: ChainMember[];
    callDigest: string;
    org: RequestChain['org'];
    autoCallOnApprove: boolean;
  }

  async function startWorkflow(p: Principal, prepared: Prepared, requestId: string | null, c: StartContext): Promise<CallOutcome> {
    const { callId, keyed, existing, chain, callDigest, org } = c;
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
      autoCallOnApprove: c.autoCallOnApprove,
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
      messageKeys: await deps.signer.publicKeys(),
      ...(prepared.disclosed.length > 0 ? { disclosed: prepared.disclosed } : {}),
    };
    if (!existing) offerPreparedCall(callId, { stored: prepared.stored, redacted: prepared.redacted, instance: prepared.instance });
    const options: StartOptions = {
      workflowId: callWorkflowId(callId),
      taskQueue: deps.taskQueue,
      args: [spec] as [CallSpec],
      // A keyed retry attaches to the running workflow; a closed one is never started again.
      workflowIdConflictPolicy: keyed ? ('USE_EXISTING' as const) : ('FAIL' as const),
      workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
      typedSearchAttributes: [
        { key: SA.org, value: p.orgId },
        { key: SA.agent, value: p.identityId },
        { key: SA.service, value: prepared.instanceName },
        { key: SA.action, value: prepared.action },
        { key: SA.status, value: 'checking' },
      ],
      memo: { description: prepared.description },
    };
    try {
      // Eager start cannot ride in an Update-with-Start (the server refuses it): a keyed call,
      // which may attach to a running workflow, keeps Update-with-Start.
      if (deps.eagerClient && !keyed) return await startEagerly(deps.eagerClient, callId, options);
      return await updateWithStart(options);
    } catch (err) {
      withdrawPreparedCall(callId);
      // The workflow exists: a keyed retry of a closed call, or a start the client sent again after
      // its first attempt had landed. Either way the call started: its answer is followed.
      if (err instanceof WorkflowExecutionAlreadyStartedError) return answerOfWorkflow(callId);
      // Released by the Temporal watcher (it stopped answering) or refused by it: the call may
      // still run once Temporal is back; the row is left to the workflow (or, should the start
      // never land, to never-started.ts), and the 503 names the call to look it up.
      if (err instanceof AppError) throw err;
      return recoverStart(callId, options);
    }
  }

  /** Update-with-Start: the workflow started (or attached to) and its first answer from the `outcome` update. */
  async function updateWithStart(options: StartOptions): Promise<CallOutcome> {
    const outcome = await viaTemporal('the call', () =>
      temporal.workflow.executeUpdateWithStart(outcomeUpdate, { startWorkflowOperation: new WithStartWorkflowOperation('callWorkflow', options) }),
    );
    return openOutcome(deps.keyring, options.args[0].callId, outcome);
  }

  /**
   * The start failed without a typed answer (the connection broke, the RPC's deadline passed while
   * Temporal restarted): it may have landed, and the call run. Once Temporal answers, the call's
   * workflow is looked for: found, the call started and its answer is followed; absent, it is
   * started now — the caller is still waiting, and conflict policy `USE_EXISTING` attaches to the
   * first start should it land after all. Nothing here marks the call failed: only a workflow that
   * ran writes its final state, or never-started.ts one that provably did not.
   */
  async function recoverStart(callId: string, options: StartOptions): Promise<CallOutcome> {
    const finding = await findStartedWorkflow(temporal, deps.temporalHealth, callId, START_RECOVERY_PATIENCE_MS);
    if (finding === 'found') return answerOfWorkflow(callId);
    if (finding === 'silent') {
      throw unavailable('temporal', 'Temporal stopped answering while the call was starting: it may still run once Temporal is back; look it up with GET /v1/calls/{call_id}', { call_id: callId });
    }
    try {
      return await updateWithStart({ ...options, workflowIdConflictPolicy: 'USE_EXISTING' });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return closedCallAnswer(callId);
      throw err;
    }
  }

  /**
   * Starts the workflow eagerly: the server hands its first task to this process's worker, whose
   * check-and-send activity delivers the answer here once the call's final state is committed
   * (safe before the task completes: a re-run finds that state and sends nothing). Not granted, a
   * call going on to an approval, or an answer slow to come: the `outcome` update answers.
   */
  async function startEagerly(client: Client, callId: string, options: StartOptions): Promise<CallOutcome> {
    const expected = expectFirstAnswer(callId);
    try {
      const handle = await viaTemporal('the call', () => client.workflow.start('callWorkflow', { ...options, requestEagerStart: true }));
      if (!handle.eagerlyStarted) return await answerOfWorkflow(callId);
      let timer: NodeJS.Timeout | undefined;
      const patience = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), deps.config.eagerAnswerPatienceMs ?? 10_000)));
      // Waited for under the Temporal guard, as an update would be: should Temporal stop answering
      // meanwhile, the caller is released at once with 503 and the call id to look it up later.
      const first = await viaTemporal('the call', () => Promise.race([expected.answer, patience])).finally(() => clearTimeout(timer));
      if (first === 'late') {
        // A slow upstream, or the task retried elsewhere: whichever answers first.
        const fromProcess = expected.answer.then((a) => (a.kind === 'answer' ? a.outcome : Promise.reject(new Error('the call went on to an approval'))));
        return await viaTemporal('the call', async () => {
          try {
            return await Promise.any([fromProcess, answerOfWorkflow(callId)]);
          } catch (err) {
            throw err instanceof AggregateError ? err.errors.at(-1) : err;
          }
        });
      }
      return first.kind === 'answer' ? first.outcome : await answerOfWorkflow(callId);
    } finally {
      expected.cancel();
    }
  }

  /**
   * The call's first answer from its workflow: the `outcome` update, sent on the API's own client
   * (not the worker's native connection, which serves the eager start only); a workflow that has
   * already closed (a covered call completes in its first task) answers from the read model.
   */
  async function answerOfWorkflow(callId: string): Promise<CallOutcome> {
    try {
      const outcome = await viaTemporal('the call', () => temporal.workflow.getHandle(callWorkflowId(callId)).executeUpdate(outcomeUpdate));
      return openOutcome(deps.keyring, callId, outcome);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return closedCallAnswer(callId);
      throw err;
    }
  }

  /** A keyed retry of a call whose workflow has closed: its first answer, from the read model. */
  async function closedCallAnswer(callId: string): Promise<CallOutcome> {
    const row = await store.getCall(pool, callId);
    const known = row && (await recordedAnswer(row));
    if (known) return known;
    const approval = await store.getApprovalOfCall(pool, callId);
    if (approval) return pendingAnswer(approval, deps.config.publicUrl);
    // A call that joined another identical pending approval: its workflow's result is that answer.
    return (await temporal.workflow.getHandle(callWorkflowId(callId)).result()) as CallOutcome;
  }

  /**
   * The call's description with `resolve` names looked up with the viewer's own authority (what
   * the viewer could read itself); the stored description keeps raw ids where the requester could
   * not. Best effort: any failure gives the stored description; undefined: nothing to look up.
   */
  async function describeFor(p: Principal, callId: string): Promise<string | undefined> {
    if (!deps.executor) return undefined;
    const call = await store.getCall(pool, callId);
    if (!call) return undefined;
    try {
      const instance = await registry.resolveInstance({ orgId: call.org_id, userId: call.user_id }, call.service);
      const action = instance.service.actions.get(call.action);
      if (!action || !action.parameters.some((x) => x.resolve)) return call.description;
      const stored = decryptStoredRequest(deps.keyring, call.id, call.request_envelope);
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

  /** The requester as a principal of its own: an edited request is derived exactly as if it had sent it. */
  function requesterPrincipal(row: IdentityRow, call: store.CallRow): Principal {
    if (row.kind === 'user') return { type: 'user', orgId: call.org_id, userId: call.user_id, identityId: row.id, role: 'member', sessionId: '' };
    return { type: 'agent', orgId: call.org_id, userId: call.user_id, identityId: row.id, kind: row.kind, via: 'agent_key', credentialId: '' };
  }

  /** What a diff compares: an action's parameters and body as built, a raw request as it would be sent. */
  function diffProjection(prepared: Prepared, stored: StoredRequest): { value: unknown; hidden: string[] } {
    if (stored.kind === 'http') return { value: { method: stored.method, url: stored.url, headers: stored.headers ?? {}, body: stored.body }, hidden: ['headers'] };
    const action = prepared.instance.service.actions.get(prepared.action);
    const built = action && buildActionRequest(prepared.instance.service, action, stored.params);
    const value = built && built.ok ? { params: built.request.params, body: built.request.body } : { params: stored.params };
    return { value, hidden: (action?.redact ?? []).filter((p) => p.startsWith('params.') || p.startsWith('body.') || p === 'body' || p === 'params') };
  }

  /**
   * An approver's edit of a pending call (issue 31): applied to the stored request, derived again
   * as the requester's own call would be (schema, headers, hosts, address policy: the same typed
   * errors), then held to "only narrows" — every edited key is one the original call's keys cover,
   * or one the resolver could grant (an agent-kind resolver's own rules cover it; a person grants
   * by rules, not by edits). Returns what the workflow records and runs; nothing is written.
   */
  async function deriveEdit(resolverId: string, callId: string, edit: RequestEdit): Promise<ApprovedEdit> {
    const call = await store.getCall(pool, callId);
    if (!call) throw notFound('call');
    const original = decryptStoredRequest(deps.keyring, call.id, call.request_envelope);
    let edited: StoredRequest;
    try {
      edited = applyEdit(original, edit) as StoredRequest;
    } catch (err) {
      if (err instanceof RequestEditError) throw invalidRequest(err.message, { field: err.field });
      throw err;
    }
    const [requester] = await deps.chains.getChain(call.requester_id);
    if (!requester) throw notFound('call');
    const p = requesterPrincipal(requester, call);
    // A raw call sent with a connection's token keeps it: the edited request is bound to the same
    // connection as the requester sees it (its hosts, and `connection:<name>:<host>` beyond them).
    const connection = edited.kind === 'http' && edited.connection ? await deps.connections.refOf(p, edited.connection) : undefined;
    const prepared =
      edited.kind === 'action'
        ? await prepareAction(p, { service: call.service, action: call.action, params: edited.params })
        : await prepareHttp(p, {
            service: call.service,
            method: edited.method,
            path: edited.url,
            ...(edited.headers ? { headers: edited.headers } : {}),
            ...(edited.body !== undefined ? { body: edited.body } : {}),
            ...(edited.inject ? { secret: { name: edited.inject.secret, in: edited.inject.in, param: edited.inject.name, prefix: edited.inject.prefix } } : {}),
          }, connection);
    const grantable = new Set<string>();
    const [resolver] = await deps.chains.getChain(resolverId);
    if (resolver && resolver.kind !== 'user') {
      for (const key of keysBeyondOriginal(call.permission_keys, prepared.keys)) {
        const { decision } = await checkLiveChain(pool, resolverId, [key]);
        if (decision?.outcome === 'covered') grantable.add(key);
      }
    }
    const widening = wideningKey(call.permission_keys, prepared.keys, grantable);
    if (widening) {
      throw new AppError('edit_widens_request', `the edit widens the request: ${widening} is neither covered by the original call's keys (${call.permission_keys.join(', ')}) nor one you could grant`, {
        key: widening,
        original_keys: call.permission_keys,
      });
    }
    const before = diffProjection(prepared, original);
    const after = diffProjection(prepared, edited);
    const diff = fieldDiff(before.value, after.value, before.hidden);
    if (diff.length === 0) throw invalidRequest('the edit changes nothing: allow the request as it is instead', { field: edit.kind === 'params' ? 'params' : 'request' });
    return {
      envelope: deps.keyring.encryptShortLived(JSON.stringify(edited), editedRequestAad(call.id)),
      redacted: prepared.redacted,
      diff,
      permissionKeys: prepared.keys,
      description: prepared.description,
      ...(prepared.disclosed.length > 0 ? { disclosed: prepared.disclosed } : {}),
    };
  }

  /**
   * What an approver may edit, as the dashboard's form shows it: a service action's parameters
   * from its schema (path, query, body) with the agent's values, redacted ones marked and not
   * shown; or a raw request's method, URL, header names and body.
   */
  async function editForm(callId: string): Promise<EditForm> {
    const call = await store.getCall(pool, callId);
    if (!call) throw notFound('call');
    const stored = decryptStoredRequest(deps.keyring, call.id, call.request_envelope);
    const shown = (call.request_redacted ?? {}) as { method?: string; url?: string; params?: Record<string, unknown>; body?: unknown; headers?: string[] };
    if (stored.kind === 'http') {
      const url = new URL(shown.url ?? stored.url);
      // The redacted URL carries its query; calls stored before it did kept the query in `params` only.
      if (!url.search) for (const [k, v] of Object.entries(shown.params ?? {})) url.searchParams.append(k, String(v));
      return {
        kind: 'request',
        editable: true,
        request: { method: stored.method, url: url.toString(), headers: shown.headers ?? [], body: shown.body ?? null },
      };
    }
    const instance = await registry.resolveInstance({ orgId: call.org_id, userId: call.user_id }, call.service);
    const action = instance.service.actions.get(call.action);
    if (!action) throw invalidRequest(`action ${call.action} is not available`);
    const params = shown.params && typeof shown.params === 'object' ? shown.params : {};
    const body = shown.body && typeof shown.body === 'object' && !Array.isArray(shown.body) ? (shown.body as Record<string, unknown>) : {};
    const field = (name: string, where: 'path' | 'query' | 'body', schema: Record<string, unknown>, required: boolean, value: unknown, description?: string) => {
      const redacted = value === REDACTED;
      const type = Array.isArray(schema.type) ? String(schema.type.find((t) => t !== 'null') ?? 'string') : String(schema.type ?? 'string');
      return {
        name,
        in: where,
        required,
        type,
        ...(Array.isArray(schema.enum) ? { enum: schema.enum } : {}),
        ...(description ? { description } : typeof schema.description === 'string' ? { description: schema.description } : {}),
        redacted,
        ...(value !== undefined && !redacted ? { value } : {}),
      };
    };
    const props = (action.bodySchema?.properties ?? {}) as Record<string, Record<string, unknown>>;
    const required = new Set(Array.isArray(action.bodySchema?.required) ? (action.bodySchema.required as string[]) : []);
    return {
      kind: 'params',
      editable: true,
      parameters: [
        ...action.parameters.map((p) => field(p.name, p.in, p.schema.raw, p.required, params[p.name], p.description)),
        ...Object.entries(props).map(([name, schema]) => field(name, 'body', schema, required.has(name), body[name])),
      ],
    };
  }

  /**
   * The resume's replay update. The workflow may have closed between the approval's read and the
   * update (a restart finished the execution meanwhile, e.g. as `outcome_unknown`): the rows, read
   * again, then hold the answer. A workflow Temporal still runs was not gone: the update is sent
   * again. Only one that no longer exists, with the rows still open, is settled as gone.
   */
  async function replay(p: Principal, approvalId: string, callId: string): Promise<CallOutcome> {
    const handle = temporal.workflow.getHandle(callWorkflowId(callId));
    for (let attempt = 1; ; attempt++) {
      try {
        const input = await deps.signer.sign('replay', handle.workflowId, { callerId: p.identityId, triggeredBy: p.type === 'user' ? ('user' as const) : ('agent' as const) });
        const outcome = await viaTemporal('the resume', () => handle.executeUpdate(replayUpdate, { args: [input] }));
        return openOutcome(deps.keyring, callId, outcome);
      } catch (err) {
        if (!workflowNotRunning(err)) throw updateError(err);
      }
      const known = await rowsAnswer(approvalId, callId);
      if (known) return known;
      if (attempt < REPLAY_ATTEMPTS && (await workflowRunning(callId))) continue;
      try {
        return await settleWithoutWorkflow(approvalId);
      } catch (err) {
        // Closed by its workflow (or a concurrent request) since the read above: that is the answer.
        const closed = await rowsAnswer(approvalId, callId);
        if (closed) return closed;
        throw err;
      }
    }
  }

  /** What an approved call's rows answer now (null: still open). */
  async function rowsAnswer(approvalId: string, callId: string): Promise<CallOutcome | null> {
    const [a, call, exec] = await Promise.all([store.getApproval(pool, approvalId), store.getCall(pool, callId), store.getExecutionByApproval(pool, approvalId)]);
    if (!a) throw notFound('approval');
    return approvalAnswer(a, exec, call?.description ?? a.action_description);
  }

  /** Whether Temporal runs the call's workflow now (false: closed, or no such workflow). */
  async function workflowRunning(callId: string): Promise<boolean> {
    try {
      return (await viaTemporal('the resume', () => temporal.workflow.getHandle(callWorkflowId(callId)).describe())).status.name === 'RUNNING';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  /**
   * Every call, fresh or resumed, from any transport, takes a token from its identity's bucket: a
   * fresh one in the statement that writes its row (`startCall`), a resume here.
   */
  const admit = (p: Principal) => enforceRateLimit(pool, p.identityId, deps.config.rateLimitPerMinute);

  return {
    /** A service action; `onlyRisk` refuses any other risk (gateway_read runs read actions only). */
    async callAction(p: Principal, input: ActionCallInput, requestId: string | null, opts: { onlyRisk?: Risk; idempotencyKey?: string | undefined } = {}): Promise<IdentifiedOutcome> {
      return start(p, await prepareAction(p, input, opts.onlyRisk), requestId, opts.idempotencyKey);
    },

    /** Raw HTTP (`connectionId`: through a person's OAuth connection). */
    async callHttp(p: Principal, input: RawHttpInput, requestId: string | null, opts: { connection?: ConnectionRef; idempotencyKey?: string | undefined } = {}): Promise<IdentifiedOutcome> {
      return start(p, await prepareHttp(p, input, opts.connection), requestId, opts.idempotencyKey);
    },

    /** The requester resumes its approved call (or reads the stored result once executed). */
    async resume(p: Principal, approvalId: string): Promise<IdentifiedOutcome> {
      await admit(p);
      const { row: a, authority } = await readVisibleApproval(pool, p, approvalId);
      if (!authority.replay) throw forbidden('only the identity that made the call can resume it');
      const call_id = a.call_id;
      try {
        const known = approvalAnswer(a, a.execution, a.call?.description ?? a.action_description);
        if (known) return { ...known, call_id };
        if (a.status !== 'allowed') throw new AppError('conflict', `the approval is ${a.status}`, { status: a.status });
        return { ...(await replay(p, a.id, a.call_id)), call_id };
      } catch (err) {
        throw namingCall(err, call_id);
      }
    },

    /**
     * A call as it stands (`GET /v1/calls/{id}`): for the identity that made it, the identities
     * above it on its chain, and the org's admins; `not_found` for anyone else.
     */
    async get(p: Principal, callId: string) {
      const found = await store.getCall(pool, callId);
      if (!found || found.org_id !== p.orgId) throw notFound('call');
      if (!isAdmin(p)) {
        const chain = await deps.chains.getChain(found.requester_id);
        if (!chain.some((c) => c.id === p.identityId)) throw notFound('call');
      }
      const call = await settleIfNeverStarted({ pool, temporal, chains: deps.chains }, found);
      const approval = call.approval_id ? await store.getApproval(pool, call.approval_id) : await store.getApprovalOfCall(pool, call.id);
      const execution = approval ? await store.getExecutionByApproval(pool, approval.id) : null;
      return presentCall(call, approval, execution);
    },

    /**
     * Cancels the open approvals raised by these identities (they were revoked or archived), each
     * through its workflow's cancel update as its requester would: the same record, audit row,
     * events and webhooks. Best effort per approval: one that cannot be cancelled now is logged.
     */
    async cancelPendingOf(requesterIds: string[], reason: string): Promise<void> {
      for (const a of await store.openApprovalsOf(pool, requesterIds)) {
        try {
          const input = await deps.signer.sign('cancel', callWorkflowId(a.call_id), { callerId: a.requester_id, reason });
          await temporal.workflow.getHandle(callWorkflowId(a.call_id)).executeUpdate(cancelUpdate, { args: [input] });
        } catch (err) {
          if (workflowNotRunning(err)) await settleWithoutWorkflow(a.id).catch(() => undefined);
          else deps.logger.warn({ approval_id: a.id, err: (err as Error).message }, 'could not cancel the approval of a revoked identity');
        }
      }
    },

    describeFor,
    settleWithoutWorkflow,
    deriveEdit,
    editForm,
  };
}

export type CallService = ReturnType<typeof createCallService>;
