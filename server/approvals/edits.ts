// An approver's edit of a pending call: the form the dashboard builds from the call's schema, and
// the edit judged — derived again exactly as the requester's own call would be (the call preparer),
// then held to "only narrows". Nothing is written here; the workflow records what is returned.
import { applyEdit, fieldDiff, keysBeyondOriginal, RequestEditError, wideningKey, type RequestEdit } from '../../core/approvals/request-edit.ts';
import { REDACTED } from '../../core/execution/redact.ts';
import { buildActionRequest } from '../../core/execution/request.ts';
import type { ApprovedEdit } from '../../workflows/definitions.ts';
import type { Principal } from '../auth/principal.ts';
import type { Prepared, CallPreparer } from '../calls/prepare.ts';
import { decryptStoredRequest } from '../calls/stored-call.ts';
import type * as calls from '../calls/store.ts';
import type { ConnectionService } from '../connections/service.ts';
import { AppError, invalidRequest, notFound } from '../errors.ts';
import { editedRequestAad, type StoredRequest } from '../execution/stored-request.ts';
import type { ChainReader, IdentityRow } from '../identities/readers.ts';
import type { RegistryService } from '../registry/service.ts';
import type { VaultKeyring } from '../vault/keyring.ts';

/** GET /v1/approvals/{id}/edit: what the dashboard's "Edit before allowing" form is built from. */
export interface EditForm {
  kind: 'params' | 'request';
  editable: boolean;
  reason?: string;
  parameters?: { name: string; in: 'path' | 'query' | 'body'; required: boolean; type: string; enum?: unknown[]; description?: string; redacted: boolean; value?: unknown }[];
  request?: { method: string; url: string; headers: string[]; body: unknown };
}

export interface ApprovalEditDeps {
  /** The stored call an approval gates. */
  calls: { getCall(callId: string): Promise<calls.CallRow | null> };
  /** Whether keys are covered for an identity's chain now (identities/chain-check.ts coverageCheck). */
  covers: (identityId: string, keys: readonly string[]) => Promise<boolean>;
  keyring: VaultKeyring;
  registry: RegistryService;
  chains: ChainReader;
  /** A raw call sent with a connection's token keeps it: the edited request is bound to the same one. */
  connections: Pick<ConnectionService, 'refOf'>;
  preparer: Pick<CallPreparer, 'prepareAction' | 'prepareHttp'>;
}

export function createApprovalEdits(deps: ApprovalEditDeps) {
  const { registry } = deps;
  const { prepareAction, prepareHttp } = deps.preparer;


  /** The requester as a principal of its own: an edited request is derived exactly as if it had sent it. */
  function requesterPrincipal(row: IdentityRow, call: calls.CallRow): Principal {
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
    const call = await deps.calls.getCall(callId);
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
        if (await deps.covers(resolverId, [key])) grantable.add(key);
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
    const call = await deps.calls.getCall(callId);
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

  return { deriveEdit, editForm };
}

export type ApprovalEdits = ReturnType<typeof createApprovalEdits>;
