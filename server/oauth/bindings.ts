// The (user, client) → agent binding and the provider grant behind it. A pair is bound at first
// consent; later authorizations of the pair reuse the binding (consent skipped) for as long as its
// agent and chain are active and the org has not revoked the client. A binding whose agent was
// archived, revoked or removed is ended here, so the next authorization shows consent again
// instead of failing.
import type { Grant, Provider } from 'oidc-provider';
import type { DatabasePool } from 'slonik';
// Binding a new agent creates it in the same transaction as the binding (and under the same lock
// on its parent's child names as every other agent creation), so identities' store is used here.
import * as identities from '../identities/store.ts';
import * as store from './store.ts';

export const MCP_SCOPE = 'mcp';

export type UsableBinding = store.BindingStateRow;

/**
 * The usable binding of the pair, or null. A live binding whose agent chain is no longer active is
 * ended (with its grants), which is what brings consent back.
 */
export async function usableBinding(pool: DatabasePool, userId: string, clientId: string): Promise<UsableBinding | null> {
  const binding = await store.findLiveBinding(pool, userId, clientId);
  if (!binding) return null;
  if (store.isUsable(binding)) return binding;
  if (!binding.chain_active || binding.agent_kind === 'user') await unbind(pool, userId, clientId);
  return null;
}

/** Ends the pair's live binding and destroys its grants, codes and tokens. */
export async function unbind(pool: DatabasePool, userId: string, clientId: string): Promise<void> {
  await pool.transaction(async (tx) => {
    await store.lockPair(tx, userId, clientId);
    await store.revokeLiveBinding(tx, userId, clientId);
    await store.revokeGrantsOfPair(tx, userId, clientId);
  });
}

export interface GrantRequest {
  /** Resource indicators of the request (each gets the MCP scope). */
  resources: readonly string[];
  /** The provider's own (OIDC-level) scopes the request asked for, so the grant covers them. */
  oidcScopes: readonly string[];
}

/**
 * The grant backing a usable binding, covering the request: the binding's own grant when it still
 * exists, else a new one recorded on the binding.
 */
export async function grantForBinding(provider: Provider, pool: DatabasePool, binding: UsableBinding, req: GrantRequest): Promise<Grant> {
  let grant = binding.grant_id ? await provider.Grant.find(binding.grant_id) : undefined;
  if (!grant || grant.accountId !== binding.user_id || grant.clientId !== binding.client_id) {
    grant = new provider.Grant({ accountId: binding.user_id, clientId: binding.client_id });
  }
  for (const resource of req.resources) grant.addResourceScope(resource, MCP_SCOPE);
  for (const scope of req.oidcScopes) grant.addOIDCScope(scope);
  const grantId = await grant.save();
  if (grantId !== binding.grant_id) await store.setBindingGrant(pool, binding.id, grantId);
  return grant;
}

export type AgentChoice = { agentId: string } | { newAgentName: string };

export class BindingError extends Error {
  override name = 'BindingError';
}

/**
 * Binds the pair to an existing agent of the user or to a new one, ending any earlier binding of
 * the pair (and its grants). Returns the new binding.
 */
export async function bindAgent(pool: DatabasePool, b: { userId: string; clientId: string; choice: AgentChoice }): Promise<UsableBinding> {
  await pool.transaction(async (tx) => {
    await store.lockPair(tx, b.userId, b.clientId);
    const user = await identities.getIdentity(tx, b.userId);
    if (!user || user.kind !== 'user' || user.status !== 'active') throw new BindingError('your account is not active');
    let agentId: string;
    if ('agentId' in b.choice) {
      const agent = await identities.getIdentity(tx, b.choice.agentId);
      if (!agent || agent.kind !== 'agent' || agent.parent_id !== user.id || agent.status !== 'active') {
        throw new BindingError('choose one of your active agents');
      }
      agentId = agent.id;
    } else {
      // A person's agents have distinct names (as when created in the dashboard): a chain read as
      // names ("dana › claude") always means one identity.
      await identities.lockChildNames(tx, user.id);
      const taken = await identities.activeChildNamed(tx, user.id, b.choice.newAgentName, null);
      if (taken) throw new BindingError(`you already have an agent named "${taken.name}": choose it above, or give the new one another name`);
      const agent = await identities.createAgent(tx, {
        orgId: user.org_id,
        parent: user,
        name: b.choice.newAgentName,
        inheritPermissions: false,
        autoCallOnApprove: true,
        createdBy: user.id,
      });
      agentId = agent.id;
    }
    await store.revokeLiveBinding(tx, b.userId, b.clientId);
    await store.revokeGrantsOfPair(tx, b.userId, b.clientId);
    await store.createBinding(tx, { userId: b.userId, clientId: b.clientId, agentId });
  });
  const binding = await store.findLiveBinding(pool, b.userId, b.clientId);
  if (!binding || !store.isUsable(binding)) throw new BindingError('the binding could not be made');
  return binding;
}

/** The user's agents that can be picked at consent: direct children, active. */
export async function pickableAgents(pool: DatabasePool, userId: string) {
  const tree = await identities.getSubtree(pool, userId);
  return tree.filter((i) => i.kind === 'agent' && i.parent_id === userId && i.status === 'active');
}

/**
 * What the sign-in and consent pages (interactions.ts) may do, bound to the pool: they reach no
 * store themselves.
 */
export function createConsentBindings(pool: DatabasePool) {
  return {
    clientRevoked: (orgId: string, clientId: string) => store.isClientRevoked(pool, orgId, clientId),
    usable: (userId: string, clientId: string) => usableBinding(pool, userId, clientId),
    bind: (b: { userId: string; clientId: string; choice: AgentChoice }) => bindAgent(pool, b),
    grant: (provider: Provider, binding: UsableBinding, req: GrantRequest) => grantForBinding(provider, pool, binding, req),
    /** What the consent form offers the user: the agents it may pick, and the address it is signed in as. */
    async choices(userId: string): Promise<{ agents: Awaited<ReturnType<typeof pickableAgents>>; email: string }> {
      const [agents, me] = await Promise.all([pickableAgents(pool, userId), identities.getIdentity(pool, userId)]);
      return { agents, email: me?.email ?? '' };
    },
  };
}

export type ConsentBindings = ReturnType<typeof createConsentBindings>;
