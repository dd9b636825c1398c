// SQL for the authorization server's own tables: bindings, client revocations, keys, revoked
// access tokens, oidc-provider's payloads (the adapter's storage, and the few lookups across them:
// grants of a pair, clients). No authorization here: the service and the provider callbacks decide.
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

type Db = CommonQueryMethods;

export const bindingRow = z.object({
  id: z.string(),
  user_id: z.string(),
  client_id: z.string(),
  agent_id: z.string(),
  grant_id: z.string().nullable(),
  self_approve_enabled: z.boolean(),
  created_at: z.date(),
  updated_at: z.date(),
  revoked_at: z.date().nullable(),
  last_used_at: z.date().nullable(),
});
export type BindingRow = z.infer<typeof bindingRow>;

const BINDING_COLUMNS = sql.fragment`
  b.id, b.user_id, b.client_id, b.agent_id, b.grant_id, b.self_approve_enabled, b.created_at, b.updated_at, b.revoked_at, b.last_used_at`;

/** A live binding with what decides whether it still authorizes anything. */
export const bindingStateRow = bindingRow.extend({
  org_id: z.string(),
  agent_kind: z.enum(['user', 'agent', 'subagent']),
  /** The agent and every ancestor (its user included) are active. */
  chain_active: z.boolean(),
  /** An admin of the user's org revoked the client. */
  client_revoked: z.boolean(),
});
export type BindingStateRow = z.infer<typeof bindingStateRow>;

/** Every identity on the chain from `identityColumn` up to the user is active. */
const chainActive = (identityColumn: ReturnType<typeof sql.identifier>) => sql.fragment`
  NOT EXISTS (
    WITH RECURSIVE up AS (
      SELECT i.id, i.parent_id, i.status FROM identities i WHERE i.id = ${identityColumn}
      UNION ALL
      SELECT p.id, p.parent_id, p.status FROM identities p JOIN up ON p.id = up.parent_id
    ) SELECT 1 FROM up WHERE up.status <> 'active')`;

/** The live binding of (user, client), if any, with the state of its agent chain and client. */
export const findLiveBinding = (db: Db, userId: string, clientId: string) =>
  db.maybeOne(sql.type(bindingStateRow)`
    SELECT ${BINDING_COLUMNS}, u.org_id, a.kind AS agent_kind,
           ${chainActive(sql.identifier(['b', 'agent_id']))} AS chain_active,
           EXISTS (SELECT 1 FROM oauth_client_revocations r WHERE r.org_id = u.org_id AND r.client_id = b.client_id) AS client_revoked
    FROM oauth_bindings b
    JOIN identities u ON u.id = b.user_id
    JOIN identities a ON a.id = b.agent_id
    WHERE b.user_id = ${userId} AND b.client_id = ${clientId} AND b.revoked_at IS NULL`);

export const isUsable = (b: BindingStateRow): boolean => b.chain_active && !b.client_revoked && b.agent_kind !== 'user';

export const getBinding = (db: Db, id: string) =>
  db.maybeOne(sql.type(bindingRow)`SELECT ${BINDING_COLUMNS} FROM oauth_bindings b WHERE b.id = ${id}`);

/** Locks the pair so two concurrent consents cannot both bind it. */
export async function lockPair(db: Db, userId: string, clientId: string): Promise<void> {
  await db.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${`oauth-binding:${userId}:${clientId}`}, 7242006))`);
}

export async function createBinding(db: Db, b: { userId: string; clientId: string; agentId: string }): Promise<BindingRow> {
  return db.one(sql.type(bindingRow)`
    INSERT INTO oauth_bindings AS b (user_id, client_id, agent_id) VALUES (${b.userId}, ${b.clientId}, ${b.agentId})
    RETURNING ${BINDING_COLUMNS}`);
}

export async function setBindingGrant(db: Db, bindingId: string, grantId: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE oauth_bindings SET grant_id = ${grantId}, updated_at = now() WHERE id = ${bindingId}`);
}

/** Ends the live binding of a pair; returns whether there was one. */
export async function revokeLiveBinding(db: Db, userId: string, clientId: string): Promise<boolean> {
  const r = await db.query(sql.unsafe`
    UPDATE oauth_bindings SET revoked_at = now(), updated_at = now()
    WHERE user_id = ${userId} AND client_id = ${clientId} AND revoked_at IS NULL`);
  return r.rowCount > 0;
}

export async function revokeBinding(db: Db, id: string): Promise<BindingRow | null> {
  return db.maybeOne(sql.type(bindingRow)`
    UPDATE oauth_bindings AS b SET revoked_at = now(), updated_at = now()
    WHERE b.id = ${id} AND b.revoked_at IS NULL
    RETURNING ${BINDING_COLUMNS}`);
}

export async function setSelfApprove(db: Db, id: string, enabled: boolean): Promise<BindingRow | null> {
  return db.maybeOne(sql.type(bindingRow)`
    UPDATE oauth_bindings AS b SET self_approve_enabled = ${enabled}, updated_at = now()
    WHERE b.id = ${id} AND b.revoked_at IS NULL
    RETURNING ${BINDING_COLUMNS}`);
}

export const bindingListRow = bindingRow.extend({
  agent_name: z.string(),
  agent_status: z.enum(['active', 'archived', 'revoked']),
  client_name: z.string().nullable(),
});

export const listBindings = (db: Db, filter: { userId: string } | { agentId: string }, includeRevoked: boolean) =>
  db.any(sql.type(bindingListRow)`
    SELECT ${BINDING_COLUMNS}, a.name AS agent_name, a.status AS agent_status, c.payload->>'client_name' AS client_name
    FROM oauth_bindings b
    JOIN identities a ON a.id = b.agent_id
    LEFT JOIN oidc_payloads c ON c.type = 'Client' AND c.id = b.client_id
    WHERE ${'userId' in filter ? sql.fragment`b.user_id = ${filter.userId}` : sql.fragment`b.agent_id = ${filter.agentId}`}
      ${includeRevoked ? sql.fragment`` : sql.fragment`AND b.revoked_at IS NULL`}
    ORDER BY b.created_at`);

export const selfApproveEnabled = (db: Db, q: { userId: string; clientId: string; agentId?: string | undefined }) =>
  db.maybeOneFirst(sql.type(z.object({ self_approve_enabled: z.boolean() }))`
    SELECT b.self_approve_enabled FROM oauth_bindings b
    WHERE b.user_id = ${q.userId} AND b.client_id = ${q.clientId} AND b.revoked_at IS NULL
      ${q.agentId ? sql.fragment`AND b.agent_id = ${q.agentId}` : sql.fragment``}`);

// Access-token resolution --------------------------------------------------------------------------

export const tokenPrincipalRow = z.object({
  binding_id: z.string(),
  last_used_at: z.date().nullable(),
  org_id: z.string(),
  user_id: z.string(),
  agent_id: z.string(),
  kind: z.enum(['agent', 'subagent']),
});

/**
 * The agent an access token acts as, only while everything it rests on is live: the binding of
 * (client, agent), the agent and its whole chain, the client in the org, the grant the token was
 * issued under (revoked on refresh-token reuse, revocation, unbinding), and the token itself.
 */
export const resolveTokenPrincipal = (db: Db, t: { clientId: string; agentId: string; grantId: string; jti: string }) =>
  db.maybeOne(sql.type(tokenPrincipalRow)`
    SELECT b.id AS binding_id, b.last_used_at, a.org_id, b.user_id, a.id AS agent_id, a.kind
    FROM oauth_bindings b
    JOIN identities a ON a.id = b.agent_id
    WHERE b.client_id = ${t.clientId} AND b.agent_id = ${t.agentId} AND b.revoked_at IS NULL
      AND a.kind IN ('agent', 'subagent') AND ${chainActive(sql.identifier(['a', 'id']))}
      AND NOT EXISTS (SELECT 1 FROM oauth_client_revocations r WHERE r.org_id = a.org_id AND r.client_id = b.client_id)
      AND EXISTS (
        SELECT 1 FROM oidc_payloads g
        WHERE g.type = 'Grant' AND g.id = ${t.grantId} AND (g.expires_at IS NULL OR g.expires_at > now())
          AND g.payload->>'clientId' = b.client_id AND g.payload->>'accountId' = b.user_id::text)
      AND NOT EXISTS (SELECT 1 FROM oauth_revoked_access_tokens x WHERE x.jti = ${t.jti})`);

export async function touchBinding(db: Db, id: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE oauth_bindings SET last_used_at = now() WHERE id = ${id}`);
}

export async function revokeAccessToken(db: Db, t: { jti: string; clientId: string; expiresAt: Date }): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO oauth_revoked_access_tokens (jti, client_id, expires_at)
    VALUES (${t.jti}, ${t.clientId}, ${sql.timestamp(t.expiresAt)})
    ON CONFLICT (jti) DO NOTHING`);
}

// Grants in the provider's storage -------------------------------------------------------------------

/**
 * Destroys every grant of (user, client) and every code and token issued under them, as
 * oidc-provider's own revocation does. Returns how many grants went.
 */
export async function revokeGrantsOfPair(db: Db, userId: string, clientId: string): Promise<number> {
  const grants = await db.anyFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM oidc_payloads WHERE type = 'Grant' AND payload->>'accountId' = ${userId} AND payload->>'clientId' = ${clientId}`);
  if (grants.length === 0) return 0;
  await db.query(sql.unsafe`
    DELETE FROM oidc_payloads
    WHERE (type = 'Grant' AND id = ANY(${sql.array(grants, 'text')})) OR grant_id = ANY(${sql.array(grants, 'text')})`);
  return grants.length;
}

/**
 * Revocation of agents is total: ends every live binding whose agent is one of `agentIds` and
 * destroys the grants, codes and tokens of those (user, client) pairs. Returns how many bindings.
 */
export async function revokeBindingsOfAgents(db: Db, agentIds: readonly string[]): Promise<number> {
  if (agentIds.length === 0) return 0;
  const pairs = await db.any(sql.type(z.object({ user_id: z.string(), client_id: z.string() }))`
    UPDATE oauth_bindings SET revoked_at = now(), updated_at = now()
    WHERE agent_id = ANY(${sql.array(agentIds, 'uuid')}) AND revoked_at IS NULL
    RETURNING user_id, client_id`);
  for (const pair of pairs) await revokeGrantsOfPair(db, pair.user_id, pair.client_id);
  return pairs.length;
}

// Clients ---------------------------------------------------------------------------------------

export const orgClientRow = z.object({
  client_id: z.string(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  first_bound_at: z.date(),
  live_bindings: z.number(),
  revoked_at: z.date().nullable(),
});

/** Clients that users of the org have bound (any time), with the org's revocation if any. */
export const listOrgClients = (db: Db, orgId: string) =>
  db.any(sql.type(orgClientRow)`
    SELECT b.client_id, c.payload AS metadata, min(b.created_at) AS first_bound_at,
           (count(*) FILTER (WHERE b.revoked_at IS NULL))::int AS live_bindings, r.revoked_at
    FROM oauth_bindings b
    JOIN identities u ON u.id = b.user_id
    LEFT JOIN oidc_payloads c ON c.type = 'Client' AND c.id = b.client_id
    LEFT JOIN oauth_client_revocations r ON r.org_id = u.org_id AND r.client_id = b.client_id
    WHERE u.org_id = ${orgId}
    GROUP BY b.client_id, c.payload, r.revoked_at
    ORDER BY min(b.created_at)`);

export const getClientMetadata = (db: Db, clientId: string) =>
  db.maybeOneFirst(sql.type(z.object({ payload: z.record(z.string(), z.unknown()) }))`
    SELECT payload FROM oidc_payloads WHERE type = 'Client' AND id = ${clientId}`);

export const isClientRevoked = (db: Db, orgId: string, clientId: string) =>
  db.exists(sql.type(z.object({ one: z.number() }))`
    SELECT 1 AS one FROM oauth_client_revocations WHERE org_id = ${orgId} AND client_id = ${clientId}`);

export async function revokeClientForOrg(db: Db, r: { orgId: string; clientId: string; revokedBy: string }): Promise<Date> {
  await db.query(sql.unsafe`
    INSERT INTO oauth_client_revocations (org_id, client_id, revoked_by) VALUES (${r.orgId}, ${r.clientId}, ${r.revokedBy})
    ON CONFLICT (org_id, client_id) DO NOTHING`);
  return db.oneFirst(sql.type(z.object({ revoked_at: z.date() }))`
    SELECT revoked_at FROM oauth_client_revocations WHERE org_id = ${r.orgId} AND client_id = ${r.clientId}`);
}

/** Ends the live bindings of the org's users with the client; returns their user ids. */
export const revokeOrgBindings = (db: Db, orgId: string, clientId: string) =>
  db.anyFirst(sql.type(z.object({ user_id: z.string() }))`
    UPDATE oauth_bindings b SET revoked_at = now(), updated_at = now()
    FROM identities u
    WHERE u.id = b.user_id AND u.org_id = ${orgId} AND b.client_id = ${clientId} AND b.revoked_at IS NULL
    RETURNING b.user_id`);

// Keys ------------------------------------------------------------------------------------------

export const keyRow = z.object({
  id: z.string(),
  use: z.enum(['sig', 'cookie']),
  public_jwk: z.record(z.string(), z.unknown()).nullable(),
  envelope: z.unknown(),
  created_at: z.date(),
  retired_at: z.date().nullable(),
});
export type KeyRow = z.infer<typeof keyRow>;

/** Newest first: the first live key of a use is the one that signs. */
export const listKeys = (db: Db) =>
  db.any(sql.type(keyRow)`SELECT id, use, public_jwk, envelope, created_at, retired_at FROM oauth_keys ORDER BY created_at DESC, id`);

export const publicSigningKey = (db: Db, kid: string) =>
  db.maybeOneFirst(sql.type(z.object({ public_jwk: z.record(z.string(), z.unknown()) }))`
    SELECT public_jwk FROM oauth_keys WHERE id = ${kid} AND use = 'sig' AND public_jwk IS NOT NULL`);

export async function insertKey(db: Db, k: { id: string; use: 'sig' | 'cookie'; publicJwk: Record<string, unknown> | null; envelope: object }): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO oauth_keys (id, use, public_jwk, envelope)
    VALUES (${k.id}, ${k.use}, ${k.publicJwk ? sql.jsonb(k.publicJwk as never) : null}, ${sql.jsonb(k.envelope as never)})`);
}

/** Retires every live key of a use except `keep`. */
export async function retireKeys(db: Db, use: 'sig' | 'cookie', keep: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE oauth_keys SET retired_at = now() WHERE use = ${use} AND id <> ${keep} AND retired_at IS NULL`);
}

export async function retireKey(db: Db, id: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE oauth_keys SET retired_at = now() WHERE id = ${id} AND retired_at IS NULL`);
}

/** Drops keys retired longer ago than the retention (nothing they signed is still valid). */
export async function pruneRetiredKeys(db: Db, retentionSeconds: number): Promise<number> {
  const r = await db.query(sql.unsafe`
    DELETE FROM oauth_keys WHERE retired_at IS NOT NULL AND retired_at < now() - make_interval(secs => ${retentionSeconds})`);
  return r.rowCount;
}

export async function lockKeys(db: Db): Promise<void> {
  await db.query(sql.unsafe`SELECT pg_advisory_xact_lock(7242007)`);
}

// The provider's storage (adapter.ts): every model in oidc_payloads ---------------------------------

export const payloadRow = z.object({ payload: z.record(z.string(), z.unknown()), consumed_at: z.date().nullable() });
export type PayloadRow = z.infer<typeof payloadRow>;

/** A live (unexpired) payload of a model, by id, uid or user code. */
export const findPayload = (db: Db, type: string, column: 'id' | 'uid' | 'user_code', value: string) =>
  db.maybeOne(sql.type(payloadRow)`
    SELECT payload, consumed_at FROM oidc_payloads
    WHERE type = ${type} AND ${sql.identifier([column])} = ${value} AND (expires_at IS NULL OR expires_at > now())
    LIMIT 1`);

export async function upsertPayload(
  db: Db,
  p: { type: string; id: string; payload: Record<string, unknown>; grantId: string | null; userCode: string | null; uid: string | null; expiresIn: number | undefined },
): Promise<void> {
  const expiresAt = p.expiresIn !== undefined ? sql.fragment`now() + make_interval(secs => ${p.expiresIn})` : sql.fragment`NULL`;
  await db.query(sql.unsafe`
    INSERT INTO oidc_payloads (id, type, payload, grant_id, user_code, uid, expires_at)
    VALUES (${p.id}, ${p.type}, ${sql.jsonb(p.payload as never)}, ${p.grantId},
            ${p.userCode}, ${p.uid}, ${expiresAt})
    ON CONFLICT (type, id) DO UPDATE SET
      payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id, user_code = EXCLUDED.user_code,
      uid = EXCLUDED.uid, expires_at = EXCLUDED.expires_at`);
}

/** Marks the payload consumed; false when it was already consumed (or is gone). Atomic. */
export async function consumePayload(db: Db, type: string, id: string): Promise<boolean> {
  const consumed = await db.maybeOne(sql.type(z.object({ id: z.string() }))`
    UPDATE oidc_payloads SET consumed_at = now()
    WHERE type = ${type} AND id = ${id} AND consumed_at IS NULL
    RETURNING id`);
  return consumed !== null;
}

export const payloadGrantId = (db: Db, type: string, id: string) =>
  db.maybeOneFirst(sql.type(z.object({ grant_id: z.string().nullable() }))`
    SELECT grant_id FROM oidc_payloads WHERE type = ${type} AND id = ${id}`);

/** Revokes a grant the way oidc-provider's own `revoke` helper does, across every model. */
export async function destroyGrant(db: Db, grantId: string): Promise<void> {
  await db.query(sql.unsafe`
    DELETE FROM oidc_payloads WHERE grant_id = ${grantId} OR (type = 'Grant' AND id = ${grantId})`);
}

export async function destroyPayload(db: Db, type: string, id: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM oidc_payloads WHERE type = ${type} AND id = ${id}`);
}

export async function destroyPayloadsOfGrant(db: Db, type: string, grantId: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM oidc_payloads WHERE type = ${type} AND grant_id = ${grantId}`);
}

// Housekeeping ------------------------------------------------------------------------------------

export async function purgeExpired(db: Db): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM oidc_payloads WHERE expires_at < now() - interval '1 hour'`);
  await db.query(sql.unsafe`DELETE FROM oauth_revoked_access_tokens WHERE expires_at < now() - interval '1 hour'`);
}
