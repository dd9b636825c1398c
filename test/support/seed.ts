// Direct database seeding for what has no REST endpoint (other orgs, member users).
import { createDatabasePool, type DatabasePool } from '../../server/db/pool.ts';
import { hashPassword } from '../../server/auth/passwords.ts';
import * as store from '../../server/identities/store.ts';
import { createOrg } from '../../server/orgs/store.ts';

export interface SeededUser {
  orgId: string;
  userId: string;
  email: string;
  password: string;
}

export async function withPool<T>(databaseUrl: string, fn: (pool: DatabasePool) => Promise<T>): Promise<T> {
  const pool = await createDatabasePool(databaseUrl, { maxPoolSize: 2 });
  try {
    return await fn(pool);
  } finally {
    await pool.end();
  }
}

export async function seedUser(
  databaseUrl: string,
  opts: { orgId?: string; email: string; role?: 'admin' | 'member' | 'approver'; password?: string },
): Promise<SeededUser> {
  const password = opts.password ?? 'a perfectly fine password';
  return withPool(databaseUrl, async (pool) => {
    const orgId = opts.orgId ?? (await createOrg(pool, `org for ${opts.email}`)).id;
    const user = await store.createUser(pool, {
      orgId,
      name: opts.email.split('@')[0]!,
      email: opts.email,
      role: opts.role ?? 'member',
      passwordHash: await hashPassword(password),
      createdBy: null,
    });
    return { orgId, userId: user.id, email: opts.email, password };
  });
}
