// Test databases as copies of one migrated template. Applying the ~40 migrations costs a test
// gateway's start ~0.3 s of CPU (most of it PostgreSQL's), and the integration run starts a few
// hundred databases; `CREATE DATABASE … TEMPLATE` copies the migrated files instead. The gateway
// still runs `migrate()` on start, which then finds every migration applied (checksums compared),
// so a migration changed since the template was made still stops it, as in production.
import pg from 'pg';
import { migrate } from '../../server/db/migrate.ts';
import { ensureDatabase } from '../../server/embedded/embedded-postgres.ts';

/** The URL of `database` on the server `adminUrl` points at. */
export const urlOf = (adminUrl: string, database: string) => adminUrl.replace(/\/[^/]*$/, `/${database}`);

async function withAdmin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Makes `template` with every migration applied, closed to connections (a copy needs it unused). */
export async function createMigratedTemplate(adminUrl: string, template: string): Promise<void> {
  await ensureDatabase(adminUrl, template);
  await migrate(urlOf(adminUrl, template));
  await withAdmin(adminUrl, (c) => c.query(`ALTER DATABASE ${c.escapeIdentifier(template)} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`));
}

/** A new database `name`, a copy of `template`: its URL. */
export async function cloneTemplate(adminUrl: string, template: string, name: string): Promise<string> {
  await withAdmin(adminUrl, async (c) => {
    // Refused while another session is in the template (none connects to it; autovacuum may, briefly).
    for (let attempt = 1; ; attempt++) {
      try {
        await c.query(`CREATE DATABASE ${c.escapeIdentifier(name)} TEMPLATE ${c.escapeIdentifier(template)}`);
        return;
      } catch (err) {
        if (!/is being accessed by other users/.test((err as Error).message) || attempt >= 50) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });
  return urlOf(adminUrl, name);
}
