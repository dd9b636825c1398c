// One process of a deployment does a piece of background work: whoever holds a PostgreSQL session
// advisory lock on its own connection (a pooled connection would hand the lock to others). The
// lock goes with the session, so a process that dies or loses its connection lets another take it.
import pg from 'pg';

export interface LeaderLock {
  /** True while this process holds the lock; tries to take it when it does not. Never throws. */
  hold(): Promise<boolean>;
  release(): Promise<void>;
}

export function leaderLock(databaseUrl: string, key: bigint, onError: (err: unknown) => void): LeaderLock {
  let client: pg.Client | null = null;
  let held = false;

  const drop = (c: pg.Client) => {
    if (client !== c) return;
    client = null;
    held = false;
    void c.end().catch(() => undefined);
  };

  return {
    async hold() {
      if (held && client) return true;
      try {
        if (!client) {
          const c = new pg.Client({ connectionString: databaseUrl });
          c.on('error', (err) => {
            onError(err);
            drop(c);
          });
          client = c;
          await c.connect();
        }
        const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [key.toString()]);
        held = rows[0]?.ok === true;
      } catch (err) {
        onError(err);
        if (client) drop(client);
      }
      return held;
    },
    async release() {
      const c = client;
      client = null;
      held = false;
      await c?.end().catch(() => undefined); // closing the session releases the lock
    },
  };
}
