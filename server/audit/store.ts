// The append-only audit log (a trigger refuses UPDATE, DELETE and TRUNCATE). Entries carry the
// originating user, the identity chain and redacted data only: never a secret or a token.
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { auditEntryFields, auditEntryNames, type AuditEntry } from './entry.ts';

export const auditRow = z.object({ id: z.number(), at: z.date(), http_status_code: z.number().nullable(), ...auditEntryFields });
export type AuditRow = z.infer<typeof auditRow>;

/**
 * The INSERT of one audit row, as a fragment (also used inside combined statements). With `onlyIf`
 * (a condition, e.g. on a CTE of the same statement) the row is written only when it holds. Every
 * value carries its type, so the row can be a SELECT as well as VALUES.
 */
export function auditInsert(e: AuditEntry, onlyIf?: ReturnType<typeof sql.fragment>) {
  const values = sql.fragment`${e.orgId}::uuid, ${e.event}::text, ${e.userId ?? null}::uuid, ${e.actorId ?? null}::uuid,
            ${sql.array(e.identityChain ?? [], 'uuid')}, ${e.service ?? null}::text, ${e.action ?? null}::text,
            ${sql.array(e.permissionKeys ?? [], 'text')}, ${e.decision ?? null}::text, ${e.callId ?? null}::uuid,
            ${e.approvalId ?? null}::uuid, ${e.executionId ?? null}::uuid, ${e.httpStatusCode ?? null}::int,
            ${sql.jsonb((e.details ?? {}) as never)}, ${e.requestId ?? null}::text`;
  return sql.fragment`
    INSERT INTO audit_log (org_id, event, user_id, actor_id, identity_chain, service, action, permission_keys,
                           decision, call_id, approval_id, execution_id, http_status_code, details, request_id)
    ${onlyIf ? sql.fragment`SELECT ${values} WHERE ${onlyIf}` : sql.fragment`VALUES (${values})`}`;
}

const auditIdRow = z.object({ id: z.number() });

export async function appendAudit(db: CommonQueryMethods, e: AuditEntry): Promise<number> {
  return db.oneFirst(sql.type(auditIdRow)`${auditInsert(e)} RETURNING id`);
}

// Reading --------------------------------------------------------------------------------------

/** The filters a reader of the log may give (every one optional). */
export interface AuditRowQuery {
  identity?: string | undefined;
  service?: string | undefined;
  action?: string | undefined;
  event?: string | undefined;
  /** The entry's `decision` (the outcome: covered, pending, denied, executed, failed, …). */
  decision?: string | undefined;
  /** Inclusive. */
  since?: string | undefined;
  /** Exclusive. */
  until?: string | undefined;
}

/** Which rows of the org a reader sees: those whose chain contains an identity, a user's, or all. */
export type AuditVisibility = { identityInChain: string } | { userId: string } | 'org';

export interface AuditFilter extends AuditRowQuery {
  orgId: string;
  visibleTo: AuditVisibility;
}

/**
 * A row as read: the log's ids, and beside them the identities' names as they are now (looked up
 * when the log is read; an id no identity of the org has any more reads as null).
 */
export const auditReadRow = auditRow.extend(auditEntryNames);
export type AuditReadRow = z.infer<typeof auditReadRow>;

const SELECT_READ_ROW = sql.fragment`
  SELECT id, org_id, at, event, user_id, actor_id, identity_chain, service, action, permission_keys, decision,
         call_id, approval_id, execution_id, http_status_code, details, request_id,
         (SELECT i.name FROM identities i WHERE i.id = a.user_id AND i.org_id = a.org_id) AS user_name,
         (SELECT i.name FROM identities i WHERE i.id = a.actor_id AND i.org_id = a.org_id) AS actor_name,
         -- One primary-key lookup per link of the chain: a join here would hash every identity of
         -- the database for each row read (an export reads them all).
         ARRAY(SELECT (SELECT i.name FROM identities i WHERE i.id = c.id AND i.org_id = a.org_id)
               FROM unnest(a.identity_chain) WITH ORDINALITY AS c(id, n) ORDER BY c.n) AS identity_chain_names
  FROM audit_log a`;

function conditions(f: AuditFilter) {
  const v = f.visibleTo;
  const visibility =
    v === 'org' ? sql.fragment`TRUE` : 'identityInChain' in v ? sql.fragment`identity_chain @> ARRAY[${v.identityInChain}]::uuid[]` : sql.fragment`user_id = ${v.userId}`;
  const filters = [sql.fragment`org_id = ${f.orgId}`, visibility];
  if (f.identity !== undefined) filters.push(sql.fragment`identity_chain @> ARRAY[${f.identity}]::uuid[]`);
  if (f.service !== undefined) filters.push(sql.fragment`service = ${f.service}`);
  if (f.action !== undefined) filters.push(sql.fragment`action = ${f.action}`);
  if (f.event !== undefined) filters.push(sql.fragment`event = ${f.event}`);
  if (f.decision !== undefined) filters.push(sql.fragment`decision = ${f.decision}`);
  if (f.since !== undefined) filters.push(sql.fragment`at >= ${f.since}::timestamptz`);
  if (f.until !== undefined) filters.push(sql.fragment`at < ${f.until}::timestamptz`);
  return filters;
}

export interface AuditPageBounds {
  /** Only ids below this one (the keyset cursor), or null for the newest. */
  below: number | null;
  limit: number;
}

/**
 * The statement that reads one page of rows matching `f`, newest first. Its shape (equality
 * filters, the time range, ORDER BY id DESC LIMIT) is what the audit indexes are made for
 * (migrations/0024_audit_filter_indexes.sql); the index test explains this very statement.
 */
export function auditRowsQuery(f: AuditFilter, page: AuditPageBounds) {
  const filters = conditions(f);
  if (page.below !== null) filters.push(sql.fragment`id < ${page.below}`);
  return sql.type(auditReadRow)`
    ${SELECT_READ_ROW} WHERE ${sql.join(filters, sql.fragment` AND `)}
    ORDER BY id DESC LIMIT ${page.limit}`;
}

/** The rows matching `f`, newest first: at most `limit`, with ids below `below` when given (keyset pages). */
export function readAuditRows(db: CommonQueryMethods, f: AuditFilter, page: AuditPageBounds): Promise<readonly AuditReadRow[]> {
  return db.any(auditRowsQuery(f, page));
}

// The export's read -----------------------------------------------------------------------------
// An export reads every row of the log, so what a page pays per row it pays a million times: the
// export's statement carries the stored columns only (no name subqueries: four index lookups per
// row), its rows are checked against the schema once per batch instead of one by one, and the
// names beside the ids come from one lookup of the ids the export has not met yet.

const EXPORT_COLUMNS = sql.fragment`
  SELECT id, org_id, at, event, user_id, actor_id, identity_chain, service, action, permission_keys, decision,
         call_id, approval_id, execution_id, http_status_code, details, request_id
  FROM audit_log`;

/** The statement of one export batch: the same filters, visibility and order as auditRowsQuery, without the names. */
export function auditExportRowsQuery(f: AuditFilter, page: AuditPageBounds) {
  const filters = conditions(f);
  if (page.below !== null) filters.push(sql.fragment`id < ${page.below}`);
  // Untyped: the rows skip the pool's per-row parser; readAuditExportRows checks the batch.
  return sql.unsafe`${EXPORT_COLUMNS} WHERE ${sql.join(filters, sql.fragment` AND `)} ORDER BY id DESC LIMIT ${page.limit}`;
}

/**
 * One batch of the export, as stored. Every row of a batch comes from the same statement, so
 * they share their columns and types; the one thing that varies per row, NULL, is only allowed
 * by the schema where the column allows it (audit_log's NOT NULLs). Checking the first row
 * therefore checks the batch's shape, at the cost of one row instead of each.
 */
export async function readAuditExportRows(db: CommonQueryMethods, f: AuditFilter, page: AuditPageBounds): Promise<readonly AuditRow[]> {
  const rows = await db.any(auditExportRowsQuery(f, page));
  if (rows.length > 0) auditRow.parse(rows[0]);
  return rows as readonly AuditRow[];
}

const identityNameRow = z.object({ id: z.string(), name: z.string() });

/** The current names of those of `ids` that are identities of `orgId` (the others are absent). */
export async function identityNames(db: CommonQueryMethods, orgId: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.any(sql.type(identityNameRow)`
    SELECT id, name FROM identities WHERE org_id = ${orgId} AND id = ANY(${sql.array([...ids], 'uuid')})`);
  return new Map(rows.map((r) => [r.id, r.name]));
}

export interface RecentCallsQuery {
  orgId: string;
  /** Only this user's calls; null: the whole org. */
  userId: string | null;
  days: number;
  /** The call this approval gates is left out. */
  exceptApprovalId: string;
  limit: number;
  /** Only the calls whose chain holds one of these identities are returned (all are counted). */
  onChainsOf: readonly string[];
}

const recentCallRow = z.object({ call_id: z.string(), identity_chain: z.array(z.string()), permission_keys: z.array(z.string()) });

/** What the statement answers: the on-chain rows with their time (a call's first is kept by recentCallKeys). */
export const recentCallsRow = z.object({
  /** Calls among the newest `limit` rows of the window. */
  scanned: z.coerce.number(),
  /** Those rows (a call may have two): `limit` of them means the window went on. */
  rows_read: z.coerce.number(),
  /** Every one of those rows on a chain of `onChainsOf` (all rows of a call carry its chain). */
  on_chain_rows: z.array(recentCallRow.extend({ at_micros: z.number() })),
});

export interface RecentCalls {
  scanned: number;
  rows_read: number;
  /** The calls on a chain of `onChainsOf`, each by its first row in the window (the one judged). */
  on_chains: z.infer<typeof recentCallRow>[];
}

/**
 * The org's newest calls of the last `days` days (a call's first raise, check or denial: chain
 * and keys), at most `limit` rows: how many calls they are, and the rows whose chain holds one of
 * `onChainsOf`. Bounded work: the newest `limit` such rows (audit_org_id or audit_org_user, newest
 * first), whatever the size of the window, read once: one pass counts them and their calls and
 * keeps only the rows on a target's chain, the few that leave the database.
 */
export function recentCallKeysQuery(q: RecentCallsQuery) {
  const mine = q.userId === null ? sql.fragment`` : sql.fragment`AND user_id = ${q.userId}`;
  const targets = sql.array([...q.onChainsOf], 'uuid');
  return sql.type(recentCallsRow)`
    SELECT count(DISTINCT call_id) AS scanned, count(*) AS rows_read,
           coalesce(jsonb_agg(jsonb_build_object('call_id', call_id, 'identity_chain', identity_chain, 'permission_keys', permission_keys, 'at_micros', (extract(epoch FROM at) * 1000000)::bigint))
                      FILTER (WHERE identity_chain && ${targets}), '[]') AS on_chain_rows
    FROM (
      SELECT call_id, identity_chain, permission_keys, at FROM audit_log
      WHERE org_id = ${q.orgId} AND at > now() - make_interval(days => ${q.days})
        AND event IN ('call.called', 'call.denied', 'approval.raised') AND call_id IS NOT NULL
        AND call_id <> (SELECT call_id FROM approvals WHERE id = ${q.exceptApprovalId}) ${mine}
      ORDER BY id DESC LIMIT ${q.limit}
    ) AS recent`;
}

export async function recentCallKeys(db: CommonQueryMethods, q: RecentCallsQuery): Promise<RecentCalls> {
  const { scanned, rows_read, on_chain_rows } = await db.one(recentCallKeysQuery(q));
  // A call's first row in the window: the earliest (microseconds, as stored).
  const first = new Map<string, (typeof on_chain_rows)[number]>();
  for (const row of on_chain_rows) {
    const seen = first.get(row.call_id);
    if (!seen || row.at_micros < seen.at_micros) first.set(row.call_id, row);
  }
  return { scanned, rows_read, on_chains: [...first.values()].map(({ at_micros: _at, ...call }) => call) };
}
