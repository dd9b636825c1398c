// `gateway agents` and the names the CLI resolves read GET /v1/identities page by page (issue 46):
// a person with more agents than one page (500) still sees, and can name, every one of them.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGatewayCli, type RunOptions } from '../support/cli.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser, withPool, type SeededUser } from '../support/seed.ts';

const AGENTS = 620;

describe('the CLI over the paged identities listing', { timeout: 180_000 }, () => {
  let gw: TestGateway;
  let home: string;
  let owner: SeededUser;
  let env: RunOptions['env'];
  const cli = (args: string[], extra: Partial<RunOptions> = {}) => runGatewayCli(args, { env, ...extra });

  beforeAll(async () => {
    gw = await startTestGateway();
    home = await mkdtemp(path.join(os.tmpdir(), 'gateway-cli-pages-'));
    env = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'config') };
    owner = await seedUser(gw.databaseUrl, { email: 'many-agents@example.test' });
    // Straight into the database: the API would take minutes for this many.
    await withPool(gw.databaseUrl, (pool) =>
      pool.query(sql.unsafe`
        INSERT INTO identities (org_id, kind, parent_id, user_id, name, created_at)
        SELECT ${owner.orgId}, 'agent', ${owner.userId}, ${owner.userId}, 'bulk agent ' || n, now() - make_interval(secs => ${AGENTS} - n)
        FROM generate_series(1, ${AGENTS}::int) AS n`),
    );
    const login = await cli(['login', '--url', gw.url, '--email', owner.email], { stdin: owner.password });
    expect(login.code, login.stderr).toBe(0);
  });
  afterAll(async () => {
    await gw?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('gateway agents lists every agent, past the first page', async () => {
    const r = await cli(['agents', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const names = (JSON.parse(r.stdout) as Array<{ name: string }>).map((a) => a.name);
    expect(names).toHaveLength(AGENTS);
    expect(new Set(names).size).toBe(AGENTS);
    expect(names).toContain(`bulk agent ${AGENTS}`);
  });

  it('names an agent listed only on a later page (--parent by name)', async () => {
    const r = await cli(['agents', 'create', 'helper', '--parent', `bulk agent ${AGENTS}`, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).identity).toMatchObject({ kind: 'subagent', name: 'helper' });
  });
});
