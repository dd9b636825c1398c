// What authenticating an agent key already read — the identity chain and the org's approval
// settings — kept for the rest of that request only, so the call path does not read it again.
// Keyed by the Principal object the middleware created: it lives as long as the request, and a
// derived principal (a spread copy) never inherits it.
import type { AgentKeyWithChain } from '../identities/readers.ts';
import type { Principal } from './principal.ts';

/** The chain (the principal's identity first, its user last; every member active when read) and the org's approval settings. */
export type RequestChain = Pick<AgentKeyWithChain, 'chain' | 'org'>;

const chains = new WeakMap<Principal, RequestChain>();

export function attachRequestChain(p: Principal, chain: RequestChain): void {
  chains.set(p, chain);
}

export function requestChainOf(p: Principal): RequestChain | undefined {
  return chains.get(p);
}
