// What other features may read of identities: the store's reads bound to the pool, built once by
// the composition root (server/services.ts) and handed to each consumer narrowed to what it uses
// (`Pick<IdentityReader, …>`), so no module outside this folder needs the store itself. No
// authorization here: each consumer has decided who may see what before it reads.
import type { DatabasePool } from 'slonik';
import * as store from './store.ts';

export type { AgentKeyWithChain, ChainLink, IdentityRow, RideAlongRead } from './store.ts';
export { toChainIdentity } from './store.ts';

export function createIdentityReader(pool: DatabasePool) {
  return {
    getIdentity: (id: string) => store.getIdentity(pool, id),
    /** The identity and its ancestors, requester first, the user last. */
    getChain: (id: string) => store.getChain(pool, id),
    listOrgIdentities: (orgId: string) => store.listOrgIdentities(pool, orgId),
    /** The chains of `ids` in the org and their live rules that a check of `keys` can need. */
    chainsWithRules: (orgId: string, ids: readonly string[], keys: readonly string[]) => store.chainsWithRules(pool, orgId, ids, keys),
    /** Sign-in: the user with its password hash. */
    getUserByEmail: (email: string) => store.getUserByEmail(pool, email),
    /** Authentication: a live agent key with its chain and the org's approval settings (and what rides along). */
    findAgentKeyWithChain: (tokenHash: Buffer, alongside?: store.RideAlongRead) => store.findAgentKeyWithChain(pool, tokenHash, alongside),
    /** The one write authentication makes: when a key was last used. */
    touchAgentKey: (keyId: string) => store.touchAgentKey(pool, keyId),
  };
}

export type IdentityReader = ReturnType<typeof createIdentityReader>;

/** The chain of an identity: what an authority check over it needs. */
export type ChainReader = Pick<IdentityReader, 'getChain'>;
