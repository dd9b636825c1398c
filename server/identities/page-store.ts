// The identities listing in keyset pages (`GET /v1/identities`): the org, a person's tree or an
// agent's subtree, oldest first, a page at a time (cursor.ts encodes a position).
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { identityRow } from './store.ts';

type Db = CommonQueryMethods;

/** A row's place in the listing order: created_at in whole microseconds (exact, unlike a Date), then id. */
export interface IdentityPosition {
  atMicros: bigint;
  id: string;
}

export interface IdentityPageQuery {
  orgId: string;
  /** Whose identities: the whole org (admins), one person's tree, or an agent's subtree. */
  within: { org: true } | { userId: string } | { rootId: string };
  kind?: string | undefined;
  status?: string | undefined;
  /** Only rows after this one (the keyset cursor); none for the first page. */
  after?: IdentityPosition | undefined;
  limit: number;
}

const identityPageRow = identityRow.extend({ at_micros: z.string() });
export type IdentityPageRow = z.infer<typeof identityPageRow>;

/**
 * The statement behind `identityPage`: oldest first (created_at, id), so a parent always comes on
 * or before the page of its children. The org and a person's tree are keyset ranges of
 * identities_org_page / identities_org_kind_page / identities_user_page (migration 0035): the work
 * is the page's. An agent's subtree is walked down from it (it has no column of its own).
 */
export function identityPageQuery(q: IdentityPageQuery) {
  const t = sql.identifier(['t']);
  const within =
    'org' in q.within
      ? sql.fragment`identities t WHERE t.org_id = ${q.orgId}`
      : 'userId' in q.within
        ? sql.fragment`identities t WHERE t.org_id = ${q.orgId} AND t.user_id = ${q.within.userId}`
        : sql.fragment`subtree t WHERE t.org_id = ${q.orgId}`;
  const subtree =
    'rootId' in q.within
      ? sql.fragment`WITH RECURSIVE subtree AS (
          SELECT i.*, 0 AS depth FROM identities i WHERE i.id = ${q.within.rootId}
          UNION ALL
          SELECT c.*, s.depth + 1 FROM identities c JOIN subtree s ON c.parent_id = s.id WHERE s.depth < 64
        )`
      : sql.fragment``;
  const after = q.after
    ? sql.fragment`AND (${t}.created_at, ${t}.id) > (timestamptz 'epoch' + ${q.after.atMicros.toString()}::bigint * interval '1 microsecond', ${q.after.id}::uuid)`
    : sql.fragment``;
  return sql.type(identityPageRow)`
    ${subtree}
    SELECT ${sql.join(['id', 'org_id', 'kind', 'parent_id', 'user_id', 'name', 'email', 'role', 'inherit_permissions', 'auto_call_on_approve', 'status', 'created_by', 'created_at', 'archived_at'].map((c) => sql.identifier(['t', c])), sql.fragment`, `)},
      (extract(epoch FROM t.created_at) * 1000000)::bigint::text AS at_micros
    FROM ${within}
      ${q.kind ? sql.fragment`AND t.kind = ${q.kind}` : sql.fragment``}
      ${q.status ? sql.fragment`AND t.status = ${q.status}` : sql.fragment``}
      ${after}
    ORDER BY t.created_at, t.id
    LIMIT ${q.limit}`;
}

export const identityPage = (db: Db, q: IdentityPageQuery) => db.any(identityPageQuery(q));
