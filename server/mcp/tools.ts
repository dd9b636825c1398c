// The gateway's MCP tools (spec "MCP tools"). Each tool is thin: a strict input schema, one domain
// service call, and its result as `structuredContent` (plus the same JSON as text). Failures are
// tool results too — `isError: true` with the error envelope `{error: {code, message, details?}}`
// in `structuredContent` (DESIGN.md §5); JSON-RPC errors are left for protocol misuse.
import type { ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { CallOutcome } from '../../workflows/definitions.ts';
import type { AgentPrincipal } from '../auth/principal.ts';
import type { ReadAlong } from '../auth/read-along.ts';
import type { AuthRideAlong } from '../auth/service.ts';
import { instanceLookupAlong } from '../registry/request-lookup.ts';
import type { Config } from '../config.ts';
import { forbidden, invalidRequest, type AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Services } from '../services.ts';
import { answerOf } from '../calls/outcome.ts';
import { ApprovalRecord, Called, Denied, PendingApproval } from '../calls/responses.ts';
import { editRequestSchema } from '../approvals/edit-request-schema.ts';
import { editParamsSchema, rememberConditionSchema, rememberKeysSchema, ttlSchema } from '../approvals/resolve-input.ts';

export interface ToolContext {
  services: Pick<Services, 'calls' | 'approvals' | 'registry' | 'identities' | 'connections' | 'oauth'>;
  config: Pick<Config, 'publicUrl'>;
  logger: Logger;
  requestId: string;
  /** What the request's authentication read along (read-along.ts): the named service's lookup. */
  along?: ReadAlong | undefined;
}

export const TOOL_NAMES = {
  call: 'gateway_call',
  read: 'gateway_read',
  search: 'gateway_search',
  approve: 'gateway_approve',
  approveSelf: 'gateway_approve_self',
  auth: 'gateway_auth',
} as const;

/**
 * What rides along the authentication of a `tools/call` message for gateway_call or gateway_read:
 * the lookup of the service it names, read before anything validates it. Only a hint: the tool's
 * schema still judges the arguments.
 */
export function toolCallLookupAlong(body: unknown): AuthRideAlong | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { method, params } = body as { method?: unknown; params?: { name?: unknown; arguments?: { service?: unknown } } };
  if (method !== 'tools/call' || (params?.name !== TOOL_NAMES.call && params?.name !== TOOL_NAMES.read)) return undefined;
  return instanceLookupAlong(params.arguments?.service);
}

// --- shared schema pieces ------------------------------------------------------------------------

const serviceName = z.string().min(1).max(100).describe("Instance name: a gateway_search result's `service` field (not its `template`).");
const actionName = z.string().min(1).max(200).describe('Action name, from gateway_search.');
const callParams = z.record(z.string(), z.unknown()).describe('Action arguments (path, query and body parameters by name). Default {}.');
const verboseFlag = z.boolean().describe('Return the full result: status, headers and the untruncated raw body. Default false.');
const RAW_HTTP_FIELDS = ['method', 'path', 'url'] as const;

/** Every output schema admits the error envelope: clients validate structuredContent of errors too. */
const errorEnvelope = z
  .object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() })
  .describe('Present instead of a result when the tool failed (the result has isError: true).');

/**
 * A tool's output: every field of the REST answers it may return, each optional (a tool answers
 * with one of them, or with the error envelope), derived from the same schemas as the REST
 * contract (server/calls/responses.ts), so MCP and REST cannot drift apart.
 */
function toolOutput(answers: readonly z.ZodObject[], overrides: Record<string, z.ZodType> = {}): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const answer of answers) for (const [k, v] of Object.entries(answer.shape)) shape[k] = (v as z.ZodType).optional();
  return z.looseObject({ ...shape, ...overrides, error: errorEnvelope.optional() });
}

const callOutput = toolOutput([Called, PendingApproval, Denied], {
  status: z.enum(['called', 'pending_approval', 'denied']).optional().describe('Which result this is; absent on errors.'),
});

const approvalOutput = toolOutput([ApprovalRecord]);

// The combination rules (remember_keys and ttl with allow_remember only) are the service's
// (server/approvals/resolve-input.ts), the same for REST and MCP.
const resolveInput = z.strictObject({
  approval_id: z.uuid({ error: 'must be a UUID' }).describe('The approval to resolve.'),
  resolution: z.enum(['allow', 'deny', 'allow_remember']),
  remember_keys: rememberKeysSchema.optional().describe("With allow_remember: a subset of the approval's suggested_tiers keys, remembered as allow rules (a tier with a condition: send its condition as remember_condition too)."),
  ttl: ttlSchema.optional().describe('With allow_remember: how long the remembered rule lives, <n>h or <n>d.'),
  remember_condition: rememberConditionSchema.optional(),
  params: editParamsSchema.optional(),
  request: editRequestSchema.optional(),
});

// --- tool definitions ------------------------------------------------------------------------------

export interface GatewayTool<S extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: S;
  output: z.ZodObject;
  annotations: ToolAnnotations;
  /** Shape rules with clearer messages than the schema's, checked before it. */
  precheck?: (args: Record<string, unknown>) => AppError | null;
  run(p: AgentPrincipal, args: z.output<S>, ctx: ToolContext): Promise<Record<string, unknown>>;
}

const defineTool = <S extends z.ZodObject>(t: GatewayTool<S>): GatewayTool => t as unknown as GatewayTool;

function rawHttpRejected(tool: string, args: Record<string, unknown>): AppError | null {
  const raw = RAW_HTTP_FIELDS.filter((f) => f in args);
  if (raw.length === 0) return null;
  return invalidRequest(
    `${tool} does not accept raw HTTP (${raw.join(', ')}): call a service action with service + action + params, or use the REST API (POST /v1/actions/call) or the gateway CLI for raw HTTP`,
    { fields: raw },
  );
}

/** A workflow outcome as a tool result; the `error` outcome becomes the error envelope. */
function outcomeResult(outcome: CallOutcome & { call_id?: string }): Record<string, unknown> {
  return { ...answerOf(outcome) };
}


const gatewayCall = defineTool({
  name: TOOL_NAMES.call,
  title: 'Call a service action',
  description: [
    'Invokes a service action through the gateway, which holds the credentials and checks your permissions.',
    'Exactly two input shapes: a fresh call {service, action, params?, verbose?, idempotency_key?} or a resume {approval_id} (alone).',
    'Results are tagged by status: "called" (the upstream result), "pending_approval" (a person or an ancestor agent must allow it:',
    'once allowed the call runs by itself when auto_call_on_approve is true, else resume it with {approval_id}), or "denied" (with a reason).',
    'Find services and actions with gateway_search. Raw HTTP is not accepted here.',
  ].join(' '),
  input: z.strictObject({
    service: serviceName.optional(),
    action: actionName.optional(),
    params: callParams.optional(),
    approval_id: z.uuid({ error: 'must be a UUID' }).optional().describe('Resumes a previously approved call. Send it alone (no service, action or params).'),
    verbose: verboseFlag.optional(),
    idempotency_key: z
      .string()
      .regex(/^[\x21-\x7e]{1,255}$/, { error: 'must be 1 to 255 visible ASCII characters' })
      .optional()
      .describe('Optional, with a fresh call: retrying with the same key and the same call returns the first call’s outcome and never sends it twice (the same key with another call is refused with idempotency_key_reused).'),
  }),
  output: callOutput,
  annotations: { title: 'Call a service action', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  precheck(args) {
    const raw = rawHttpRejected(TOOL_NAMES.call, args);
    if (raw) return raw;
    if ('approval_id' in args) {
      const mixed = ['service', 'action', 'params', 'idempotency_key'].filter((f) => f in args);
      if (mixed.length > 0) {
        return invalidRequest(
          `approval_id resumes an approved call and must be sent alone, without ${mixed.join(', ')}; a fresh call sends service + action (+ params) without approval_id`,
          { fields: mixed },
        );
      }
      return null;
    }
    const missing = ['service', 'action'].filter((f) => !(f in args));
    if (missing.length > 0) {
      return invalidRequest(`a fresh call needs ${missing.join(' and ')} (or send approval_id alone to resume an approved call)`, { fields: missing });
    }
    return null;
  },
  async run(p, args, ctx) {
    if (args.approval_id) return outcomeResult(await ctx.services.calls.resume(p, args.approval_id));
    const outcome = await ctx.services.calls.callAction(
      p,
      { service: args.service!, action: args.action!, params: args.params ?? {}, verbose: args.verbose ?? false },
      ctx.requestId,
      { idempotencyKey: args.idempotency_key, along: ctx.along },
    );
    return outcomeResult(outcome);
  },
});

const gatewayRead = defineTool({
  name: TOOL_NAMES.read,
  title: 'Read through a service',
  description:
    'Like gateway_call for a fresh call, but runs only actions whose risk is "read" (others are refused): safe to use freely. ' +
    'Input {service, action, params?, verbose?}; results as gateway_call (a read not yet covered by your permissions still returns pending_approval).',
  input: z.strictObject({
    service: serviceName,
    action: actionName,
    params: callParams.optional(),
    verbose: verboseFlag.optional(),
  }),
  output: callOutput,
  annotations: { title: 'Read through a service', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  precheck: (args) => rawHttpRejected(TOOL_NAMES.read, args),
  async run(p, args, ctx) {
    const outcome = await ctx.services.calls.callAction(
      p,
      { service: args.service, action: args.action, params: args.params ?? {}, verbose: args.verbose ?? false },
      ctx.requestId,
      { onlyRisk: 'read', along: ctx.along },
    );
    return outcomeResult(outcome);
  },
});

const gatewaySearch = defineTool({
  name: TOOL_NAMES.search,
  title: 'Search services and actions',
  description:
    'Finds actions you can call. Each result names the instance `service` (pass it to gateway_call), its `template` key, the `action`, ' +
    'a description, the risk (read, write, delete), the auth status of its credentials, and the action parameters.',
  input: z.strictObject({
    query: z.string().min(1).max(200).describe('What you want to do, in a few words (e.g. "create github issue").'),
    limit: z.number().int().min(1).max(50).optional().describe('At most this many results. Default 10.'),
  }),
  output: z.looseObject({
    results: z
      .array(
        z.looseObject({
          service: z.string(),
          template: z.string(),
          action: z.string(),
          description: z.string(),
          risk: z.enum(['read', 'write', 'delete']),
          auth_status: z.string(),
          parameters: z.array(z.looseObject({ name: z.string(), in: z.string(), required: z.boolean() })).optional(),
          body_schema: z.unknown().optional(),
        }),
      )
      .optional(),
    error: errorEnvelope.optional(),
  }),
  annotations: { title: 'Search services and actions', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(p, args, ctx) {
    const rows = await ctx.services.registry.search(p, args.query, args.limit ?? 10);
    // The parameters tell the agent how to fill `params`: one instance lookup per distinct service.
    const instances = new Map<string, Promise<Awaited<ReturnType<Services['registry']['getInstance']>> | null>>();
    const detail = (service: string) => {
      let got = instances.get(service);
      if (!got) instances.set(service, (got = ctx.services.registry.getInstance(p, service).catch(() => null)));
      return got;
    };
    const results = await Promise.all(
      rows.map(async (r) => {
        const action = (await detail(r.service))?.actions.find((a) => a.action === r.action);
        return {
          service: r.service,
          template: r.template,
          action: r.action,
          description: r.description,
          risk: r.risk,
          auth_status: r.auth_status,
          ...(action ? { parameters: action.parameters } : {}),
          ...(action && 'body_schema' in action ? { body_schema: action.body_schema } : {}),
        };
      }),
    );
    return { results };
  },
});

const gatewayApprove = defineTool({
  name: TOOL_NAMES.approve,
  title: "Resolve a descendant's approval",
  description:
    'Resolves an approval raised by one of your descendants (a subagent): allow, deny, or allow_remember (with remember_keys from the ' +
    "approval's suggested_tiers and a ttl such as 24h or 7d, planting a reusable allow rule; a tier that carries a condition, such as " +
    '"body.amount <= 60", is remembered with it as remember_condition). Returns the approval record. ' +
    'With allow or allow_remember you may narrow the request first: params (a service action\'s parameters) or request (raw HTTP: ' +
    'method, url, headers, body); an edit that widens it is refused with edit_widens_request. ' +
    'Only an ancestor of the requester may resolve (else not_in_your_chain).',
  input: resolveInput,
  output: approvalOutput,
  annotations: { title: "Resolve a descendant's approval", readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async run(p, args, ctx) {
    return {
      ...(await ctx.services.approvals.resolve(p, args.approval_id, { decision: args.resolution, remember_keys: args.remember_keys, ttl: args.ttl, remember_condition: args.remember_condition, params: args.params, request: args.request }, undefined, 'mcp')),
    };
  },
});

const SELF_APPROVE_OFF =
  'self-approval is not enabled for this MCP connection: the person who owns it can turn on self_approve_enabled in the dashboard; until then a person must resolve the approval';

const gatewayApproveSelf = defineTool({
  name: TOOL_NAMES.approveSelf,
  title: 'Resolve your own approval',
  description:
    'Resolves one of YOUR OWN pending approvals (relationship "self") on behalf of your user, who enabled self-approval for this ' +
    'connection. Same parameters and result as gateway_approve. Use with care: it is recorded as decided by your user.',
  input: resolveInput,
  output: approvalOutput,
  annotations: { title: 'Resolve your own approval', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async run(p, args, ctx) {
    // Re-read on every call: turning the flag off takes effect at once.
    if (!(await ctx.services.oauth.selfApproveEnabled(p))) throw forbidden(SELF_APPROVE_OFF);
    return {
      ...(await ctx.services.approvals.resolveSelf(p, args.approval_id, { decision: args.resolution, remember_keys: args.remember_keys, ttl: args.ttl, remember_condition: args.remember_condition, params: args.params, request: args.request })),
    };
  },
});

const AUTH_OPERATIONS = ['whoami', 'connections', 'connect', 'create_subagent'] as const;
const AUTH_FIELDS: Record<(typeof AUTH_OPERATIONS)[number], { required: string[]; optional: string[] }> = {
  whoami: { required: [], optional: [] },
  connections: { required: [], optional: [] },
  connect: { required: ['provider'], optional: ['scopes'] },
  create_subagent: { required: ['name'], optional: ['inherit_permissions'] },
};

const gatewayAuth = defineTool({
  name: TOOL_NAMES.auth,
  title: 'Identity and connections',
  description: [
    'Who you are and what you can use. operation "whoami": your identity, its chain up to your user, and the organisation.',
    '"connections": your user\'s OAuth connections with their status (never tokens).',
    '"connect" {provider, scopes?}: starts an OAuth connection for your user and returns its auth_url: ask your user to open it.',
    '"create_subagent" {name, inherit_permissions?}: creates a subagent under you and returns its agent key (shown once, only here).',
  ].join(' '),
  input: z
    .strictObject({
      operation: z.enum(AUTH_OPERATIONS),
      provider: z.string().min(1).max(100).optional().describe('connect: the OAuth provider key.'),
      scopes: z.array(z.string().min(1).max(200)).max(50).optional().describe('connect: the scopes to ask for.'),
      name: z.string().trim().min(1).max(100).optional().describe('create_subagent: its name.'),
      inherit_permissions: z.boolean().optional().describe('create_subagent: covered whenever you are (default false).'),
    })
    .superRefine((v, ctx) => {
      const fields = AUTH_FIELDS[v.operation];
      for (const f of fields.required) if (v[f as keyof typeof v] === undefined) ctx.addIssue({ code: 'custom', path: [f], message: `${v.operation} needs ${f}` });
      for (const f of ['provider', 'scopes', 'name', 'inherit_permissions']) {
        if (v[f as keyof typeof v] !== undefined && !fields.required.includes(f) && !fields.optional.includes(f)) {
          ctx.addIssue({ code: 'custom', path: [f], message: `${f} does not go with operation ${v.operation}` });
        }
      }
    }),
  output: z.looseObject({
    identity: z.looseObject({ id: z.string(), kind: z.string(), name: z.string() }).optional(),
    chain: z.array(z.looseObject({ id: z.string(), kind: z.string() })).optional(),
    org: z.looseObject({ id: z.string(), name: z.string() }).optional(),
    authenticated_via: z.string().optional(),
    self_approve_enabled: z.boolean().optional(),
    connections: z.array(z.looseObject({ id: z.string(), provider: z.string(), status: z.string() })).optional(),
    subagent: z.looseObject({ id: z.string(), kind: z.string(), name: z.string() }).optional(),
    key: z.looseObject({ id: z.string(), prefix: z.string(), token: z.string() }).optional(),
    error: errorEnvelope.optional(),
  }),
  annotations: { title: 'Identity and connections', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(p, args, ctx) {
    switch (args.operation) {
      case 'whoami':
        return { ...(await ctx.services.identities.me(p)), self_approve_enabled: await ctx.services.oauth.selfApproveEnabled(p) };
      case 'connections':
        return { connections: await ctx.services.connections.list(p) };
      case 'connect': {
        // The pending connection belongs to the agent's human; the agent shows them auth_url.
        const started = await ctx.services.connections.startForHuman(p, { provider: args.provider!, scopes: args.scopes });
        return { connection: started.connection, auth_url: started.auth_url };
      }
      case 'create_subagent': {
        const created = await ctx.services.identities.createAgent(p, { name: args.name!, parent_id: p.identityId, inherit_permissions: args.inherit_permissions ?? false });
        return { subagent: created.identity, key: created.key };
      }
    }
  },
});

export const GATEWAY_TOOLS: readonly GatewayTool[] = [gatewayCall, gatewayRead, gatewaySearch, gatewayApprove, gatewayApproveSelf, gatewayAuth];

export { SELF_APPROVE_OFF };
