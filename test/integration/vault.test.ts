import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql, type DatabasePool } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { deriveKekId, secretAad, VaultDecryptError, type Envelope } from '../../core/vault/envelope.ts';
import type { UserPrincipal } from '../../server/auth/principal.ts';
import { createDatabasePool } from '../../server/db/pool.ts';
import { migrate } from '../../server/db/migrate.ts';
import { createVaultKeyring, type VaultKeyring } from '../../server/vault/keyring.ts';
import { rotateMasterKey, VaultRotationError } from '../../server/vault/rotate.ts';
import { createVaultService } from '../../server/vault/service.ts';
import { createTestDatabase, startTestGateway, type TestGateway, type TestResponse } from '../support/gateway.ts';
import { seedUser, type SeededUser } from '../support/seed.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..', '..');

const versionRow = z.object({ version: z.number(), envelope: z.any(), kek_id: z.string() });

async function countRows(pool: DatabasePool): Promise<{ secrets: number; versions: number }> {
  return pool.one(sql.type(z.object({ secrets: z.number(), versions: z.number() }))`
    SELECT (SELECT count(*) FROM secrets)::int AS secrets, (SELECT count(*) FROM secret_versions)::int AS versions`);
}

/** Every row of every table in schema public, as text. */
async function dumpDatabase(pool: DatabasePool): Promise<string[]> {
  const tables = await pool.anyFirst(sql.type(z.object({ table_name: z.string() }))`
    SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`);
  expect(tables).toEqual(expect.arrayContaining(['secrets', 'secret_versions', 'connections', 'identities']));
  const rows: string[] = [];
  for (const table of tables) {
    rows.push(...(await pool.anyFirst(sql.type(z.object({ row: z.string() }))`SELECT t::text AS row FROM ${sql.identifier(['public', table])} t`)));
  }
  return rows;
}

describe('vault REST API (real PostgreSQL)', () => {
  let gw: TestGateway;
  let orgId: string;
  let member: SeededUser;
  let outsider: SeededUser;
  let tokens: { admin: string; member: string; outsider: string; agent: string };
  let vault: ReturnType<typeof createVaultService>;
  /** Every response body seen in this file, for the leak test. */
  const bodies: string[] = [];

  const as = (token: string) => async (method: string, p: string, body?: unknown): Promise<TestResponse> => {
    const res = await gw.as(token)(method, p, body);
    bodies.push(res.text);
    return res;
  };

  beforeAll(async () => {
    gw = await startTestGateway();
    orgId = (await gw.as(gw.adminToken)('GET', '/v1/identities/me')).body.org.id;
    member = await seedUser(gw.databaseUrl, { orgId, email: 'vault-member@example.test' });
    outsider = await seedUser(gw.databaseUrl, { email: 'other-org-admin@example.test', role: 'admin' });
    const agent = await gw.as(gw.adminToken)('POST', '/v1/identities/agents', { name: 'vault-probe' });
    expect(agent.status).toBe(201);
    tokens = {
      admin: gw.adminToken,
      member: await gw.login(member.email, member.password),
      outsider: await gw.login(outsider.email, outsider.password),
      agent: agent.body.key.token,
    };
    // The executor's view of the same vault (same database, same master key).
    vault = createVaultService({ pool: gw.pool, keyring: createVaultKeyring(gw.config.masterKey!) });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('creates, rotates, lists, restores, deletes and reuses a name', async () => {
    const admin = as(tokens.admin);
    const created = await admin('POST', '/v1/secrets', { name: 'stripe.api-key', value: 'v1-plain', description: 'Stripe live key' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'stripe.api-key', description: 'Stripe live key', current_version: 1 });
    expect(Object.keys(created.body).sort()).toEqual(['allowed_hosts', 'created_at', 'created_by', 'current_version', 'description', 'id', 'name', 'owner_id', 'scope', 'updated_at']);
    const id: string = created.body.id;

    const rotated = await admin('POST', '/v1/secrets', { name: 'stripe.api-key', value: 'v2-plain' });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ id, current_version: 2, description: 'Stripe live key' });
    expect(await vault.resolveSecretValue(orgId, 'stripe.api-key')).toBe('v2-plain');

    const list = await admin('GET', '/v1/secrets');
    expect(list.status).toBe(200);
    expect(list.body.secrets).toContainEqual(expect.objectContaining({ id, name: 'stripe.api-key', current_version: 2 }));
    expect((await admin('GET', `/v1/secrets/${id}`)).body).toMatchObject({ id, current_version: 2 });

    const versions = await admin('GET', `/v1/secrets/${id}/versions`);
    expect(versions.status).toBe(200);
    expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(versions.body.versions[0]).toMatchObject({ restored_from: null, kek_id: deriveKekId(gw.config.masterKey!) });
    expect(Object.keys(versions.body.versions[0]).sort()).toEqual(['created_at', 'created_by', 'kek_id', 'restored_from', 'version']);

    const restored = await admin('POST', `/v1/secrets/${id}/versions/1/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ id, current_version: 3 });
    expect((await admin('GET', `/v1/secrets/${id}/versions`)).body.versions[0]).toMatchObject({ version: 3, restored_from: 1 });
    expect(await vault.resolveSecretValue(orgId, 'stripe.api-key')).toBe('v1-plain');
    expect((await admin('POST', `/v1/secrets/${id}/versions/9/restore`)).status).toBe(404);

    expect((await admin('DELETE', `/v1/secrets/${id}`)).status).toBe(204);
    expect((await admin('GET', `/v1/secrets/${id}`)).status).toBe(404);
    expect((await admin('GET', `/v1/secrets/${id}/versions`)).status).toBe(404);
    expect((await admin('POST', `/v1/secrets/${id}/versions/1/restore`)).status).toBe(404);
    expect((await admin('DELETE', `/v1/secrets/${id}`)).status).toBe(404);
    expect((await admin('GET', '/v1/secrets')).body.secrets.map((s: { id: string }) => s.id)).not.toContain(id);
    expect(await vault.resolveSecretValue(orgId, 'stripe.api-key')).toBeNull();

    const reused = await admin('POST', '/v1/secrets', { name: 'stripe.api-key', value: 'fresh' });
    expect(reused.status).toBe(201);
    expect(reused.body.id).not.toBe(id);
    expect(reused.body.current_version).toBe(1);
    expect(await vault.resolveSecretValue(orgId, 'stripe.api-key')).toBe('fresh');
  });

  it('lets members of the org use the shared vault, never read values back', async () => {
    const adminMade = await as(tokens.admin)('POST', '/v1/secrets', { name: 'shared-by-admin', value: 'x' });
    const m = as(tokens.member);
    const mine = await m('POST', '/v1/secrets', { name: 'member-made', value: 'member value' });
    expect(mine.status).toBe(201);
    expect(mine.body.created_by).toBe(member.userId);
    expect((await m('GET', '/v1/secrets')).body.secrets.map((s: { name: string }) => s.name)).toEqual(
      expect.arrayContaining(['shared-by-admin', 'member-made']),
    );
    // Changing an org secret is an admin's act (issue 25): a member's rotation is refused, nothing changes.
    const rotated = await m('POST', '/v1/secrets', { name: 'shared-by-admin', value: 'y' });
    expect(rotated.status).toBe(403);
    expect(rotated.body.error.message).toContain('only an org admin');
    expect((await m('GET', `/v1/secrets/${adminMade.body.id}/versions`)).body.versions).toHaveLength(1);
    // Their own org secret too: once it exists it is the organisation's, changed by admins.
    expect((await m('POST', '/v1/secrets', { name: 'member-made', value: 'again' })).status).toBe(403);
  });

  it('rejects bad input with 400 invalid_request and stores nothing', async () => {
    const admin = as(tokens.admin);
    const before = await countRows(gw.pool);
    const cases: unknown[] = [
      { name: 'ok-name', value: 'v', extra: true },
      { name: 'has space', value: 'v' },
      { name: 'slash/name', value: 'v' },
      { name: '', value: 'v' },
      { name: 'n'.repeat(129), value: 'v' },
      { name: 'ok-name', value: '' },
      { name: 'ok-name', value: 'x'.repeat(64 * 1024 + 1) },
      { name: 'ok-name', value: 'é'.repeat(32 * 1024 + 1) }, // under 64 Ki characters, over 64 KiB
      { name: 'ok-name' },
      { name: 'ok-name', value: 42 },
      { name: 'ok-name', value: 'v', description: 'd'.repeat(1001) },
      ['not', 'an', 'object'],
    ];
    for (const body of cases) {
      const res = await admin('POST', '/v1/secrets', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    expect((await admin('GET', '/v1/secrets/not-a-uuid')).status).toBe(400);
    expect(await countRows(gw.pool)).toEqual(before);

    const max = await admin('POST', '/v1/secrets', { name: 'exactly-64k', value: 'x'.repeat(64 * 1024) });
    expect(max.status).toBe(201);
  });

  it('answers 403 forbidden to agents on every vault endpoint', async () => {
    const target = await as(tokens.admin)('POST', '/v1/secrets', { name: 'agents-cannot-touch', value: 'x' });
    const id: string = target.body.id;
    const agent = as(tokens.agent);
    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/v1/secrets'],
      ['POST', '/v1/secrets', { name: 'from-agent', value: 'x' }],
      ['POST', '/v1/secrets', { name: 'agents-cannot-touch', value: 'x' }],
      ['POST', '/v1/secrets', { bogus: true }],
      ['GET', `/v1/secrets/${id}`],
      ['GET', '/v1/secrets/not-a-uuid'],
      ['GET', `/v1/secrets/${id}/versions`],
      ['POST', `/v1/secrets/${id}/versions/1/restore`],
      ['DELETE', `/v1/secrets/${id}`],
    ];
    for (const [method, p, body] of calls) {
      const res = await agent(method, p, body);
      expect(res.status, `${method} ${p}`).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
    expect((await as(tokens.admin)('GET', `/v1/secrets/${id}`)).body.current_version).toBe(1);
    expect(await vault.resolveSecretValue(orgId, 'from-agent')).toBeNull();
  });

  it('isolates tenants: another org sees 404 for our ids and never lists our secrets', async () => {
    const ours = await as(tokens.admin)('POST', '/v1/secrets', { name: 'tenant-a-only', value: 'org A value' });
    const id: string = ours.body.id;
    const other = as(tokens.outsider);
    for (const [method, p] of [
      ['GET', `/v1/secrets/${id}`],
      ['GET', `/v1/secrets/${id}/versions`],
      ['POST', `/v1/secrets/${id}/versions/1/restore`],
      ['DELETE', `/v1/secrets/${id}`],
    ] as const) {
      const res = await other(method, p);
      expect(res.status, `${method} ${p}`).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect((await other('GET', '/v1/secrets')).body.secrets).toEqual([]);
    // The same name in the other org is a different secret, not a rotation of ours.
    const theirs = await other('POST', '/v1/secrets', { name: 'tenant-a-only', value: 'org B value' });
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(id);
    expect((await as(tokens.admin)('GET', `/v1/secrets/${id}`)).body.current_version).toBe(1);
    expect(await vault.resolveSecretValue(orgId, 'tenant-a-only')).toBe('org A value');
    expect(await vault.resolveSecretValue(outsider.orgId, 'tenant-a-only')).toBe('org B value');
  });

  it('never leaks a plaintext into responses, logs or any database column', async () => {
    const PLAINTEXT = 'sk_live_KNOWN_PLAINTEXT_123';
    const admin = as(tokens.admin);
    const created = await admin('POST', '/v1/secrets', { name: 'leak-probe', value: PLAINTEXT, description: 'probe' });
    expect(created.status).toBe(201);
    await admin('POST', '/v1/secrets', { name: 'leak-probe', value: `${PLAINTEXT}-v2` });
    await admin('POST', `/v1/secrets/${created.body.id}/versions/1/restore`);
    await admin('GET', '/v1/secrets');
    await admin('GET', `/v1/secrets/${created.body.id}`);
    await admin('GET', `/v1/secrets/${created.body.id}/versions`);
    // Error paths must not echo the value either.
    await admin('POST', '/v1/secrets', { name: 'leak probe', value: PLAINTEXT });
    await admin('POST', '/v1/secrets', { name: 'leak-probe', value: PLAINTEXT, unknown: PLAINTEXT });
    await admin('POST', '/v1/secrets', { name: 'leak-probe', value: PLAINTEXT + 'x'.repeat(64 * 1024) });
    bodies.push(
      (await gw.request('POST', '/v1/secrets', { body: `{"name":"leak-probe","value":"${PLAINTEXT}"`, headers: { authorization: `Bearer ${tokens.admin}` } })).text,
    );
    await as(tokens.agent)('POST', '/v1/secrets', { name: 'leak-probe', value: PLAINTEXT });
    expect(await vault.resolveSecretValue(orgId, 'leak-probe')).toBe(PLAINTEXT);

    const needles = [
      PLAINTEXT,
      Buffer.from(PLAINTEXT).toString('base64'),
      Buffer.from(PLAINTEXT).toString('base64url'),
      Buffer.from(PLAINTEXT).toString('hex'),
    ];
    const rows = await dumpDatabase(gw.pool);
    expect(rows.length).toBeGreaterThan(0);
    expect(bodies.length).toBeGreaterThan(10);
    expect(gw.logs.length).toBeGreaterThan(0);
    for (const needle of needles) {
      expect(bodies.filter((b) => b.includes(needle))).toEqual([]);
      expect(gw.logs.filter((l) => l.includes(needle))).toEqual([]);
      expect(rows.filter((r) => r.includes(needle))).toEqual([]);
    }
  });
});

describe('master-key rotation (real PostgreSQL)', () => {
  // Each test gets its own database: rotation touches every row there is.
  const pools: DatabasePool[] = [];
  afterAll(async () => {
    for (const p of pools) await p.end();
  });

  async function freshVault() {
    const databaseUrl = await createTestDatabase();
    await migrate(databaseUrl);
    const pool = await createDatabasePool(databaseUrl, { maxPoolSize: 3 });
    pools.push(pool);
    const user = await seedUser(databaseUrl, { email: 'rotator@example.test', role: 'admin' });
    const principal: UserPrincipal = { type: 'user', orgId: user.orgId, userId: user.userId, identityId: user.userId, role: 'admin', sessionId: 'n/a' };

    const seedSecrets = async (ring: VaultKeyring, prefix: string) => {
      const service = createVaultService({ pool, keyring: ring });
      const a = await service.put(principal, { name: `${prefix}-a`, value: `${prefix}-a-1` });
      await service.put(principal, { name: `${prefix}-a`, value: `${prefix}-a-2` });
      await service.restore(principal, a.secret.id, 1);
      await service.put(principal, { name: `${prefix}-b`, value: `${prefix}-b-1` });
      return a.secret.id;
    };

    const seedConnection = async (ring: VaultKeyring, name: string) => {
      const id = await pool.oneFirst(sql.type(z.object({ id: z.string() }))`
        INSERT INTO connections (org_id, owner_id, name, provider, status)
        VALUES (${user.orgId}, ${user.userId}, ${name}, 'github', 'active') RETURNING id`);
      const seal = (column: string) => sql.jsonb({ ...ring.encrypt(`${name}-${column}`, connAad(id, column)) });
      // pkce_verifier stays null: null columns are left alone.
      await pool.query(sql.unsafe`
        UPDATE connections SET access_token = ${seal('access_token')}, refresh_token = ${seal('refresh_token')} WHERE id = ${id}`);
    };

    const secretVersions = () =>
      pool.any(sql.type(versionRow.extend({ org_id: z.string(), secret_id: z.string() }))`
        SELECT s.org_id, v.secret_id, v.version, v.envelope, v.kek_id FROM secret_versions v JOIN secrets s ON s.id = v.secret_id
        ORDER BY v.secret_id, v.version`);

    const connectionEnvelopes = async () => {
      const rows = await pool.any(sql.type(z.object({ id: z.string(), access_token: z.any(), refresh_token: z.any(), pkce_verifier: z.any() }))`
        SELECT id, access_token, refresh_token, pkce_verifier FROM connections ORDER BY id`);
      return rows.flatMap((r) =>
        (['access_token', 'refresh_token', 'pkce_verifier'] as const)
          .filter((c) => r[c] !== null)
          .map((c) => ({ id: r.id, column: c, envelope: r[c] as Envelope })),
      );
    };

    return { pool, user, principal, seedSecrets, seedConnection, secretVersions, connectionEnvelopes };
  }

  const connAad = (id: string, column: string) => `connection:${id}:${column}`;

  it('re-wraps every secret version and connection envelope; only the new key opens them', async () => {
    const { pool, user, principal, seedSecrets, seedConnection, secretVersions, connectionEnvelopes } = await freshVault();
    const oldRing = createVaultKeyring(randomBytes(32));
    const secretId = await seedSecrets(oldRing, 'rot');
    await seedConnection(oldRing, 'gh-main');
    const before = await secretVersions();
    expect(before).toHaveLength(4);

    const newKey = randomBytes(32);
    const result = await rotateMasterKey(pool, oldRing, newKey);
    expect(result).toEqual({ kekId: deriveKekId(newKey), secretVersions: 4, connectionEnvelopes: 2, otherEnvelopes: 0, skipped: 0 });

    const newOnly = createVaultKeyring(newKey);
    const after = await secretVersions();
    expect(after).toHaveLength(4);
    for (const [i, v] of after.entries()) {
      expect(v.kek_id).toBe(result.kekId);
      expect(v.envelope.kekId).toBe(result.kekId);
      // Only the data key was re-wrapped: the ciphertext is byte-identical.
      expect(v.envelope.ciphertext).toBe(before[i]!.envelope.ciphertext);
      const aad = secretAad(v.org_id, v.secret_id, v.version);
      expect(newOnly.decrypt(v.envelope, aad).toString()).toMatch(/^rot-[ab]-[12]$/);
      expect(() => oldRing.decrypt(v.envelope, aad)).toThrow(VaultDecryptError);
    }
    const conns = await connectionEnvelopes();
    expect(conns).toHaveLength(2);
    for (const c of conns) {
      expect(c.envelope.kekId).toBe(result.kekId);
      expect(newOnly.decrypt(c.envelope, connAad(c.id, c.column)).toString()).toBe(`gh-main-${c.column}`);
      expect(() => oldRing.decrypt(c.envelope, connAad(c.id, c.column))).toThrow(VaultDecryptError);
    }

    const withNew = createVaultService({ pool, keyring: newOnly });
    expect(await withNew.resolveSecretValue(user.orgId, 'rot-a')).toBe('rot-a-1');
    expect(await withNew.resolveSecretValue(user.orgId, 'rot-b')).toBe('rot-b-1');
    await expect(createVaultService({ pool, keyring: oldRing }).resolveSecretValue(user.orgId, 'rot-a')).rejects.toThrow(VaultDecryptError);
    // The vault keeps working under the new key: restore decrypts an old version and re-seals it.
    expect((await withNew.restore(principal, secretId, 2)).current_version).toBe(4);
    expect(await withNew.resolveSecretValue(user.orgId, 'rot-a')).toBe('rot-a-2');

    // Re-running with the new key is a no-op: everything is already wrapped by it.
    expect(await rotateMasterKey(pool, oldRing, newKey)).toEqual({ kekId: result.kekId, secretVersions: 0, connectionEnvelopes: 0, otherEnvelopes: 0, skipped: 7 });

    // Rotating onward from the new key works the same way.
    const third = randomBytes(32);
    expect(await rotateMasterKey(pool, newOnly, third)).toMatchObject({ secretVersions: 5, connectionEnvelopes: 2, skipped: 0 });
    expect(await createVaultService({ pool, keyring: createVaultKeyring(third) }).resolveSecretValue(user.orgId, 'rot-a')).toBe('rot-a-2');
  });

  it('is all-or-nothing: an envelope the old keyring cannot open aborts the whole rotation', async () => {
    const { pool, seedSecrets, seedConnection, secretVersions, connectionEnvelopes } = await freshVault();
    const known = createVaultKeyring(randomBytes(32));
    await seedSecrets(known, 'known');
    await seedConnection(known, 'gh-known');
    await seedSecrets(createVaultKeyring(randomBytes(32)), 'foreign');
    const snapshot = await secretVersions();
    const conns = await connectionEnvelopes();
    await expect(rotateMasterKey(pool, known, randomBytes(32))).rejects.toThrow(VaultRotationError);
    expect(await secretVersions()).toEqual(snapshot);
    expect(await connectionEnvelopes()).toEqual(conns);
  });

  it('CLI: environment key → prints the new key once; file key → replaces DATA_DIR/master.key', async () => {
    const db = await createTestDatabase();
    await migrate(db);
    const cliPool = await createDatabasePool(db, { maxPoolSize: 2 });
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'vault-cli-'));
    try {
      const seeded = await seedUser(db, { email: 'cli@example.test', role: 'admin' });
      const p: UserPrincipal = { type: 'user', orgId: seeded.orgId, userId: seeded.userId, identityId: seeded.userId, role: 'admin', sessionId: 'n/a' };
      const first = randomBytes(32);
      await createVaultService({ pool: cliPool, keyring: createVaultKeyring(first) }).put(p, { name: 'cli-secret', value: 'cli-plain' });
      const baseEnv = { PATH: process.env.PATH ?? '', NODE_ENV: 'test', LOG_LEVEL: 'warn', DATABASE_URL: db, DATA_DIR: dataDir };

      // Environment mode: the key is printed, nothing is written to DATA_DIR.
      const envRun = await run(process.execPath, ['cli/gateway.ts', 'vault', 'rotate-master-key'], {
        cwd: ROOT,
        env: { ...baseEnv, GATEWAY_MASTER_KEY: first.toString('base64') },
      });
      const printed = /new master key \(shown once\): (\S+)/.exec(envRun.stdout)?.[1];
      expect(printed).toBeDefined();
      expect(envRun.stdout).toContain('re-wrapped 1 secret version(s), 0 connection envelope(s) and 0 other envelope(s)');
      expect(envRun.stdout).toContain('GATEWAY_MASTER_KEY');
      const second = Buffer.from(printed!, 'base64');
      const withSecond = createVaultService({ pool: cliPool, keyring: createVaultKeyring(second) });
      expect(await withSecond.resolveSecretValue(seeded.orgId, 'cli-secret')).toBe('cli-plain');

      // File mode: the current key lives in DATA_DIR/master.key; the new one is supplied.
      const keyFile = path.join(dataDir, 'master.key');
      await writeFile(keyFile, second.toString('base64') + '\n', { mode: 0o600 });
      const third = randomBytes(32);
      const fileRun = await run(process.execPath, ['cli/gateway.ts', 'vault', 'rotate-master-key'], {
        cwd: ROOT,
        env: { ...baseEnv, GATEWAY_NEW_MASTER_KEY: third.toString('hex') },
      });
      expect(fileRun.stdout).not.toContain(third.toString('base64'));
      expect(fileRun.stdout).toContain(`wrote the new key to ${keyFile}`);
      expect((await readFile(keyFile, 'utf8')).trim()).toBe(third.toString('base64'));
      expect((await readFile(`${keyFile}.previous`, 'utf8')).trim()).toBe(second.toString('base64'));
      expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
      expect((await stat(`${keyFile}.previous`)).mode & 0o777).toBe(0o600);
      await expect(stat(`${keyFile}.next`)).rejects.toThrow();
      expect(await createVaultService({ pool: cliPool, keyring: createVaultKeyring(third) }).resolveSecretValue(seeded.orgId, 'cli-secret')).toBe('cli-plain');
      await expect(withSecond.resolveSecretValue(seeded.orgId, 'cli-secret')).rejects.toThrow(VaultDecryptError);

      // Same key again is refused, and a bad new key is a configuration error.
      const same = run(process.execPath, ['cli/gateway.ts', 'vault', 'rotate-master-key'], {
        cwd: ROOT,
        env: { ...baseEnv, GATEWAY_NEW_MASTER_KEY: third.toString('base64') },
      });
      await expect(same).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('the new master key is the current one') });
      const bad = run(process.execPath, ['cli/gateway.ts', 'vault', 'rotate-master-key'], {
        cwd: ROOT,
        env: { ...baseEnv, GATEWAY_NEW_MASTER_KEY: 'short' },
      });
      await expect(bad).rejects.toMatchObject({ code: 78 });
    } finally {
      await cliPool.end();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
