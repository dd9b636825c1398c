// Bring-your-own Temporal: a server whose namespaces lack the gateway's search attributes. With
// registration allowed the gateway registers them and calls work; with it forbidden the gateway
// refuses to start with one line naming them and the command to run, and that command fixes it.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DYNAMIC_CONFIG, SEARCH_ATTRIBUTES } from '../../server/embedded/temporal-dev-server.ts';
import { freePort, terminate, waitForPort } from '../../server/embedded/processes.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestDatabase, startTestGateway } from '../support/gateway.ts';
import { runCli, waitForReady } from '../support/processes.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';

const run = promisify(execFile);

describe('a Temporal namespace without the gateway search attributes', () => {
  let temporal: ChildProcess;
  let address: string;
  let up: Upstream;
  const cli = inject('temporalCliPath');

  beforeAll(async () => {
    up = await startUpstream();
    const port = await freePort();
    address = `127.0.0.1:${port}`;
    // A plain dev server: namespaces `default` and `byo`, none of our search attributes.
    const args = ['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'warn', '--namespace', 'byo'];
    for (const kv of DYNAMIC_CONFIG) args.push('--dynamic-config-value', kv);
    temporal = spawn(cli, args, { stdio: 'ignore', detached: true });
    await waitForPort('127.0.0.1', port, 60_000, () => temporal.exitCode !== null);
  });
  afterAll(async () => {
    if (temporal?.pid) await terminate(temporal.pid, 'SIGTERM', 15_000);
    await up?.close();
  });

  async function listed(namespace: string): Promise<string> {
    const { stdout } = await run(cli, ['operator', 'search-attribute', 'list', '--address', address, '--namespace', namespace]);
    return stdout;
  }

  type Caller = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;
  async function coveredCall(admin: Caller) {
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'byo-key' })).status).toBe(201);
    return admin('POST', '/v1/actions/call', { service: 'widgets', action: 'get_item', params: { id: 'b1' } });
  }

  it('registers them through the operator API when allowed, and calls work at once', async () => {
    for (const name of Object.keys(SEARCH_ATTRIBUTES)) expect(await listed('byo')).not.toContain(name);
    const gw = await startTestGateway({ env: { TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: 'byo' } });
    try {
      expect(gw.logs.join('\n')).toContain('registered the gateway search attributes');
      const res = await coveredCall(gw.as(gw.adminToken));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
      const after = await listed('byo');
      for (const name of Object.keys(SEARCH_ATTRIBUTES)) expect(after).toContain(name);
    } finally {
      await gw.stop();
    }
  });

  it('refuses to start with one line and the command when it may not register; that command fixes it', async () => {
    const port = await freePort();
    const env = {
      PORT: String(port),
      DATABASE_URL: await createTestDatabase(),
      TEMPORAL_ADDRESS: address,
      TEMPORAL_REGISTER_SEARCH_ATTRIBUTES: 'false',
      GATEWAY_MASTER_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
      GATEWAY_ADMIN_EMAIL: ADMIN_EMAIL,
      GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
    };
    const refused = runCli(['serve', '--role', 'api'], env);
    expect(await refused.exited).toBe(78);
    const lines = refused.output().trim().split('\n');
    const line = lines.at(-1)!;
    expect(line).toMatch(/^gateway: Temporal namespace "default" lacks the search attributes GatewayOrg, GatewayAgent, GatewayService, GatewayAction, GatewayStatus \(TEMPORAL_REGISTER_SEARCH_ATTRIBUTES=false\)/);
    expect(lines.filter((l) => l.includes('lacks the search attributes'))).toHaveLength(1);
    expect(refused.output()).not.toMatch(/\n\s+at /); // no stack trace
    for (const name of Object.keys(SEARCH_ATTRIBUTES)) expect(await listed('default')).not.toContain(name);

    // The printed command, run as printed (plus the server address), is the fix.
    const command = line.slice(line.indexOf('temporal operator search-attribute create'));
    const argv = command.split(' ').slice(1);
    await run(cli, [...argv, '--address', address]);

    const started = runCli(['serve', '--role', 'all'], env);
    try {
      await waitForReady(`http://127.0.0.1:${port}`, started);
      expect(started.output()).not.toContain('lacks the search attributes');
      const base = `http://127.0.0.1:${port}`;
      const json = async (method: string, path: string, body: unknown, token?: string) => {
        const res = await fetch(base + path, {
          method,
          headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as any };
      };
      const login = await json('POST', '/v1/auth/login', { email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
      const res = await coveredCall((method, path, body) => json(method, path, body, login.body.token));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'called' });
    } finally {
      started.child.kill('SIGTERM');
      expect(await started.exited).toBe(0);
    }
  });
});
