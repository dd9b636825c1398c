// Who is signed in, loaded once by the shell; pages read it. A 401 anywhere sends the browser to
// sign-in with the current location as `next`, so deep links (an approval_url) come back.
import { goto } from '$app/navigation';
import { me, sessionLost, type Me } from './api.ts';

class Session {
  me = $state<Me | null>(null);
  loaded = $state(false);

  async load(): Promise<Me | null> {
    try {
      this.me = await me();
    } catch (err) {
      if (!sessionLost(err)) throw err;
      this.me = null;
    }
    this.loaded = true;
    return this.me;
  }

  get isAdmin(): boolean {
    return this.me?.identity.role === 'admin';
  }
}

export const session = new Session();

/** Where sign-in sends the browser back to: same-origin paths only. */
export function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/signin') ? next : '/approvals';
}

export function toSignIn(): Promise<void> {
  const here = `${location.pathname}${location.search}`;
  return goto(`/signin?next=${encodeURIComponent(here)}`, { replaceState: true });
}

/** Runs an API call; a lost session goes to sign-in instead of surfacing as an error. */
export async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (sessionLost(err)) {
      session.me = null;
      session.loaded = false;
      await toSignIn();
    }
    throw err;
  }
}
