// Approvals as a viewer reads them: one query gives a whole page (or one approval) with its
// execution, the gated call, the requester and the viewer's relationship to it. Who may see or
// decide it is decided in SQL here exactly as core/permissions/authority.ts states it: the viewer's
// subtree comes from the identities' parent links, an admin sees the whole org.
import { sql, type CommonQueryMethods, type FragmentSqlToken, type IdentifierSqlToken } from 'slonik';
import { z } from 'zod';
// The approval and execution rows are written by the call's statements (calls/store.ts): one schema for both.
import { approvalRow, executionRow } from '../calls/rows.ts';

type Db = CommonQueryMethods;
type SqlFragment = FragmentSqlToken;

export const approvalExecution = executionRow
  .pick({ id: true, status: true, runtime: true, triggered_by: true, http_status_code: true, result: true, error: true })
  .extend({ expires_at: z.coerce.date() });
export type ApprovalExecution = z.infer<typeof approvalExecution>;

export const approvalViewRow = approvalRow.extend({
  relationship: z.enum(['self', 'downstream', 'not_in_your_chain']),
  execution: approvalExecution.nullable(),
  call: z
    .object({
      service: z.string(),
      template: z.string(),
      action: z.string(),
      description: z.string(),
      request: z.unknown(),
      disclosed: z.unknown(),
    })
    .nullable(),
  requester: z.object({ id: z.string(), kind: z.string(), name: z.string() }).nullable(),
  // Routing past the requester's user (migration 0015, core/permissions/routing.ts).
  routed_to: z.enum(['chain', 'approver', 'admins']),
  routed_from: z.string().nullable(),
  people: z.object({
    user: z.object({ id: z.string(), name: z.string(), role: z.enum(['admin', 'member', 'approver']), approver_id: z.string().nullable() }),
    routed_from: z.object({ id: z.string(), name: z.string() }).nullable(),
    // Who is above the user ("Bubble up" from the user or their approver): the approver, the active admins.
    approver: z.object({ id: z.string(), name: z.string(), role: z.enum(['admin', 'member', 'approver']), active: z.boolean() }).nullable(),
    admin_ids: z.array(z.string()),
  }),
});
export type ApprovalViewRow = z.infer<typeof approvalViewRow>;

export interface ApprovalQuery {
  orgId: string;
  viewerId: string;
  admin: boolean;
  /**
   * `visible`: what the viewer may see; `mine`: raised in the viewer's subtree; `assigned`: now
   * waiting on the viewer; `actionable`: open and the viewer's to decide.
   */
  scope: 'visible' | 'mine' | 'assigned' | 'actionable';
  status?: string | undefined;
  /** One approval, whatever the viewer's authority (the caller judges it). */
  id?: string | undefined;
  before?: { at: Date; id: string } | undefined;
  limit: number;
}

/** The viewer's subtree (itself at depth 0): who sees and decides what is decided from it. */
const subtreeOf = (viewer: SqlFragment) => sql.fragment`
  subtree AS (
    SELECT id, 0 AS depth FROM identities WHERE id = ${viewer}
    UNION ALL
    SELECT i.id, s.depth + 1 FROM identities i JOIN subtree s ON i.parent_id = s.id WHERE s.depth < 64)`;

const belowViewer = sql.fragment`a.requester_id IN (SELECT id FROM subtree WHERE depth > 0)`;

/**
 * An approval `a` of `org` as a viewer reads it: the row, the viewer's relationship, its execution,
 * call, requester and people. Each is an index lookup per row; the org's admins do not depend on
 * the row, so with `org` a parameter they are read once per statement, not once per row.
 */
const viewColumns = (viewer: SqlFragment, org: SqlFragment) => sql.fragment`
  a.*,
  CASE WHEN a.requester_id = ${viewer} THEN 'self' WHEN ${belowViewer} THEN 'downstream' ELSE 'not_in_your_chain' END AS relationship,
  (SELECT jsonb_build_object('id', e.id, 'status', e.status, 'runtime', e.runtime, 'triggered_by', e.triggered_by,
                             'http_status_code', e.http_status_code, 'result', e.result, 'error', e.error, 'expires_at', e.expires_at)
     FROM executions e WHERE e.approval_id = a.id) AS execution,
  (SELECT jsonb_build_object('service', c.service, 'template', c.template, 'action', c.action, 'description', c.description,
                             'request', c.request_redacted, 'disclosed', c.disclosed)
     FROM calls c WHERE c.id = a.call_id) AS call,
  (SELECT jsonb_build_object('id', r.id, 'kind', r.kind, 'name', r.name) FROM identities r WHERE r.id = a.requester_id) AS requester,
  jsonb_build_object(
    'user', (SELECT jsonb_build_object('id', u.id, 'name', u.name, 'role', u.role, 'approver_id', u.approver_id) FROM identities u WHERE u.id = a.user_id),
    'routed_from', (SELECT jsonb_build_object('id', f.id, 'name', f.name) FROM identities f WHERE f.id = a.routed_from),
    'approver', (SELECT jsonb_build_object('id', v.id, 'name', v.name, 'role', v.role, 'active', v.status = 'active')
                   FROM identities v WHERE v.id = (SELECT u.approver_id FROM identities u WHERE u.id = a.user_id)),
    'admin_ids', (SELECT coalesce(jsonb_agg(d.id), '[]'::jsonb) FROM identities d
                   WHERE d.org_id = ${org} AND d.kind = 'user' AND d.role = 'admin' AND d.status = 'active')) AS people`;

/**
 * The keyset position before which a page starts. The cursor's time is a Date (milliseconds) while
 * PostgreSQL keeps microseconds, so the cursor row's own created_at is read back (by primary key,
 * once per statement): approvals of the same millisecond are neither skipped nor repeated. The
 * cursor's time stands in only when that approval is gone.
 */
function beforePosition(q: ApprovalQuery, before: NonNullable<ApprovalQuery['before']>) {
  return sql.fragment`(
    COALESCE((SELECT k.created_at FROM approvals k WHERE k.id = ${before.id} AND k.org_id = ${q.orgId}), ${sql.timestamp(before.at)}),
    ${before.id}::uuid)`;
}

/** The page's own conditions on approvals row `t`: the status asked for and the keyset position. */
function pageConditions(q: ApprovalQuery, t: IdentifierSqlToken) {
  return sql.fragment`
    ${q.status && q.scope !== 'actionable' ? sql.fragment`AND ${t}.status = ${q.status}` : sql.fragment``}
    ${q.before ? sql.fragment`AND (${t}.created_at, ${t}.id) < ${beforePosition(q, q.before)}` : sql.fragment``}`;
}

/**
 * A superset of the page for a scope bounded by requesters (and, with `delegated`, by what was
 * routed to the viewer): each identity of the viewer's subtree's newest `limit` approvals after
 * the page's conditions, one short range of approvals_requester_time each, plus the newest
 * `limit` delegated ones (approvals_resolver_time). The page's rows are among them, since a row
 * in the newest `limit` of the scope is in the newest `limit` of its own requester. Without it the
 * planner cannot know the subtree is small and walks the org's approvals newest-first, filtering.
 */
function candidates(q: ApprovalQuery, viewer: SqlFragment, delegated: boolean) {
  const c = sql.identifier(['c']);
  const newest = sql.fragment`${pageConditions(q, c)} ORDER BY c.created_at DESC, c.id DESC LIMIT ${q.limit}`;
  return sql.fragment`
    candidates AS (
      SELECT x.id FROM subtree s
        CROSS JOIN LATERAL (SELECT c.id FROM approvals c WHERE c.requester_id = s.id AND c.org_id = ${q.orgId} ${newest}) x
      ${delegated ? sql.fragment`UNION ALL (SELECT c.id FROM approvals c WHERE c.resolver_id = ${viewer} AND c.routed_to = 'approver' AND c.org_id = ${q.orgId} ${newest})` : sql.fragment``})`;
}

/**
 * The statement behind `approvalViews`: the org's approvals in `q`'s scope, newest first
 * (created_at, id), a keyset page. The approvals indexes serve it
 * (migrations/0025_approval_history_indexes.sql); the index test explains this very statement.
 */
export function approvalViewsQuery(q: ApprovalQuery) {
  const viewer = sql.fragment`${q.viewerId}::uuid`;
  const inSubtree = sql.fragment`a.requester_id IN (SELECT id FROM subtree)`;
  // Routed past the requester's user to the viewer, as that user's approver.
  const delegated = sql.fragment`(a.routed_to = 'approver' AND a.resolver_id = ${viewer})`;
  const scope = {
    visible: q.admin ? sql.fragment`TRUE` : sql.fragment`(${inSubtree} OR ${delegated})`,
    mine: inSubtree,
    assigned: q.admin
      ? sql.fragment`(a.resolver_id = ${viewer} OR (a.routed_to = 'admins' AND a.status = 'bubbled'))`
      : sql.fragment`a.resolver_id = ${viewer}`,
    actionable: sql.fragment`a.status IN ('pending', 'bubbled') AND a.requester_id <> ${viewer} AND ${q.admin ? sql.fragment`TRUE` : sql.fragment`(${belowViewer} OR ${delegated})`}`,
  }[q.scope];
  // The scopes that are a few requesters' approvals read them through `candidates` (one approval
  // by id and the admin's whole org need not).
  const narrowed = !q.id && (q.scope === 'mine' || (q.scope === 'visible' && !q.admin));
  return sql.type(approvalViewRow)`
    WITH RECURSIVE ${subtreeOf(viewer)}${narrowed ? sql.fragment`, ${candidates(q, viewer, q.scope === 'visible')}` : sql.fragment``}
    SELECT ${viewColumns(viewer, sql.fragment`${q.orgId}::uuid`)}
    FROM approvals a
    WHERE a.org_id = ${q.orgId}
      AND ${q.id ? sql.fragment`a.id = ${q.id}` : scope}
      ${narrowed ? sql.fragment`AND a.id IN (SELECT id FROM candidates)` : sql.fragment``}
      ${pageConditions(q, sql.identifier(['a']))}
    ORDER BY a.created_at DESC, a.id DESC
    LIMIT ${q.limit}`;
}

export function approvalViews(db: Db, q: ApprovalQuery) {
  return db.any(approvalViewsQuery(q));
}

/** Reads approvals as a viewer sees them: what the services are given instead of the pool. */
export type ApprovalViewReader = (q: ApprovalQuery) => Promise<readonly ApprovalViewRow[]>;
export const approvalViewReader = (db: Db): ApprovalViewReader => (q) => approvalViews(db, q);

/**
 * One approval by id as `viewer` reads it (what `approvalViews` gives for `id`), as one JSON value
 * (null: none in `org`). `org` and `viewer` are SQL expressions: columns of the statement it rides
 * along with (a session's or an agent key's authentication, server/approvals/request-approval.ts).
 * `id` must be a UUID: a malformed one would fail the statement it rides along.
 */
export const approvalViewValue = (org: SqlFragment, viewer: SqlFragment, id: string) => sql.fragment`
  (WITH RECURSIVE ${subtreeOf(viewer)}
   SELECT row_to_json(v) FROM (SELECT ${viewColumns(viewer, org)} FROM approvals a WHERE a.org_id = ${org} AND a.id = ${id}::uuid) v)`;

/** `approvalViewRow` as JSON carries it: timestamps are strings. */
export const approvalViewJson = approvalViewRow.extend({
  expires_at: z.coerce.date(),
  resolved_at: z.coerce.date().nullable(),
  created_at: z.coerce.date(),
  updated_at: z.coerce.date(),
});

const openApprovalRow = z.object({
  id: z.string(),
  requester_id: z.string(),
  permission_keys: z.array(z.string()),
  risk: z.string(),
  status: z.string(),
  action_description: z.string(),
  created_at: z.date(),
  expires_at: z.date(),
});

/**
 * The org's other open approvals (pending or bubbled) whose requester is one of `below` or below
 * one of them (what a rule planted on `below` can reach), newest first, at most `limit`; only
 * `userId`'s when given (null: the whole org). Each identity of those subtrees is read from
 * approvals_requester_open: O(the subtrees' open approvals), however many the org has.
 */
export interface OpenApprovalsBelowQuery {
  orgId: string;
  userId: string | null;
  exceptId: string;
  below: readonly string[];
  limit: number;
}

export const openApprovalsBelowQuery = (q: OpenApprovalsBelowQuery) =>
  sql.type(openApprovalRow)`
    WITH RECURSIVE subtree AS (
      SELECT id, 0 AS depth FROM identities WHERE id = ANY(${sql.array([...q.below], 'uuid')}) AND org_id = ${q.orgId}
      UNION ALL
      SELECT i.id, s.depth + 1 FROM identities i JOIN subtree s ON i.parent_id = s.id WHERE s.depth < 64)
    SELECT a.* FROM (SELECT DISTINCT id FROM subtree) AS s CROSS JOIN LATERAL (
      SELECT id, requester_id, permission_keys, risk, status, action_description, created_at, expires_at FROM approvals
      WHERE requester_id = s.id AND status IN ('pending', 'bubbled') AND org_id = ${q.orgId} AND id <> ${q.exceptId}
        ${q.userId === null ? sql.fragment`` : sql.fragment`AND user_id = ${q.userId}`}
      ORDER BY created_at DESC LIMIT ${q.limit}) AS a
    ORDER BY a.created_at DESC LIMIT ${q.limit}`;

export const openApprovalsBelow = (db: Db, q: OpenApprovalsBelowQuery) => db.any(openApprovalsBelowQuery(q));

/**
 * What each approval's call would send, as conditions see it (the approver's edit, else the
 * redacted request: calls/store.ts requestToSend, for many approvals at once).
 */
export const requestsToSend = (db: Db, orgId: string, approvalIds: readonly string[]) =>
  db.any(sql.type(z.object({ id: z.string(), request: z.unknown() }))`
    SELECT a.id, COALESCE(a.edited_request_redacted, c.request_redacted) AS request
    FROM approvals a JOIN calls c ON c.id = a.call_id
    WHERE a.org_id = ${orgId} AND a.id = ANY(${sql.array([...approvalIds], 'uuid')})`);

/** Approvals pending or bubbled now, counted up to `cap` (the metrics gauge: a scrape stays cheap). */
export async function countPendingApprovals(db: CommonQueryMethods, cap: number): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
    SELECT count(*) AS n FROM (
      SELECT 1 FROM approvals WHERE status IN ('pending', 'bubbled') LIMIT ${cap}
    ) AS pending`);
}
