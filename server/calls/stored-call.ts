// A stored call, loaded to be sent or described: its request decrypted from the call row and
// parsed, its service instance resolved for the call's owner, its action looked up. One loader for
// the covered path, the approved send and the description a viewer reads.
import type { DatabasePool } from 'slonik';
import type { CompiledAction } from '../../core/registry/types.ts';
import type { Envelope } from '../../core/vault/envelope.ts';
import * as calls from './store.ts';
import { AppError } from '../errors.ts';
import type { RegistryService, ResolvedInstance } from '../registry/service.ts';
import type { InstanceLookup } from '../registry/store.ts';
import type { VaultKeyring } from '../vault/keyring.ts';
import { editedRequestAad, requestAad, storedRequestSchema, type StoredRequest } from '../execution/stored-request.ts';

export interface StoredCallDeps {
  pool: DatabasePool;
  keyring: VaultKeyring;
  registry: RegistryService;
}

/** Which call, and whose: the instance is resolved as its owner sees it. */
export interface CallRef {
  callId: string;
  orgId: string;
  userId: string;
  service: string;
  action: string;
  /** The approver allowed an edited request: it is loaded from this approval instead of the call's. */
  edit?: { approvalId: string } | undefined;
}

export interface StoredCall {
  request: StoredRequest;
  /** What `calls.request_redacted` holds (audit details, the approver's view). */
  redacted: unknown;
  instance: ResolvedInstance;
  /** The action an action call names (null for raw HTTP). */
  action: CompiledAction | null;
}

/** The call's request, decrypted (bound to its call id) and parsed. */
export function decryptStoredRequest(keyring: VaultKeyring, callId: string, envelope: unknown): StoredRequest {
  return storedRequestSchema.parse(JSON.parse(keyring.decrypt(envelope as Envelope, requestAad(callId)).toString('utf8')));
}

/** The edited request an approver allowed, decrypted (bound to its call id) and parsed. */
export function decryptEditedRequest(keyring: VaultKeyring, callId: string, envelope: unknown): StoredRequest {
  return storedRequestSchema.parse(JSON.parse(keyring.decrypt(envelope as Envelope, editedRequestAad(callId)).toString('utf8')));
}

/** The action an action call names, still offered; raw HTTP has none. A missing or disabled one is the call's typed error. */
export function actionOf(instance: ResolvedInstance, request: StoredRequest, actionKey: string): CompiledAction | null {
  if (request.kind !== 'action') return null;
  const action = instance.service.actions.get(actionKey);
  if (!action || action.disabled) throw new AppError('invalid_request', `action ${actionKey} is not available`);
  return action;
}

/**
 * What the caller has already (an allow's statement read it, issue 28): the call's stored request,
 * its service's instance lookup, and the approver's edited request as the decision wrote it.
 */
export interface StoredCallRead {
  row: { request_envelope: unknown; request_redacted: unknown } | null;
  lookup?: InstanceLookup | undefined;
  edited?: { envelope: unknown; redacted: unknown } | undefined;
}

/**
 * Reads the call row and resolves the instance side by side (one round trip's wait), then
 * decrypts; `read`: what was read already. A missing row is a plain error (retryable: it is
 * written before the workflow starts); the instance's or the action's absence is the call's typed error.
 */
export async function loadStoredCall(deps: StoredCallDeps, ref: CallRef, read?: StoredCallRead): Promise<StoredCall> {
  const [row, instance, approval] = await Promise.all([
    read ? read.row : calls.getCall(deps.pool, ref.callId),
    deps.registry.resolveInstance({ orgId: ref.orgId, userId: ref.userId }, ref.service, read?.lookup).then(
      (resolved) => ({ resolved }),
      (error: unknown) => ({ error }),
    ),
    ref.edit && !read?.edited ? calls.getApproval(deps.pool, ref.edit.approvalId) : null,
  ]);
  if (!row) throw new Error(`call ${ref.callId} not found`);
  if ('error' in instance) throw instance.error;
  if (ref.edit) {
    // Written with the decision, before the workflow could start the execution.
    const edited = read?.edited ?? (approval?.edited_request_envelope ? { envelope: approval.edited_request_envelope, redacted: approval.edited_request_redacted } : null);
    if (!edited) throw new Error(`approval ${ref.edit.approvalId} has no edited request`);
    const request = decryptEditedRequest(deps.keyring, ref.callId, edited.envelope);
    return { request, redacted: edited.redacted, instance: instance.resolved, action: actionOf(instance.resolved, request, ref.action) };
  }
  const request = decryptStoredRequest(deps.keyring, ref.callId, row.request_envelope);
  return { request, redacted: row.request_redacted, instance: instance.resolved, action: actionOf(instance.resolved, request, ref.action) };
}
