// Approvals: listing and reading them as the viewer may, and deciding them (the decision itself
// runs in the call's workflow, through its `resolve` update). Starting and resuming calls stays
// in server/calls/.
import type { DecisionChannel, GatewayMetrics } from '../metrics/metrics.ts';
import { NOT_IN_CHAIN_MESSAGE, SELF_RESOLVE_MESSAGE } from '../../core/permissions/authority.ts';
import type { RequestEdit } from '../../core/approvals/request-edit.ts';
import type { EditForm } from './edits.ts';
import type { ApprovalRecord, ApprovedEdit } from '../../workflows/definitions.ts';
import { isAdmin, type Principal } from '../auth/principal.ts';
import type { ReadAlong } from '../auth/read-along.ts';
import type { Config } from '../config.ts';
import { AppError, appErrorBody, forbidden, invalidRequest, notFound } from '../errors.ts';
import { typedError } from '../http/error-handler.ts';
import type { Logger } from '../logger.ts';
import { mapBounded } from '../../core/async/map-bounded.ts';
import { whyYours } from '../../core/permissions/routing.ts';
import type { RoutedApproval } from '../teams/routing.ts';
import { presentApproval } from './present.ts';
import { delegatedTo, readApproval, readVisibleApproval } from './read.ts';
import { editOf, resolveRequest, type ResolveBody } from './resolve-input.ts';
import type { ApprovalQuery, ApprovalViewReader, ApprovalViewRow } from './store.ts';
import type { CallWorkflows } from './workflow-port.ts';
import { updateError, workflowNotRunning } from '../temporal/update-errors.ts';
import { nameCall } from '../telemetry/log-context.ts';

/** How many decisions of one batch are in flight at once: a batch of 100 queues here, not in Temporal. */
export const BATCH_CONCURRENCY = 4;

/** One approval's outcome in a batch: decided (its record, as a single resolve answers) or refused (the error a single resolve would answer). */
export type BatchResult =
  | { id: string; status: 'decided'; approval: ApprovalRecord & { disclosed: unknown } }
  | { id: string; status: 'refused'; error: ReturnType<typeof appErrorBody> };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Where the approval sits past the chain, and why it is the viewer's (core/permissions/routing.ts). */
function routingFor(p: Principal, row: ApprovalViewRow) {
  const u = row.people.user;
  const user = { id: u.id, name: u.name, role: u.role, approverId: u.approver_id, active: true };
  const from = row.people.routed_from;
  const why =
    p.type === 'user'
      ? whyYours({ id: p.identityId, role: p.role }, {
          stage: row.routed_to,
          resolverId: row.resolver_id,
          routedFrom: from ? { id: from.id, name: from.name, role: 'member', approverId: null, active: true } : null,
          user,
        })
      : null;
  return { stage: row.routed_to, why };
}

const encodeCursor = (a: { created_at: Date; id: string }) => Buffer.from(`${a.created_at.toISOString()}|${a.id}`).toString('base64url');
function decodeCursor(cursor: string): { at: Date; id: string } {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (!at || !id || Number.isNaN(Date.parse(at)) || !UUID.test(id)) throw invalidRequest('cursor is not valid', { field: 'cursor' });
  return { at: new Date(at), id };
}

/** The spec's approval record of a row (no execution: used for a bubble, which opens none). */
function recordOf(row: ApprovalViewRow): ApprovalRecord {
  return {
    id: row.id,
    status: row.status as ApprovalRecord['status'],
    relationship: row.relationship,
    risk: row.risk,
    permission_keys: row.permission_keys,
    suggested_tiers: row.suggested_tiers,
    derived_keys: row.derived_keys,
    expires_at: row.expires_at.toISOString(),
  };
}

/**
 * What the approval service is given: its reads (`views`), the call workflows it decides and
 * cancels through (workflow-port.ts) and a clock — no pool and no Temporal client, so its own
 * logic (authority, edits only while open, batches, bubbling) is unit-tested with fakes.
 */
export interface ApprovalServiceDeps {
  views: ApprovalViewReader;
  workflows: CallWorkflows;
  config: Pick<Config, 'publicUrl'>;
  calls: CallsOfApprovals;
  /** "Bubble up" once the approval sits with the requester's user: their approver, then the admins. */
  escalate?: (a: RoutedApproval, actorId: string) => Promise<void>;
  /** Counts each decision the workflow accepted, by where it was given. */
  metrics?: Pick<GatewayMetrics, 'approvalDecided'>;
  /** Milliseconds since the epoch (time to decision); `Date.now` unless a test pins it. */
  now?: () => number;
}

/** What approvals need of the calls they gate: descriptions and edits (descriptions.ts, edits.ts) and the call service's settling. */
export interface CallsOfApprovals {
  /** The call's description with names resolved as the viewer may see them (undefined: nothing to look up). */
  describeFor(p: Principal, callId: string): Promise<string | undefined>;
  /** Settles an approval whose workflow is gone, and throws the error that says so. */
  settleWithoutWorkflow(approvalId: string): Promise<never>;
  /** An approver's edit judged (schema, only narrows) and prepared for the workflow; writes nothing. */
  deriveEdit(resolverId: string, callId: string, edit: RequestEdit): Promise<ApprovedEdit>;
  /** What an approver may edit of the call (the dashboard's form). */
  editForm(callId: string): Promise<EditForm>;
}

/** Only a pending (or bubbled) approval can be allowed with changes: 409 otherwise. */
function assertOpenForEdit(row: ApprovalViewRow): void {
  if (row.status !== 'pending' && row.status !== 'bubbled') {
    throw new AppError('conflict', `the approval is ${row.status}: only a pending approval can be allowed with changes`, { reason: 'approval_not_pending', status: row.status });
  }
}

export function createApprovalService(deps: ApprovalServiceDeps) {
  const { views, workflows } = deps;
  const now = deps.now ?? Date.now;

  /** An approval the viewer may decide (as resolve requires), else its typed error. */
  async function decidable(p: Principal, approvalId: string, along?: ReadAlong): Promise<ApprovalViewRow> {
    const found = await readApproval(views, p, approvalId, along);
    if (!found || !found.authority.see) throw notFound('approval');
    if (found.authority.refusal === 'self') throw forbidden(SELF_RESOLVE_MESSAGE);
    if (found.authority.refusal) throw new AppError('not_in_your_chain', NOT_IN_CHAIN_MESSAGE);
    return found.row;
  }

  const service = {
    /** One approval; `resolve` names in its description looked up with the viewer's own authority. */
    /** `along` (here and below): what the request's authentication read (read-along.ts). */
    async get(p: Principal, id: string, along?: ReadAlong) {
      const { row } = await readVisibleApproval(views, p, id, along);
      return presentApproval(row, deps.config.publicUrl, await deps.calls.describeFor(p, row.call_id), routingFor(p, row));
    },

    /** A page, newest first: one query, filtered by the viewer's authority before the LIMIT. */
    async list(p: Principal, q: { status?: string | undefined; scope?: Exclude<ApprovalQuery['scope'], 'visible'> | undefined; limit: number; cursor?: string | undefined }) {
      const before = q.cursor ? decodeCursor(q.cursor) : undefined;
      const rows = await views({
        orgId: p.orgId,
        viewerId: p.identityId,
        admin: isAdmin(p),
        scope: q.scope ?? 'visible',
        status: q.status,
        before,
        limit: q.limit + 1,
      });
      const page = rows.slice(0, q.limit);
      const last = page.at(-1);
      return {
        approvals: page.map((r) => presentApproval(r, deps.config.publicUrl, undefined, routingFor(p, r))),
        next_cursor: rows.length > q.limit && last ? encodeCursor(last) : null,
      };
    },

    /** The form an approver edits the call with (only someone who may decide it). */
    async editForm(p: Principal, approvalId: string, along?: ReadAlong): Promise<EditForm> {
      const row = await decidable(p, approvalId, along);
      return deps.calls.editForm(row.call_id);
    },

    /**
     * What allowing this edit would run, without deciding: the re-derived keys and description and
     * the diff; a widening or invalid edit is refused exactly as resolve would refuse it.
     */
    async previewEdit(p: Principal, approvalId: string, body: Pick<ResolveBody, 'params' | 'request'>, along?: ReadAlong) {
      const row = await decidable(p, approvalId, along);
      assertOpenForEdit(row);
      const requested = editOf({ decision: 'allow_once', ...body });
      if (!requested) throw invalidRequest('give params (a service action) or request (raw HTTP)', { field: 'params' });
      const edit = await deps.calls.deriveEdit(p.identityId, row.call_id, requested);
      return { permission_keys: edit.permissionKeys, action_description: edit.description, diff: edit.diff };
    },

    /** `channel`: where the decision was given (Slack, an email link, MCP; else the REST API). */
    async resolve(p: Principal, approvalId: string, body: ResolveBody, along?: ReadAlong, channel: DecisionChannel = 'api'): Promise<ApprovalRecord & { disclosed: unknown }> {
      const found = await readApproval(views, p, approvalId, along);
      if (!found) throw notFound('approval');
      const { row, authority } = found;
      nameCall(row.call_id); // the decision's log lines name the call it decides
      if (authority.refusal === 'self') throw forbidden(SELF_RESOLVE_MESSAGE);
      if (authority.refusal) throw new AppError('not_in_your_chain', NOT_IN_CHAIN_MESSAGE);
      const input = resolveRequest(body);
      const requested = editOf(body);
      if (requested) assertOpenForEdit(row);
      // Past the chain (it sits with the user, their approver or the admins) the people route it.
      if (input.decision === 'bubble' && deps.escalate && (row.routed_to !== 'chain' || row.resolver_id === row.user_id)) {
        if (row.status !== 'pending' && row.status !== 'bubbled') throw new AppError('conflict', `the approval is ${row.status}`, { status: row.status });
        await deps.escalate(row, p.identityId);
        const moved = (await readApproval(views, p, approvalId))!.row;
        return { ...recordOf(moved), disclosed: row.call?.disclosed ?? [] };
      }
      // Judged before the decision reaches the workflow: a refused edit changes nothing.
      const edit = requested ? await deps.calls.deriveEdit(p.identityId, row.call_id, requested) : undefined;
      try {
        // `resolverIsAdmin`: the API vouches for authority beyond the chain, an admin's or
        // (issue 29) that of the user's approver the approval was routed to.
        const args = { ...input, resolverId: p.identityId, resolverIsAdmin: isAdmin(p) || delegatedTo(p, row), ...(edit ? { edit } : {}) };
        const record = await workflows.decide(row.call_id, args, row.auto_call_on_approve);
        // The workflow accepted it (a refusal throws): counted once, here where its channel is known.
        deps.metrics?.approvalDecided(input.decision, channel, (now() - row.created_at.getTime()) / 1000);
        // What the resolver saw: the `disclose` values recorded with the call.
        return { ...record, disclosed: row.call?.disclosed ?? [] };
      } catch (err) {
        if (workflowNotRunning(err)) await deps.calls.settleWithoutWorkflow(row.id);
        throw updateError(err);
      }
    },

    /**
     * One decision for many approvals (`POST /v1/approvals/resolve`): each goes through `resolve`
     * on its own — its own authority check, its own workflow update, so each is sent once — a few
     * at a time. One refused approval does not stop the rest: the answer says, per id, what
     * became of it, in the order given. A remember (`allow_remember`) applies to each.
     */
    async resolveMany(p: Principal, ids: readonly string[], body: Omit<ResolveBody, 'params' | 'request'>, log?: Pick<Logger, 'error'>): Promise<{ results: BatchResult[] }> {
      // The combination is judged once, up front: a body that no approval could take decides none.
      resolveRequest(body);
      const results = await mapBounded(ids, BATCH_CONCURRENCY, async (id): Promise<BatchResult> => {
        try {
          return { id, status: 'decided', approval: await service.resolve(p, id, body) };
        } catch (err) {
          const typed = typedError(err);
          // Unexpected: logged as the error middleware logs it; the caller reads only `internal`.
          if (!typed) log?.error({ err, approval_id: id }, 'unhandled error deciding an approval of a batch');
          return { id, status: 'refused', error: appErrorBody(typed ?? new AppError('internal', 'internal error while deciding this approval')) };
        }
      });
      return { results };
    },

    /**
     * The requester withdraws its pending approval (`POST /v1/approvals/{id}/cancel`, MCP
     * `tasks/cancel`): the workflow's cancel update, the one the call service sends for revoked
     * identities, so the record, audit row, events and webhooks are the same. Only the requester
     * (the workflow re-checks); an approval no longer pending is a `conflict`.
     */
    async cancel(p: Principal, approvalId: string, reason?: string, along?: ReadAlong): Promise<ApprovalRecord> {
      const { row, authority } = await readVisibleApproval(views, p, approvalId, along);
      if (!authority.replay) throw forbidden('only the identity that made the call can cancel its approval');
      try {
        return await workflows.cancel(row.call_id, p.identityId, reason ?? 'cancelled by the requester');
      } catch (err) {
        if (workflowNotRunning(err)) await deps.calls.settleWithoutWorkflow(row.id);
        throw updateError(err);
      }
    },

    /**
     * `gateway_approve_self`: an agent resolves its OWN approval, acting for the human who enabled
     * `self_approve_enabled` on its MCP binding (the MCP tool checks the flag on every call). The
     * decision runs exactly like the human's: resolver = the user, never as an admin.
     */
    async resolveSelf(p: Principal, approvalId: string, body: ResolveBody): Promise<ApprovalRecord & { disclosed: unknown }> {
      if (p.type !== 'agent' || p.via !== 'oauth') throw forbidden('only an MCP connection whose owner enabled self-approval may approve its own requests');
      const found = await readApproval(views, p, approvalId);
      if (!found || found.row.relationship === 'not_in_your_chain') throw notFound('approval');
      if (found.row.relationship !== 'self') throw forbidden("gateway_approve_self resolves only your own approvals; use gateway_approve for a descendant's");
      const asUser: Principal = { ...p, identityId: p.userId };
      const record = await service.resolve(
        asUser,
        approvalId,
        { ...body, reason: body.reason ?? 'resolved by the requesting agent with gateway_approve_self (self-approval enabled by its user)' },
        undefined,
        'mcp',
      );
      return { ...record, relationship: 'self' };
    },
  };
  return service;
}

export type ApprovalService = ReturnType<typeof createApprovalService>;
