// The call service: what REST and MCP ask of calls — a service action, a raw HTTP call, a resume by
// approval id, a call as it stands — composed of the call's preparation (prepare.ts), its start
// (start.ts) and its resume (replay.ts). Approval edits and descriptions live beside the approvals
// (server/approvals/edits.ts, descriptions.ts) and use the same preparer.
import type { CallPath, GatewayMetrics } from '../metrics/metrics.ts';
import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { callWorkflowId, cancelUpdate, type Risk } from '../../workflows/definitions.ts';
import { isAdmin, type Principal } from '../auth/principal.ts';
import type { ReadAlong } from '../auth/read-along.ts';
import { readVisibleApproval } from '../approvals/read.ts';
import type { Config } from '../config.ts';
import type { ConnectionService } from '../connections/service.ts';
import { AppError, forbidden, notFound } from '../errors.ts';
import type { ExecutorDeps } from '../execution/execute.ts';
import type { ChainReader } from '../identities/readers.ts';
import type { Logger } from '../logger.ts';
import type { OrgReader } from '../orgs/readers.ts';
import type { RegistryService } from '../registry/service.ts';
import type { TemporalHealth } from '../temporal/health.ts';
import type { LocalExchange } from '../temporal/local-exchange.ts';
import type { MessageSigner } from '../temporal/message-signer.ts';
import { workflowNotRunning } from '../temporal/update-errors.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import { approvalAnswer, presentCall } from './call-answers.ts';
import { namingCall } from './naming-call.ts';
import { coverageCheck } from '../identities/chain-check.ts';
import { settleIfNeverStarted } from './never-started.ts';
import { createCallPreparer, type ActionCallInput, type ConnectionRef, type RawHttpInput } from './prepare.ts';
import { enforceRateLimit } from './rate-limit.ts';
import { createCallReplay } from './replay.ts';
import { createCallStarter, type IdentifiedOutcome } from './start.ts';
import * as store from './store.ts';
import { createWorkflowGoneSettler } from './workflow-gone.ts';
import { nameCall } from '../telemetry/log-context.ts';

export type { ActionCallInput, ConnectionRef, IdentifiedOutcome, RawHttpInput };

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
  /** A client on this process's own worker connection (role `all`): see start.ts. */
  eagerClient?: Client;
  /** What this process's API and worker hand each other directly. */
  exchange: LocalExchange;
  /** Rate-limit refusals and the gateway's overhead on synchronous answers. */
  metrics?: Pick<GatewayMetrics, 'rateLimited' | 'overheadSeconds'>;
}

/** How a call is asked for: `along` is what the request's authentication read (read-along.ts). */
export interface CallOptions {
  idempotencyKey?: string | undefined;
  along?: ReadAlong | undefined;
}

export function createCallService(deps: CallServiceDeps) {
  const { pool, temporal } = deps;
  const settleWithoutWorkflow = createWorkflowGoneSettler(deps);
  const preparer = createCallPreparer({ ...deps, covers: coverageCheck(pool) });
  const starter = createCallStarter(deps);
  const replay = createCallReplay({ ...deps, settleWithoutWorkflow });

  /**
   * Every call, fresh or resumed, from any transport, takes a token from its identity's bucket: a
   * fresh one in the statement that writes its row (`startCall`), a resume here.
   */
  const admit = (p: Principal) => enforceRateLimit(pool, p.identityId, deps.config.rateLimitPerMinute);

  /**
   * Runs one call's work and counts what metrics want of it: a `rate_limited` refusal, and for an
   * answer with the upstream's result, the time spent in the gateway (the whole less the upstream's).
   */
  async function measured<T>(path: CallPath, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      const out = await work();
      const sent = out as { status?: unknown; result?: { duration_ms?: unknown } } | undefined;
      if (sent?.status === 'called' && typeof sent.result?.duration_ms === 'number') {
        deps.metrics?.overheadSeconds(path, (performance.now() - started - sent.result.duration_ms) / 1000);
      }
      return out;
    } catch (err) {
      if (err instanceof AppError && err.code === 'rate_limited') deps.metrics?.rateLimited();
      throw err;
    }
  }

  return {
    /** A service action; `onlyRisk` refuses any other risk (gateway_read runs read actions only). */
    async callAction(p: Principal, input: ActionCallInput, requestId: string | null, opts: CallOptions & { onlyRisk?: Risk | undefined } = {}): Promise<IdentifiedOutcome> {
      return measured('covered', async () => starter.start(p, await preparer.prepareAction(p, input, opts), requestId, opts));
    },

    /** Raw HTTP (`connectionId`: through a person's OAuth connection). */
    async callHttp(p: Principal, input: RawHttpInput, requestId: string | null, opts: CallOptions & { connection?: ConnectionRef | undefined } = {}): Promise<IdentifiedOutcome> {
      return measured('covered', async () => starter.start(p, await preparer.prepareHttp(p, input, opts.connection, opts.along), requestId, opts));
    },

    /** The requester resumes its approved call (or reads the stored result once executed). */
    async resume(p: Principal, approvalId: string): Promise<IdentifiedOutcome> {
      await measured('resumed', () => admit(p));
      const { row: a, authority } = await readVisibleApproval(pool, p, approvalId);
      if (!authority.replay) throw forbidden('only the identity that made the call can resume it');
      const call_id = a.call_id;
      nameCall(call_id);
      try {
        const known = approvalAnswer(a, a.execution, a.call?.description ?? a.action_description);
        if (known) return { ...known, call_id };
        if (a.status !== 'allowed') throw new AppError('conflict', `the approval is ${a.status}`, { status: a.status });
        return { ...(await measured('resumed', () => replay(p, a.id, a.call_id))), call_id };
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

    settleWithoutWorkflow,
    /** The preparation approval edits and descriptions share (server/approvals/edits.ts). */
    preparer,
  };
}

export type CallService = ReturnType<typeof createCallService>;
