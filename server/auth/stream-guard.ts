// Long-lived streams (the agents' GET /mcp, the people's GET /v1/events) end when the credential
// that opened them ends: an identity revoked, a key or session revoked, signing out, an OAuth grant
// or token revoked; and, for a stream that asks, when the principal no longer stands as it did
// (a person's role changed). Every such change is announced on one PostgreSQL channel by triggers
// (migrations 0013, 0033), on whatever replica or code path it happened, naming whom it concerns
// (an identity, an org, or everyone); each process LISTENs (one connection, listener.ts) and
// re-authenticates the credentials of the open streams it can end — a stream of that identity or
// of anyone below it, a few at a time — ending those that no longer pass. A lost listener ends
// every stream (its client reconnects and authenticates).
import { mapBounded } from '../../core/async/map-bounded.ts';
import type { ChainReader } from '../identities/readers.ts';
import type { Logger } from '../logger.ts';
import { createChannelListener } from '../events/listener.ts';
import { AppError } from '../errors.ts';
import type { Principal } from './principal.ts';
import type { AcceptedKinds, AuthService } from './service.ts';

export const CREDENTIALS_CHANNEL = 'gateway_credentials';

export interface StreamGuard {
  /**
   * Ends the stream (`end`) once `token` no longer authenticates, or once the principal it
   * authenticates as fails `standing`; resolves to the unwatch. `principal`: whom the token
   * authenticated as when the stream opened (which changes concern it).
   */
  watch(token: string, accept: AcceptedKinds, end: () => void, principal: Principal, standing?: (p: Principal) => boolean): Promise<() => void>;
}

interface Watched {
  token: string;
  accept: AcceptedKinds;
  end: () => void;
  standing?: ((p: Principal) => boolean) | undefined;
  onLost: () => void;
  orgId: string;
  /** The stream's identity and those above it: a change to any of them can end it. */
  chain: ReadonlySet<string>;
}

/** Whom a change concerns, from its notification: `identity:<id>`, `org:<id>`, or everyone. */
export type CredentialTarget = { identity: string } | { org: string } | 'everyone';

export function credentialTarget(payload: string | undefined): CredentialTarget {
  const [kind, id] = (payload ?? '').split(':', 2);
  if (kind === 'identity' && id) return { identity: id };
  if (kind === 'org' && id) return { org: id };
  return 'everyone';
}

/** Whether a change to `target` can end a stream of `org` whose identity and those above it are `chain`. */
export const concernsStream = (target: CredentialTarget, w: { orgId: string; chain: ReadonlySet<string> }): boolean =>
  target === 'everyone' ? true : 'org' in target ? w.orgId === target.org : w.chain.has(target.identity);

/** How many re-authentications run at once: a change that concerns many streams leaves the pool to the calls. */
const RECHECK_CONCURRENCY = 4;

export function createStreamGuard(deps: { connectionUri: string; logger: Logger; auth: Pick<AuthService, 'authenticate'>; chains: ChainReader }): StreamGuard {
  let pending: NodeJS.Timeout | null = null;
  const due = new Set<Watched>();

  /** Several changes in one burst (a subtree revoked) are one re-check of the streams they concern. */
  const recheckSoon = (target: CredentialTarget, subscribers: ReadonlySet<Watched>) => {
    for (const w of subscribers) if (concernsStream(target, w)) due.add(w);
    if (pending || due.size === 0) return;
    pending = setTimeout(() => {
      pending = null;
      const batch = [...due];
      due.clear();
      void mapBounded(batch, RECHECK_CONCURRENCY, recheck);
    }, 50);
  };

  async function recheck(w: Watched): Promise<void> {
    try {
      const { principal: p } = await deps.auth.authenticate(w.token, w.accept);
      if (w.standing && !w.standing(p)) w.end();
    } catch (err) {
      // Only a refused credential ends the stream; a database blip leaves it to the next change.
      if (err instanceof AppError && err.code === 'unauthenticated') w.end();
      else deps.logger.warn({ err: (err as Error).message }, 'could not re-check a stream credential');
    }
  }

  const listener = createChannelListener<Watched>({ connectionUri: deps.connectionUri, logger: deps.logger, channel: CREDENTIALS_CHANNEL, what: 'credential' }, (payload, subscribers) =>
    recheckSoon(credentialTarget(payload), subscribers),
  );
  return {
    async watch(token, accept, end, principal, standing) {
      // A person's stream is theirs alone; an agent's ends with any identity above it too.
      const chain = principal.type === 'user' ? [principal.identityId] : (await deps.chains.getChain(principal.identityId)).map((c) => c.id);
      return listener.subscribe({ token, accept, end, standing, onLost: end, orgId: principal.orgId, chain: new Set([principal.identityId, ...chain]) });
    },
  };
}
