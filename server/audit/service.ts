// Reading the audit log. Org-scoped; admins see the whole org, members the rows of their own
// chains (user_id is theirs), agents the rows whose identity chain contains them. Newest first,
// paginated by an opaque cursor over the row id (stable under concurrent appends).
import type { DatabasePool } from 'slonik';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { invalidRequest } from '../errors.ts';
import { csvHeader, csvLine, jsonLine, type ExportEntry, type ExportFormat } from '../../core/audit/export-format.ts';
import {
  identityNames,
  readAuditExportRows,
  readAuditRows,
  type AuditFilter,
  type AuditRow,
  type AuditRowQuery,
  type AuditVisibility,
} from './store.ts';

export interface AuditQuery extends AuditRowQuery {
  limit?: number | undefined;
  cursor?: string | undefined;
}

export const DEFAULT_AUDIT_LIMIT = 50;

const CURSOR_PREFIX = 'a1:';

export function encodeCursor(id: number): string {
  return Buffer.from(`${CURSOR_PREFIX}${id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const m = /^a1:([1-9]\d{0,15})$/.exec(text);
  const id = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(id)) throw invalidRequest('cursor is not valid', { field: 'cursor' });
  return id;
}

/** The names beside a row's ids (null: no such identity of the org any more). */
export interface AuditRowNames {
  user_name: string | null;
  actor_name: string | null;
  identity_chain_names: (string | null)[];
}

/** A row as GET /v1/audit answers it and the export writes it; the list reads `names` with the row. */
export function publicAuditEntry(r: AuditRow, names: AuditRowNames): ExportEntry {
  return {
    id: r.id,
    at: r.at.toISOString(),
    event: r.event,
    org_id: r.org_id,
    user_id: r.user_id,
    user_name: names.user_name,
    actor_id: r.actor_id,
    actor_name: names.actor_name,
    identity_chain: r.identity_chain,
    identity_chain_names: names.identity_chain_names,
    service: r.service,
    action: r.action,
    permission_keys: r.permission_keys,
    decision: r.decision,
    call_id: r.call_id,
    approval_id: r.approval_id,
    execution_id: r.execution_id,
    http_status_code: r.http_status_code,
    details: r.details,
    request_id: r.request_id,
  };
}

/** Rows an export reads per query: keyset pages, so memory stays flat whatever the row count. */
export const EXPORT_BATCH = 500;

export function createAuditService(deps: { pool: DatabasePool }) {
  const { pool } = deps;

  /** Visibility for the principal and the query's filters (not the cursor). */
  function filterFor(p: Principal, q: AuditRowQuery): AuditFilter {
    const visibleTo: AuditVisibility = p.type === 'agent' ? { identityInChain: p.identityId } : isAdmin(p) ? 'org' : { userId: p.userId };
    return { ...q, orgId: p.orgId, visibleTo };
  }

  /**
   * Every entry matching the query, newest first, in keyset batches of EXPORT_BATCH (one short
   * query each, no transaction held open while the client reads). Rows appended meanwhile have
   * higher ids and are not included: the export is the log as it was when it started. The next
   * batch is asked for as soon as a batch arrives, so the database reads it while this one is
   * written out (at most two batches in memory). Names are looked up once per identity per
   * export, the first time a batch names it (the org's identities bound the map, not the rows).
   */
  async function* exportEntries(p: Principal, q: Omit<AuditQuery, 'limit' | 'cursor'>): AsyncGenerator<ExportEntry[]> {
    const filter = filterFor(p, q);
    const names = new Map<string, string | null>();
    const nameOf = (id: string | null) => (id === null ? null : (names.get(id) ?? null));
    const batchBelow = async (below: number | null) => {
      const rows = await readAuditExportRows(pool, filter, { below, limit: EXPORT_BATCH });
      const unseen = new Set<string>();
      for (const r of rows) {
        if (r.user_id !== null && !names.has(r.user_id)) unseen.add(r.user_id);
        if (r.actor_id !== null && !names.has(r.actor_id)) unseen.add(r.actor_id);
        for (const id of r.identity_chain) if (!names.has(id)) unseen.add(id);
      }
      const found = await identityNames(pool, filter.orgId, [...unseen]);
      for (const id of unseen) names.set(id, found.get(id) ?? null);
      return rows;
    };
    let next: Promise<readonly AuditRow[]> = batchBelow(null);
    try {
      for (;;) {
        const rows = await next;
        const more = rows.length === EXPORT_BATCH;
        if (more) next = batchBelow(rows[rows.length - 1]!.id);
        if (rows.length > 0) {
          yield rows.map((r) =>
            publicAuditEntry(r, { user_name: nameOf(r.user_id), actor_name: nameOf(r.actor_id), identity_chain_names: r.identity_chain.map(nameOf) }),
          );
        }
        if (!more) return;
      }
    } finally {
      // A client that went away leaves the read ahead unawaited: its outcome no longer matters.
      next.catch(() => {});
    }
  }

  return {
    exportEntries,

    async list(p: Principal, q: AuditQuery) {
      const limit = q.limit ?? DEFAULT_AUDIT_LIMIT;
      const filter = filterFor(p, q);
      const below = q.cursor !== undefined ? decodeCursor(q.cursor) : null;
      const rows = await readAuditRows(pool, filter, { below, limit: limit + 1 });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        entries: page.map((r) => publicAuditEntry(r, r)),
        next_cursor: rows.length > limit && last ? encodeCursor(last.id) : null,
      };
    },

    /** The export as text chunks in `format` (CSV starts with its header), one chunk per batch. */
    async *exportText(p: Principal, q: Omit<AuditQuery, 'limit' | 'cursor'>, format: ExportFormat): AsyncGenerator<string> {
      // The CSV header goes out with the first batch, so a failing first query is still an error response.
      let prefix = format === 'csv' ? csvHeader() : '';
      for await (const batch of exportEntries(p, q)) {
        yield prefix + batch.map(format === 'csv' ? csvLine : jsonLine).join('');
        prefix = '';
      }
      if (prefix) yield prefix;
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
