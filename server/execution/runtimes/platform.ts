// Runtime `platform`: actions of built-in platform services (services/gateway.yaml) run
// in-process, through the same domain services as REST, acting AS the identity that made the call.
// So the caller's permissions and visibility apply exactly as if it had called the REST API itself.
// The permission layer has already run: the call was covered, or an approval allowed it.
//
// Handlers are registered per template key and action key. Only a built-in (global) template may
// run in-process code. An org or user template that declares `runtime: platform` is refused.
//
// Results use the HTTP shapes, with `status_code` 200 (read) or 201 (created). A result lands on
// the execution record and in workflow history, so it must never carry a secret. That is why
// `create_subagent` returns the subagent without an agent key. Keys are minted through
// `POST /v1/identities/{id}/keys` (or `gateway_auth`) and are shown once to whoever mints them.
import { z } from 'zod';
import { buildActionRequest } from '../../../core/execution/request.ts';
import type { Principal } from '../../auth/principal.ts';
import type { ApprovalService } from '../../approvals/service.ts';
import { AppError, forbidden, invalidParams, invalidRequest } from '../../errors.ts';
import type { IdentityService } from '../../identities/service.ts';
import type { ChainReader } from '../../identities/readers.ts';
import type { ExecuteInput, RuntimeHandler } from '../execute.ts';
import { jsonOutput } from './result.ts';

export interface PlatformDeps {
  /** The requester's chain, read when the action runs (bound to the pool in server/services.ts). */
  chains: ChainReader;
  identities: Pick<IdentityService, 'createAgent' | 'revokeKey'>;
  approvals: Pick<ApprovalService, 'list'>;
}

interface Answer {
  status: number;
  body: unknown;
}

type PlatformAction = (p: Principal, params: Record<string, unknown>) => Promise<Answer>;

const listPendingParams = z.object({
  limit: z.number().int().min(1).max(100).default(20),
  cursor: z.string().max(200).optional(),
});

const createSubagentParams = z.object({
  name: z.string().trim().min(1).max(200),
  inherit_permissions: z.boolean().default(false),
});

function parse<T>(schema: z.ZodType<T>, params: Record<string, unknown>): T {
  const r = schema.safeParse(params);
  if (!r.success) throw invalidParams(r.error.issues.map((i) => ({ field: i.path.join('.'), message: i.message })));
  return r.data;
}

function gatewayActions(deps: PlatformDeps): Map<string, PlatformAction> {
  return new Map<string, PlatformAction>([
    [
      'list_pending_approvals',
      async (p, params) => {
        const q = parse(listPendingParams, params);
        const page = await deps.approvals.list(p, { status: 'pending', limit: q.limit, cursor: q.cursor });
        // A compact view: the result body is capped at 8 KiB, so leave out the request payloads.
        const approvals = page.approvals.map((a) => ({
          id: a.id,
          status: a.status,
          relationship: a.relationship,
          risk: a.risk,
          action_description: a.action?.description ?? null,
          service: a.action?.service ?? null,
          action: a.action?.action ?? null,
          permission_keys: a.permission_keys,
          suggested_tiers: a.suggested_tiers,
          requester: a.requester,
          auto_call_on_approve: a.auto_call_on_approve,
          expires_at: a.expires_at,
          created_at: a.created_at,
          approval_url: a.approval_url,
        }));
        return { status: 200, body: { approvals, next_cursor: page.next_cursor } };
      },
    ],
    [
      'create_subagent',
      async (p, params) => {
        const q = parse(createSubagentParams, params);
        if (p.type !== 'agent') throw invalidRequest('create_subagent creates a subagent under the calling agent; people create agents with POST /v1/identities/agents');
        const created = await deps.identities.createAgent(p, { name: q.name, parent_id: p.identityId, inherit_permissions: q.inherit_permissions });
        // The service always mints a first key. Its token must not reach the result, and a key
        // nobody has seen is useless, so revoke it straight away.
        await deps.identities.revokeKey(p, created.identity.id, created.key.id);
        return {
          status: 201,
          body: {
            identity: created.identity,
            key: null,
            next_step: `mint an agent key with POST /v1/identities/${created.identity.id}/keys (or gateway_auth); keys are never returned in call results`,
          },
        };
      },
    ],
  ]);
}

/**
 * The calling identity as a principal, the way the auth middleware would build it. Its chain must
 * still be active, because the call may run long after it was made (approval replays).
 */
async function principalFor(chains: ChainReader, input: ExecuteInput): Promise<Principal> {
  if (!input.requesterId || !input.userId) throw new AppError('internal', 'platform actions need the requesting identity');
  const chain = await chains.getChain(input.requesterId);
  const self = chain[0];
  if (!self || self.org_id !== input.orgId || self.user_id !== input.userId) throw new AppError('internal', 'the requesting identity does not match the call');
  if (chain.some((r) => r.status !== 'active')) throw forbidden('the calling identity or one of its ancestors is not active');
  if (self.kind === 'user') {
    return { type: 'user', orgId: self.org_id, userId: self.user_id, identityId: self.id, role: self.role ?? 'member', sessionId: 'platform' };
  }
  return { type: 'agent', orgId: self.org_id, userId: self.user_id, identityId: self.id, kind: self.kind, via: 'agent_key', credentialId: 'platform' };
}

export function createPlatformRuntime(deps: PlatformDeps): RuntimeHandler {
  const services = new Map<string, Map<string, PlatformAction>>([['gateway', gatewayActions(deps)]]);
  return async (_executor, input) => {
    const { instance, action, request } = input;
    const service = instance.service;
    if (instance.origin !== 'global') throw invalidRequest(`${service.key} is not a built-in service: only built-in services may use the platform runtime`);
    if (request.kind !== 'action' || !action) throw invalidRequest(`${service.key} is a platform service: call its actions; raw HTTP is not available for it`);
    const handler = services.get(service.key)?.get(action.key);
    if (!handler) throw invalidRequest(`${service.key} has no platform action "${action.key}"`);
    const built = buildActionRequest(service, action, request.params);
    if (!built.ok) throw invalidParams(built.problems);
    const values = { ...(built.request.body as Record<string, unknown> | undefined), ...built.request.params };
    const principal = await principalFor(deps.chains, input);
    const started = performance.now();
    const answer = await handler(principal, values);
    return jsonOutput({ ...answer, durationMs: Math.round(performance.now() - started) }, input.verbose);
  };
}
