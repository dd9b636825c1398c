// The gateway as an operator runs it: the real CLI, embedded PostgreSQL and embedded Temporal
// under one DATA_DIR, stopped with SIGTERM and started again.
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../server/embedded/processes.ts';
import { processesMentioning, runCli, waitForReady, type CliProcess } from '../support/processes.ts';

describe('gateway serve lifecycle', () => {
  const started: CliProcess[] = [];
  let dataDir: string;

  afterAll(async () => {
    for (const p of started) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    if (dataDir) {
      // Belt and braces: never leave a child of a failed test running.
      for (const pid of await processesMentioning(dataDir)) process.kill(pid, 'SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('fails fast with one clear line naming a bad PORT', async () => {
    const proc = runCli(['serve'], { PORT: 'abc', DATA_DIR: '/nonexistent/never-created' });
    const code = await proc.exited;
    expect(code).toBe(78);
    const lines = proc.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^gateway: invalid configuration: PORT must be a number \(got "abc"\)$/);
  });

  it.runIf(process.getuid?.() === 0)('as root, a DATA_DIR the postgres user cannot reach stops with one line saying why and what to do', async () => {
    const privateDir = await mkdtemp(path.join(os.tmpdir(), 'gateway-private-')); // mode 0700, as mktemp -d makes it
    try {
      const proc = runCli(['serve'], { DATA_DIR: path.join(privateDir, 'data'), PORT: String(await freePort()), TEMPORAL_CLI_PATH: inject('temporalCliPath') });
      expect(await proc.exited).toBe(78);
      const lines = proc.output().trim().split('\n').filter((l) => l.startsWith('gateway:'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`cannot be reached by the "postgres" OS user`);
      expect(lines[0]).toContain(`${privateDir} has mode 0700`);
      expect(lines[0]).toMatch(/DATABASE_URL/);
      expect(proc.output()).not.toMatch(/initdb/);
      expect(await processesMentioning(privateDir)).toEqual([]);
    } finally {
      await rm(privateDir, { recursive: true, force: true });
    }
  });

  it('rejects an unknown role without starting anything', async () => {
    const proc = runCli(['serve', '--role', 'bogus'], {});
    expect(await proc.exited).toBe(2);
    expect(proc.output()).toContain('--role must be one of api, worker, all');
  });

  it('starts with embedded PostgreSQL and Temporal, stops on SIGTERM leaving nothing, and finds its data again', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'gateway-life-'));
    await chmod(dataDir, 0o755);
    const port = await freePort();
    const env = {
      DATA_DIR: dataDir,
      PORT: String(port),
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      TEMPORAL_CLI_PATH: inject('temporalCliPath'),
      LOG_LEVEL: 'info',
      GATEWAY_ADMIN_EMAIL: 'ops@example.test',
      GATEWAY_ADMIN_PASSWORD: 'a long operator password',
    };
    const login = async () => {
      const res = await fetch(`${base}/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: env.GATEWAY_ADMIN_EMAIL, password: env.GATEWAY_ADMIN_PASSWORD }),
      });
      expect(res.status).toBe(200);
      return { authorization: `Bearer ${((await res.json()) as { token: string }).token}` };
    };
    const base = `http://127.0.0.1:${port}`;

    const first = runCli(['serve'], env);
    started.push(first);
    await waitForReady(base, first);
    const ui = await fetch(`http://127.0.0.1:${env.TEMPORAL_UI_PORT}/`);
    expect(ui.status).toBe(200);

    const auth = await login();
    const ping = await fetch(`${base}/v1/diagnostics/ping`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ message: 'survives restarts' }),
    });
    expect(ping.status).toBe(201);
    const { workflow_id, row_id } = (await ping.json()) as { workflow_id: string; row_id: string };

    const children = await processesMentioning(dataDir);
    expect(children.length).toBeGreaterThanOrEqual(2); // postgres (+ its workers) and temporal
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(await processesMentioning(dataDir)).toEqual([]);
    expect(await readdir(path.join(dataDir, 'run'))).toEqual([]);
    expect(first.output()).toContain('"msg":"stopped"');
    expect(first.output()).toContain(`"msg":"gateway ready at http://localhost:${port}"`); // PUBLIC_URL's default

    const second = runCli(['serve'], env);
    started.push(second);
    await waitForReady(base, second);
    // The session lives in PostgreSQL: the token from before the restart still works.
    const again = await fetch(`${base}/v1/diagnostics/ping/${workflow_id}`, { headers: auth });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ row_id, message: 'survives restarts', workflow_status: 'COMPLETED' });
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(await processesMentioning(dataDir)).toEqual([]);
  });
});
