// A gateway run as a real `gateway serve` process (tests and the chaos benchmark kill it), and
// the tenant every such scenario needs: an owner, an auto-replaying and a manual agent, the
// loopback upstream registered as a service, its vault secret. No vitest imports: bench uses it.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { inject } from 'vitest';
import { runCli, waitForReady, type CliProcess } from './processes.ts';
import { seedUser } from './seed.ts';
import { upstreamServiceDoc } from './upstream.ts';

const SERVE_WITH_FAULTS = path.resolve(import.meta.dirname, 'serve-with-faults.ts');

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

export type Api = (token: string, method: string, path: string, body?: unknown) => Promise<ApiResponse>;

export function apiClient(base: string): Api {
  return async (token, method, p, body) => {
    const res = await fetch(base + p, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, body: parsed };
  };
}

/** The workflow bundle global setup built for this run, where the project provides one. */
function bundleOfThisRun(): { TEMPORAL_WORKFLOW_BUNDLE?: string } {
  // Outside vitest (`npm run chaos` starts gateways with these helpers) there is none to ask for.
  if (!process.env.VITEST) return {};
  // Undefined in a project whose global setup builds none (the cluster's).
  const bundlePath = inject('workflowBundlePath') as string | undefined;
  return bundlePath ? { TEMPORAL_WORKFLOW_BUNDLE: bundlePath } : {};
}

export function gatewayEnv(port: number, extra: Record<string, string>): Record<string, string> {
  return {
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    GATEWAY_MASTER_KEY: randomBytes(32).toString('base64'),
    GATEWAY_ADMIN_EMAIL: 'process-admin@example.test',
    GATEWAY_ADMIN_PASSWORD: 'process admin password',
    OUTBOUND_ALLOW_PRIVATE: 'true',
    GATEWAY_RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
    // Its own queue: other gateways on a shared Temporal server must not take its tasks.
    TEMPORAL_TASK_QUEUE: `process-${randomBytes(6).toString('hex')}`,
    // The run's workflow bundle (global setup), not one more bundled per start.
    ...bundleOfThisRun(),
    ...extra,
  };
}

/** Starts `gateway serve` and waits for /readyz. */
export async function startServe(env: Record<string, string>, role: 'all' | 'api' | 'worker' = 'all', readyUrl?: string): Promise<CliProcess> {
  const proc = runCli(['serve', '--role', role], env);
  await waitForReady(readyUrl ?? env.PUBLIC_URL!, proc, 180_000);
  return proc;
}

/** `gateway serve` (role all) holding the covered call's first task `ms` after its answer left (serve-with-faults.ts). */
export async function startServeHoldingAfterAnswer(env: Record<string, string>, ms: number): Promise<CliProcess> {
  const proc = runCli(['hold-after-answer', String(ms)], env, SERVE_WITH_FAULTS);
  await waitForReady(env.PUBLIC_URL!, proc, 180_000);
  return proc;
}

export async function killHard(proc: CliProcess | undefined): Promise<void> {
  if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill('SIGKILL');
  await proc.exited;
}

export async function stopGently(proc: CliProcess | undefined): Promise<void> {
  if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill('SIGTERM');
  await proc.exited;
}

/** The pid an embedded gateway recorded for one of its children (`postgres`, `temporal`). */
export async function childPid(dataDir: string, name: 'postgres' | 'temporal'): Promise<number> {
  return Number.parseInt((await readFile(path.join(dataDir, 'run', `${name}.pid`), 'utf8')).trim(), 10);
}

/** The database URL of an embedded gateway's own PostgreSQL (its data dir holds password and port). */
export async function embeddedDatabaseUrl(dataDir: string): Promise<string> {
  const password = (await readFile(path.join(dataDir, 'postgres.password'), 'utf8')).trim();
  const port = Number.parseInt((await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[3]!.trim(), 10);
  return `postgres://gateway:${encodeURIComponent(password)}@127.0.0.1:${port}/gateway`;
}

/** SIGKILLs an embedded gateway and both of its children (PostgreSQL, Temporal) at once: the whole gateway. */
export async function killWholeGateway(proc: CliProcess, dataDir: string): Promise<void> {
  const children = [await childPid(dataDir, 'postgres'), await childPid(dataDir, 'temporal')];
  proc.child.kill('SIGKILL');
  for (const pid of children) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  await proc.exited;
}

export interface Tenant {
  adminToken: string;
  ownerToken: string;
  /** Agent tokens: `auto` replays on allow, `manual` resumes with approval_id. */
  auto: string;
  manual: string;
}

export async function login(base: string, email: string, password: string): Promise<string> {
  const res = await fetch(`${base}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

/** An owner with two agents and the upstream as service `service` (key in the vault). */
export async function setUpTenant(
  base: string,
  env: Record<string, string>,
  databaseUrl: string,
  upstreamUrl: string,
  opts: { service?: string; doc?: Record<string, unknown> } = {},
): Promise<Tenant> {
  const api = apiClient(base);
  const adminToken = await login(base, env.GATEWAY_ADMIN_EMAIL!, env.GATEWAY_ADMIN_PASSWORD!);
  const orgId = (await api(adminToken, 'GET', '/v1/identities/me')).body.org.id;
  const owner = await seedUser(databaseUrl, { orgId, email: `owner-${randomBytes(4).toString('hex')}@example.test` });
  const ownerToken = await login(base, owner.email, owner.password);
  const service = opts.service ?? 'widgets';
  const doc = opts.doc ?? upstreamServiceDoc(service, upstreamUrl);
  const created = await api(adminToken, 'POST', '/v1/templates', { scope: 'org', document: doc });
  if (created.status !== 201) throw new Error(`template: ${created.status} ${JSON.stringify(created.body)}`);
  const secret = await api(ownerToken, 'POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'process-secret' });
  if (secret.status !== 201) throw new Error(`secret: ${secret.status} ${JSON.stringify(secret.body)}`);
  const auto = (await api(ownerToken, 'POST', '/v1/identities/agents', { name: 'auto' })).body.key.token;
  const manual = (await api(ownerToken, 'POST', '/v1/identities/agents', { name: 'manual', auto_call_on_approve: false })).body.key.token;
  return { adminToken, ownerToken, auto, manual };
}
