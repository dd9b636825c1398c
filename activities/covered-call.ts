// The covered fast path's execution (no approval, no execution row): the request as the API
// prepared it (hand-off in the same process, else the encrypted call row), the upstream call, and
// the call row's final status written together with its audit row in one statement.
import type { DatabasePool } from 'slonik';
import { callAuditEntry, type AuditEntry, type CallEvent } from '../server/audit/store.ts';
import { takePreparedCall, type PreparedCall } from '../server/calls/handoff.ts';
import * as calls from '../server/calls/store.ts';
import { AppError } from '../server/errors.ts';
import { executeUpstream, type ExecutorDeps } from '../server/execution/execute.ts';
import { requestAad, storedRequestSchema } from '../server/execution/stored-request.ts';
import type { Logger } from '../server/logger.ts';
import type { RegistryService } from '../server/registry/service.ts';
import type { VaultKeyring } from '../server/vault/keyring.ts';
import type { Envelope } from '../core/vault/envelope.ts';
import type { CallOutcome, CallSpec, ErrorBody } from '../workflows/definitions.ts';

export interface CoveredCallDeps {
  pool: DatabasePool;
  logger: Logger;
  keyring: VaultKeyring;
  registry: RegistryService;
  executor: ExecutorDeps;
}

export interface CoveredResult {
  outcome: CallOutcome;
  httpStatusCode: number | null;
  executionStatus: null;
}

export type { CallEvent };

/** The row the call's activities write, from its spec. */
export const entryFor = (spec: CallSpec, e: CallEvent): AuditEntry =>
  callAuditEntry(
    {
      orgId: spec.orgId,
      userId: spec.userId,
      identityChain: spec.chain.map((c) => c.id),
      service: spec.service,
      action: spec.action,
      permissionKeys: spec.permissionKeys,
      callId: spec.callId,
      requestId: spec.requestId,
    },
    e,
  );

function toErrorBody(err: unknown): ErrorBody {
  if (err instanceof AppError) return { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) };
  return { code: 'internal', message: 'internal error while executing the call' };
}

export function createCoveredCall(deps: CoveredCallDeps) {
  const { pool } = deps;

  /** The DB path: another process prepared the call, or this is a retry. */
  async function loadPrepared(spec: CallSpec): Promise<PreparedCall> {
    const call = await calls.getCall(pool, spec.callId);
    if (!call) throw new Error(`call ${spec.callId} not found`);
    const stored = storedRequestSchema.parse(JSON.parse(deps.keyring.decrypt(call.request_envelope as Envelope, requestAad(spec.callId)).toString('utf8')));
    const instance = await deps.registry.resolveInstance({ orgId: spec.orgId, userId: spec.userId }, spec.service);
    return { stored, redacted: call.request_redacted, instance };
  }

  return async function executeCovered(spec: CallSpec): Promise<CoveredResult> {
    try {
      const { stored, redacted, instance } = takePreparedCall(spec.callId) ?? (await loadPrepared(spec));
      const action = stored.kind === 'action' ? (instance.service.actions.get(spec.action) ?? null) : null;
      if (stored.kind === 'action' && (!action || action.disabled)) throw new AppError('invalid_request', `action ${spec.action} is not available`);
      const out = await executeUpstream(deps.executor, {
        orgId: spec.orgId,
        requesterId: spec.requesterId,
        userId: spec.userId,
        instance,
        action,
        request: stored,
        verbose: spec.verbose,
      });
      await calls.finishCallWithAudit(
        pool,
        spec.callId,
        'called',
        out.httpStatusCode,
        entryFor(spec, {
          event: 'call.called',
          actorId: spec.requesterId,
          approvalId: null,
          executionId: null,
          decision: 'covered',
          httpStatusCode: out.httpStatusCode,
          details: { duration_ms: out.result.duration_ms, request: redacted, ...(spec.disclosed?.length ? { disclosed: spec.disclosed } : {}) },
        }),
      );
      return { outcome: { status: 'called', result: out.result, action_description: spec.description }, httpStatusCode: out.httpStatusCode, executionStatus: null };
    } catch (err) {
      if (!(err instanceof AppError)) deps.logger.error({ err, call_id: spec.callId }, 'execution failed unexpectedly');
      const error = toErrorBody(err);
      await calls.finishCallWithAudit(pool, spec.callId, 'failed', null, entryFor(spec, { event: 'call.failed', approvalId: null, executionId: null, decision: 'failed', details: { error } }));
      return { outcome: { status: 'error', error }, httpStatusCode: null, executionStatus: null };
    }
  };
}
