// An approval's call described for its viewer: `resolve` lookups (a channel id shown as its name)
// run with the viewer's own authority — what the viewer could read itself — while the stored
// description keeps raw ids where the requester could not read them.
import type { DatabasePool } from 'slonik';
import { buildActionRequest } from '../../core/execution/request.ts';
import { actionPermissionKey } from '../../core/permissions/keys.ts';
import { renderSummary } from '../../core/registry/summary.ts';
import type { Principal } from '../auth/principal.ts';
import type { CallPreparer } from '../calls/prepare.ts';
import { decryptStoredRequest } from '../calls/stored-call.ts';
import * as calls from '../calls/store.ts';
import type { ExecutorDeps } from '../execution/execute.ts';
import type { RegistryService } from '../registry/service.ts';
import type { VaultKeyring } from '../vault/keyring.ts';

export interface CallDescriptionDeps {
  pool: DatabasePool;
  keyring: VaultKeyring;
  registry: RegistryService;
  /** Without an executor nothing is looked up. */
  executor?: ExecutorDeps | undefined;
  preparer: Pick<CallPreparer, 'namesFor'>;
}

export function createCallDescriptions(deps: CallDescriptionDeps) {
  const { pool, registry } = deps;
  const { namesFor } = deps.preparer;

  /**
   * The call's description with `resolve` names looked up with the viewer's own authority (what
   * the viewer could read itself); the stored description keeps raw ids where the requester could
   * not. Best effort: any failure gives the stored description; undefined: nothing to look up.
   */
  async function describeFor(p: Principal, callId: string): Promise<string | undefined> {
    if (!deps.executor) return undefined;
    const call = await calls.getCall(pool, callId);
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

  return describeFor;
}
