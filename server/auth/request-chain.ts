// What authenticating an agent key already read — the identity chain and the org's approval
// settings — kept for the rest of that request only, so the call path does not read it again.
// Keyed by the Principal object the middleware created: it lives as long as the request, and a
// derived principal (a spread copy) never inherits it.
import type { IdentityRow, OrgRow } from '../identities/store.ts';
import type { Principal } from './principal.ts';

export interface RequestChain {
  /** The principal's identity first, its user last; every member active when read. */
  chain: IdentityRow[];
  org: Pick<OrgRow, 'approval_ttl_seconds' | 'approval_auto_bubble_seconds' | 'max_pending_per_agent'>;
}

const chains = new WeakMap<Principal, RequestChain>();

export function attachRequestChain(p: Principal, chain: RequestChain): void {
  chains.set(p, chain);
}

export function requestChainOf(p: Principal): RequestChain | undefined {
  return chains.get(p);
}
