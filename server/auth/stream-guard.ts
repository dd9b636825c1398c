// Long-lived streams (the agents' GET /mcp, the people's GET /v1/events) end when the credential
// that opened them ends: an identity revoked, a key or session revoked, signing out, an OAuth grant
// or token revoked; and, for a stream that asks, when the principal no longer stands as it did
// (a person's role changed). Every such change is announced on one PostgreSQL channel by triggers
// (migration 0013), on whatever replica or code path it happened; each process LISTENs (one
// connection, listener.ts) and re-authenticates the credentials of its open streams, ending those
// that no longer pass. A lost listener ends every stream (its client reconnects and authenticates).
import type { Logger } from '../logger.ts';
import { createChannelListener } from '../events/listener.ts';
import { AppError } from '../errors.ts';
import type { Principal } from './principal.ts';
import type { AcceptedKinds, AuthService } from './service.ts';

export const CREDENTIALS_CHANNEL = 'gateway_credentials';

export interface StreamGuard {
  /**
   * Ends the stream (`end`) once `token` no longer authenticates, or once the principal it
   * authenticates as fails `standing`; resolves to the unwatch.
   */
  watch(token: string, accept: AcceptedKinds, end: () => void, standing?: (p: Principal) => boolean): Promise<() => void>;
}

interface Watched {
  token: string;
  accept: AcceptedKinds;
  end: () => void;
  standing?: ((p: Principal) => boolean) | undefined;
  onLost: () => void;
}

export function createStreamGuard(deps: { connectionUri: string; logger: Logger; auth: Pick<AuthService, 'authenticate'> }): StreamGuard {
  let pending: NodeJS.Timeout | null = null;

  /** Several changes in one burst (a subtree revoked) are one re-check. */
  const recheckSoon = (subscribers: ReadonlySet<Watched>) => {
    if (pending) return;
    pending = setTimeout(() => {
      pending = null;
      for (const w of subscribers) void recheck(w);
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

  const listener = createChannelListener<Watched>({ connectionUri: deps.connectionUri, logger: deps.logger, channel: CREDENTIALS_CHANNEL, what: 'credential' }, (_payload, subscribers) =>
    recheckSoon(subscribers),
  );
  return {
    watch: (token, accept, end, standing) => listener.subscribe({ token, accept, end, standing, onLost: end }),
  };
}
