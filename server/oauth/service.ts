// Managing what the authorization server handed out: org admins see and revoke the registered
// clients their users bound; people see and revoke their own bindings and decide whether the
// bound agent may approve its own requests. Each method: authorize → load/validate → write.
import { notifyToolsListChanged } from '../events/agent-events.ts';
import type { DatabasePool } from 'slonik';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { forbidden, notFound } from '../errors.ts';
import * as store from './store.ts';

function publicClient(row: { client_id: string; metadata: Record<string, unknown> | null }) {
  const m = row.metadata ?? {};
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  const issuedAt = typeof m.client_id_issued_at === 'number' ? new Date(m.client_id_issued_at * 1000).toISOString() : null;
  return {
    client_id: row.client_id,
    client_name: str(m.client_name),
    software_id: str(m.software_id),
    software_version: str(m.software_version),
    redirect_uris: Array.isArray(m.redirect_uris) ? m.redirect_uris.filter((u): u is string => typeof u === 'string') : [],
    application_type: str(m.application_type),
    created_at: issuedAt,
  };
}

function publicBinding(b: store.BindingRow & { agent_name?: string; agent_status?: string; client_name?: string | null }) {
  return {
    id: b.id,
    client_id: b.client_id,
    ...(b.client_name !== undefined ? { client_name: b.client_name } : {}),
    user_id: b.user_id,
    agent_id: b.agent_id,
    ...(b.agent_name !== undefined ? { agent: { id: b.agent_id, name: b.agent_name, status: b.agent_status } } : {}),
    self_approve_enabled: b.self_approve_enabled,
    created_at: b.created_at.toISOString(),
    revoked_at: b.revoked_at?.toISOString() ?? null,
    last_used_at: b.last_used_at?.toISOString() ?? null,
  };
}

/** The binding's flag for (user, client[, agent]); see `selfApproveEnabled` below. */
export async function isSelfApproveEnabled(pool: DatabasePool, q: { userId: string; clientId: string; agentId?: string }): Promise<boolean> {
  return (await store.selfApproveEnabled(pool, q)) === true;
}

export function createOAuthService(deps: { pool: DatabasePool }) {
  const { pool } = deps;

  /**
   * Whether the human behind an MCP connection let its agent approve its own requests. Read on
   * every call (never cached), so turning it off or revoking the binding takes effect at once.
   */
  async function selfApproveEnabled(p: Principal): Promise<boolean> {
    if (p.type !== 'agent' || p.via !== 'oauth') return false;
    return isSelfApproveEnabled(pool, { userId: p.userId, clientId: p.credentialId, agentId: p.identityId });
  }

  /** The binding if the principal may see it: its user, or the agent it binds; 404 otherwise. */
  async function loadVisibleBinding(p: Principal, id: string): Promise<store.BindingRow> {
    const b = await store.getBinding(pool, id);
    if (!b) throw notFound('binding');
    const mine = p.type === 'user' ? b.user_id === p.userId : b.agent_id === p.identityId;
    if (!mine) throw notFound('binding');
    return b;
  }

  return {
    selfApproveEnabled,
    async listClients(p: Principal) {
      if (!isAdmin(p)) throw forbidden('only org admins may list OAuth clients');
      const rows = await store.listOrgClients(pool, p.orgId);
      return rows.map((r) => ({
        ...publicClient(r),
        first_bound_at: r.first_bound_at.toISOString(),
        live_bindings: r.live_bindings,
        revoked: r.revoked_at !== null,
        revoked_at: r.revoked_at?.toISOString() ?? null,
      }));
    },

    /**
     * Revokes the client for the admin's org: its bindings end, its grants, codes and refresh
     * tokens are destroyed, and its access tokens stop verifying at once. Idempotent.
     */
    async revokeClient(p: Principal, clientId: string) {
      if (!isAdmin(p)) throw forbidden('only org admins may revoke OAuth clients');
      const metadata = await store.getClientMetadata(pool, clientId);
      if (!metadata) throw notFound('OAuth client');
      return pool.transaction(async (tx) => {
        const revokedAt = await store.revokeClientForOrg(tx, { orgId: p.orgId, clientId, revokedBy: p.identityId });
        const users = await store.revokeOrgBindings(tx, p.orgId, clientId);
        for (const userId of new Set(users)) await store.revokeGrantsOfPair(tx, userId, clientId);
        return { ...publicClient({ client_id: clientId, metadata }), revoked: true, revoked_at: revokedAt.toISOString(), revoked_bindings: users.length };
      });
    },

    async listBindings(p: Principal, includeRevoked: boolean) {
      const filter = p.type === 'user' ? { userId: p.userId } : { agentId: p.identityId };
      return (await store.listBindings(pool, filter, includeRevoked)).map(publicBinding);
    },

    /** Ends a binding: its tokens stop working, and the next authorization asks for consent. */
    async revokeBinding(p: Principal, id: string) {
      const b = await loadVisibleBinding(p, id);
      return pool.transaction(async (tx) => {
        await store.lockPair(tx, b.user_id, b.client_id);
        const revoked = await store.revokeBinding(tx, b.id);
        if (!revoked) return publicBinding(b); // already revoked: nothing more to do
        await store.revokeGrantsOfPair(tx, b.user_id, b.client_id);
        return publicBinding(revoked);
      });
    },

    /** Humans only: an agent can never grant itself self-approval. */
    async setSelfApprove(p: Principal, id: string, enabled: boolean) {
      if (p.type !== 'user') throw forbidden('only the person who owns the connection may change self-approval');
      const b = await loadVisibleBinding(p, id);
      const updated = await store.setSelfApprove(pool, b.id, enabled);
      if (!updated) throw notFound('live binding');
      // tools.listChanged is declared: the agent's streams learn that gateway_approve_self came or went.
      if (updated.self_approve_enabled !== b.self_approve_enabled) await notifyToolsListChanged(pool, updated.agent_id);
      return publicBinding(updated);
    },
  };
}

export type OAuthService = ReturnType<typeof createOAuthService>;
