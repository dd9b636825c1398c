// First start on an empty database: one org and its first admin. The admin's password comes from
// GATEWAY_ADMIN_PASSWORD or is generated and printed once (to stderr, never to the JSON log).
import { randomBytes } from 'node:crypto';
import type { DatabasePool } from 'slonik';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';
import { hashPassword } from '../auth/passwords.ts';
// The org and its first admin are written in one transaction, so orgs' store is used here directly.
import * as orgs from '../orgs/store.ts';
import * as store from './store.ts';

export async function bootstrapFirstAdmin(
  pool: DatabasePool,
  config: Pick<Config, 'admin'>,
  logger: Logger,
  announce: (text: string) => void = (t) => process.stderr.write(t),
): Promise<{ created: boolean }> {
  return pool.transaction(async (tx) => {
    // Two processes starting at once (api + worker) must not both create an org.
    await orgs.lockFirstStart(tx);
    if ((await orgs.countOrgs(tx)) > 0) return { created: false };
    const email = config.admin.email ?? 'admin@localhost';
    const generated = config.admin.password === undefined;
    const password = config.admin.password ?? randomBytes(18).toString('base64url');
    const org = await orgs.createOrg(tx, 'Default organisation');
    const admin = await store.createUser(tx, {
      orgId: org.id,
      name: 'Administrator',
      email,
      role: 'admin',
      passwordHash: await hashPassword(password),
      createdBy: null,
    });
    logger.info({ org_id: org.id, admin_id: admin.id, email }, 'created the first organisation and its admin');
    if (generated) {
      announce(
        `\n  First start: created admin ${email} with the generated password\n\n      ${password}\n\n` +
          `  It is shown only this once. Set GATEWAY_ADMIN_PASSWORD to choose your own.\n\n`,
      );
    }
    return { created: true };
  });
}
