// A prepared call started: its row written (with its rate-limit token and, for a keyed call, its
// dedupe digest) and its workflow started — eagerly on this process's worker when there is one,
// else by Update-with-Start — and its first answer returned. A start whose answer was lost is
// recovered, never guessed: the workflow is looked for before anything is started again.
import { createHmac, createSecretKey, randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { approvalRisk } from '../../core/permissions/keys.ts';
import { canonicalJson } from '../../core/text/canonical-json.ts';
import { CALL_SEARCH_ATTRIBUTES, callWorkflowId, outcomeUpdate, type CallOutcome, type CallSpec, type ChainMember } from '../../workflows/definitions.ts';
import type { Principal } from '../auth/principal.ts';
import type { ReadAlong, RequestChain } from '../auth/read-along.ts';
import type { Config } from '../config.ts';
import { AppError, forbidden } from '../errors.ts';
import { requestAad } from '../execution/stored-request.ts';
import type { ChainReader, IdentityRow } from '../identities/readers.ts';
import type { OrgReader } from '../orgs/readers.ts';
import { unavailable, viaTemporal as guardedBy, type TemporalHealth } from '../temporal/health.ts';
import type { LocalExchange } from '../temporal/local-exchange.ts';
import type { MessageSigner } from '../temporal/message-signer.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import { approvalAnswer, finalAnswer, keyedCallId, pendingAnswer } from './call-answers.ts';
import { namingCall } from './naming-call.ts';
import type { Prepared } from './prepare.ts';
import { callBucket, rateLimited } from './rate-limit.ts';
import { openOutcome } from './sealed-results.ts';
import * as store from './store.ts';
import { findStartedWorkflow } from './uncertain-start.ts';
import { nameCall } from '../telemetry/log-context.ts';

/** An answer and the call it belongs to (`GET /v1/calls/{call_id}` reads it back). */
export type IdentifiedOutcome = CallOutcome & { call_id: string };

export interface CallStarterDeps {
  pool: DatabasePool;
  temporal: Client;
  taskQueue: string;
  keyring: VaultKeyring;
  masterKey: Buffer;
  /** The spec carries the public keys of what the API signs for the workflow. */
  signer: MessageSigner;
  config: Pick<Config, 'publicUrl' | 'executionWindowSeconds' | 'rateLimitPerMinute'> & Partial<Pick<Config, 'eagerAnswerPatienceMs'>>;
  /** Refuses Temporal operations at once while Temporal is down (503 instead of a long hang). */
  temporalHealth?: TemporalHealth | undefined;
  /** What calls read of identities and orgs when authentication did not read it along. */
  chains: ChainReader;
  orgs: Pick<OrgReader, 'getOrg'>;
  /**
   * A client on this process's own worker connection (role `all`): calls start their workflow
   * eagerly and take their first answer in-process (the local exchange). Absent (role `api`):
   * Update-with-Start, the answer from the `outcome` update.
   */
  eagerClient?: Client | undefined;
  exchange: LocalExchange;
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

export function createCallStarter(deps: CallStarterDeps) {
  const { pool, temporal } = deps;
  // A key object once: Node checks a raw key buffer's type on every HMAC, at several times the HMAC's own cost.
  const digestKey = createSecretKey(deps.masterKey);
  /** A Temporal operation, refused or released with 503 `unavailable` while Temporal is down. */
  const viaTemporal = guardedBy(temporal, deps.temporalHealth);
  const assertTemporalUp = (what: string) => {
    if (deps.temporalHealth && !deps.temporalHealth.up()) throw unavailable('temporal', `Temporal is unreachable: ${what} cannot run now; retry shortly`);
  };

  /** The caller's chain and org settings: as read while authenticating this request, else now. */
  async function chainOf(p: Principal, along?: ReadAlong): Promise<{ chain: ChainMember[]; rows: IdentityRow[]; org: RequestChain['org'] }> {
    const known = along?.chain;
    const [rows, org] = known ? [known.chain, known.org] : await Promise.all([deps.chains.getChain(p.identityId), deps.orgs.getOrg(p.orgId)]);
    if (rows.length === 0 || rows.some((r) => r.status !== 'active')) throw forbidden('the calling identity or one of its ancestors is not active');
    return { rows, org, chain: rows.map((r) => ({ id: r.id, kind: r.kind, parentId: r.parent_id, inheritPermissions: r.inherit_permissions })) };
  }

  /** Starts (or, with a known Idempotency-Key, attaches to) the call; every answer names its call. */
  async function start(p: Principal, prepared: Prepared, requestId: string | null, opts: { idempotencyKey?: string | undefined; along?: ReadAlong | undefined } = {}): Promise<IdentifiedOutcome> {
    const { idempotencyKey } = opts;
    const callId = idempotencyKey ? keyedCallId(p.identityId, idempotencyKey) : randomUUID();
    nameCall(callId); // the request's log lines from here on name its call
    return { ...(await startCall(p, prepared, requestId, callId, idempotencyKey !== undefined, opts.along)), call_id: callId };
  }

  async function startCall(p: Principal, prepared: Prepared, requestId: string | null, callId: string, keyed: boolean, along: ReadAlong | undefined): Promise<CallOutcome> {
    const { chain, rows, org } = await chainOf(p, along);
    const requester = rows[0];
    // Refused before anything is written: a call Temporal cannot run must leave no trace.
    assertTemporalUp('a call');
    // An Idempotency-Key names the call (scoped to the calling identity, see keyedCallId): a retry
    // with the same key finds the same row and the same workflow, and never sends again.
    const callDigest = createHmac('sha256', digestKey).update(`dedupe:${prepared.instanceName}:${prepared.action}:${canonicalJson(prepared.stored)}`).digest('base64url');
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
    // Raised (or joined) an approval: once it was decided and ran, the execution's outcome (the
    // approval and its execution read from one snapshot, as they were written).
    const now = await store.callAsOfNow(pool, call.id);
    if (!now?.approval) return null;
    return approvalAnswer(now.approval, now.execution, now.call.description);
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
      ...(prepared.conditions.length > 0 ? { rememberConditions: prepared.conditions } : {}),
    };
    if (!existing) deps.exchange.preparedCalls.offer(callId, { stored: prepared.stored, redacted: prepared.redacted, instance: prepared.instance });
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
      deps.exchange.preparedCalls.withdraw(callId);
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
   * check-and-send activity delivers the answer here (the local exchange) once the call's final state is committed
   * (safe before the task completes: a re-run finds that state and sends nothing). Not granted, a
   * call going on to an approval, or an answer slow to come: the `outcome` update answers.
   */
  async function startEagerly(client: Client, callId: string, options: StartOptions): Promise<CallOutcome> {
    const expected = deps.exchange.firstAnswers.expect(callId);
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

  return { start, recordedAnswer };
}

export type CallStarter = ReturnType<typeof createCallStarter>;
