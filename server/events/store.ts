// The people's event log behind GET /v1/events: rows in PostgreSQL (so a client can resume with
// Last-Event-ID after a disconnect, on any replica) plus a NOTIFY per new row for the live streams.
import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { USER_EVENT_TYPES, type UserEventType } from '../../core/events/types.ts';
import type { Logger } from '../logger.ts';
import type { ViewerNow } from './visibility.ts';

export const USER_EVENTS_CHANNEL = 'gateway_user_events';
/** How long events stay resumable; a client away longer gets a `gap` and refetches. */
export const USER_EVENT_RETENTION_HOURS = 24;

export { USER_EVENT_TYPES, type UserEventType };

/** What a stream sends as `data`: small (NOTIFY caps payloads at 8000 bytes), no result bodies. */
export interface UserEventData {
  approval_id: string;
  status?: string;
  risk?: string;
  action_description?: string;
  requester_id?: string;
  resolver_id?: string;
  decision?: string;
  reason?: string;
  expires_at?: string;
  execution?: { id: string; status: string; http_status_code?: number };
  /** Allowed with changes (issue 31): the diff, when it is small enough to carry. */
  modified_by_approver?: true;
  diff?: unknown[];
}

/** A diff larger than this (as JSON) is left out of an event: the approval itself holds it. */
const MAX_EVENT_DIFF_CHARS = 4000;

export interface UserEvent {
  id: string;
  org_id: string;
  user_id: string;
  type: UserEventType;
  data: UserEventData;
}

const eventRow = z.object({
  id: z.union([z.string(), z.number(), z.bigint()]).transform(String),
  org_id: z.string(),
  user_id: z.string(),
  type: z.enum(USER_EVENT_TYPES),
  data: z.record(z.string(), z.unknown()),
});

const clip = (v: unknown, max: number): string | undefined => (typeof v === 'string' ? v.slice(0, max) : undefined);

/** Keeps the fields the dashboard needs; drops anything large (results, request bodies). */
export function compactEventData(data: Record<string, unknown>): UserEventData {
  const out: UserEventData = { approval_id: String(data.approval_id) };
  for (const [k, max] of [
    ['status', 40],
    ['risk', 10],
    ['action_description', 500],
    ['requester_id', 40],
    ['resolver_id', 40],
    ['decision', 40],
    ['reason', 1000],
    ['expires_at', 40],
  ] as const) {
    const v = clip(data[k], max);
    if (v !== undefined) out[k] = v;
  }
  const exec = data.execution as Record<string, unknown> | undefined;
  if (exec && typeof exec.id === 'string') {
    out.execution = { id: exec.id, status: String(exec.status) };
    if (typeof exec.http_status_code === 'number') out.execution.http_status_code = exec.http_status_code;
  }
  if (data.modified_by_approver === true) {
    out.modified_by_approver = true;
    if (Array.isArray(data.diff) && JSON.stringify(data.diff).length <= MAX_EVENT_DIFF_CHARS) out.diff = data.diff;
  }
  return out;
}

/** The people's name for a call-workflow transition: an expiry is its own event. */
export function userEventType(type: string, data: Record<string, unknown>): UserEventType | null {
  if (type === 'approval.resolved' && data.status === 'expired') return 'approval.expired';
  return (USER_EVENT_TYPES as readonly string[]).includes(type) ? (type as UserEventType) : null;
}

/**
 * Records one event and notifies every replica's streams, in one transaction (NOTIFY is delivered
 * at commit, after the row is visible). A retried activity hits `dedupe_key` and sends nothing.
 * Best effort: failures are logged and never break the workflow's activity.
 */
/** Old events are pruned by whichever process publishes, at most this often (not on every event). */
const PRUNE_EVERY_MS = 60_000;
let lastPrunedAt = 0;

export async function publishUserEvent(
  pool: DatabasePool,
  e: { orgId: string; userId: string; type: string; data: Record<string, unknown>; dedupeKey: string },
  logger?: Pick<Logger, 'warn'>,
): Promise<void> {
  const type = userEventType(e.type, e.data);
  if (!type) return;
  const data = compactEventData(e.data);
  // The event without its id, which the insert assigns: the notification adds it (one statement,
  // and nothing is announced that was not stored; a duplicate is neither stored nor announced).
  const payload: Omit<UserEvent, 'id'> = { org_id: e.orgId, user_id: e.userId, type, data };
  try {
    await pool.query(sql.unsafe`
      WITH stored AS (
        INSERT INTO user_events (org_id, user_id, type, approval_id, data, dedupe_key)
        VALUES (${e.orgId}, ${e.userId}, ${type}, ${data.approval_id}, ${sql.jsonb(data as never)}, ${e.dedupeKey})
        ON CONFLICT (dedupe_key) DO NOTHING
        RETURNING id)
      SELECT pg_notify(${USER_EVENTS_CHANNEL}, (jsonb_build_object('id', id::text) || ${sql.jsonb(payload as never)})::text) FROM stored`);
    if (Date.now() - lastPrunedAt >= PRUNE_EVERY_MS) {
      lastPrunedAt = Date.now();
      await pruneUserEvents(pool, new Date(Date.now() - USER_EVENT_RETENTION_HOURS * 3600_000));
    }
  } catch (err) {
    logger?.warn({ err: (err as Error).message, type }, 'could not publish a user event');
  }
}

/** A NOTIFY on `channel` (the agents' MCP streams listen on theirs: agent-events.ts); nothing is stored. */
export async function notifyChannel(db: CommonQueryMethods, channel: string, payload: string): Promise<void> {
  await db.query(sql.unsafe`SELECT pg_notify(${channel}, ${payload})`);
}

/** Drops events older than `before` (index range scan; usually finds nothing). */
export async function pruneUserEvents(db: CommonQueryMethods, before: Date): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM user_events WHERE created_at < ${before.toISOString()}`);
}

export interface EventScope {
  orgId: string;
  /** null: the whole org (admins). */
  userId: string | null;
}

export function inScope(scope: EventScope, e: Pick<UserEvent, 'org_id' | 'user_id'>): boolean {
  return e.org_id === scope.orgId && (scope.userId === null || e.user_id === scope.userId);
}

/** The bounds of what is still stored (all orgs): decides whether a resume point is still covered. */
export async function storedBounds(db: CommonQueryMethods): Promise<{ min: bigint | null; max: bigint | null }> {
  const row = await db.one(sql.type(z.object({ min: z.string().nullable(), max: z.string().nullable() }))`
    SELECT min(id)::text AS min, max(id)::text AS max FROM user_events`);
  return { min: row.min === null ? null : BigInt(row.min), max: row.max === null ? null : BigInt(row.max) };
}

/** Events after `afterId` visible in `scope`, oldest first, at most `limit`. */
export async function eventsAfter(db: CommonQueryMethods, scope: EventScope, afterId: bigint, limit: number): Promise<UserEvent[]> {
  const rows = await db.any(sql.type(eventRow)`
    SELECT id::text AS id, org_id, user_id, type, data FROM user_events
    WHERE org_id = ${scope.orgId} AND id > ${afterId.toString()}
      ${scope.userId === null ? sql.fragment`` : sql.fragment`AND user_id = ${scope.userId}`}
    ORDER BY id LIMIT ${limit}`);
  return rows.map((r) => ({ ...r, data: r.data as unknown as UserEventData }));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const viewerRow = z.object({ id: z.string(), org_id: z.string(), role: z.enum(['admin', 'member', 'approver']), readable: z.array(z.string()) });

/**
 * The facts visibility.ts judges an event by, read fresh, for several viewers in one statement
 * (every open stream of the process hears an event at once): each viewer's role (null: not an
 * active person of the org any more) and which of `approvalIds` they may read now (their own
 * approvals, or approvals routed to them as an approver), as the approvals' REST view decides.
 * Answers in the order of `viewers`.
 */
export async function viewersNow(db: CommonQueryMethods, viewers: ReadonlyArray<{ orgId: string; userId: string }>, approvalIds: readonly string[]): Promise<ViewerNow[]> {
  const ids = [...new Set(approvalIds.filter((id) => UUID.test(id)))];
  const userIds = [...new Set(viewers.map((v) => v.userId).filter((id) => UUID.test(id)))];
  const rows = await db.any(sql.type(viewerRow)`
    SELECT u.id, u.org_id, u.role, COALESCE((
      SELECT array_agg(a.id::text) FROM approvals a
      WHERE a.org_id = u.org_id AND a.id = ANY(${sql.array(ids, 'uuid')})
        AND (a.user_id = u.id OR (a.routed_to = 'approver' AND a.resolver_id = u.id))), '{}') AS readable
    FROM identities u
    WHERE u.id = ANY(${sql.array(userIds, 'uuid')}) AND u.kind = 'user' AND u.status = 'active'`);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return viewers.map((v) => {
    const row = byId.get(v.userId);
    // Someone of another org (a moved or bad id) is no viewer of this stream's org.
    return row && row.org_id === v.orgId ? { userId: v.userId, role: row.role, readable: new Set(row.readable) } : { userId: v.userId, role: null, readable: new Set<string>() };
  });
}
