// Starts an in-process gateway for one test file: its own database (migrated), its own task queue,
// the shared Temporal server, a random port. Only third-party upstreams are ever simulated.
import { randomBytes, randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../../server/config.ts';
import { createLogger, type Logger } from '../../server/logger.ts';
import { ensureDatabase } from '../../server/embedded/embedded-postgres.ts';
import { freePort } from '../../server/embedded/processes.ts';
import { cloneTemplate, urlOf } from './template-database.ts';
import { startGateway, type Gateway, type Role } from '../../server/serve.ts';
import { contractChecker, type ContractChecker, type OpenApiDoc } from './contract.ts';

export const ADMIN_EMAIL = 'admin@example.test';
export const ADMIN_PASSWORD = 'correct horse battery staple';

export interface TestGateway extends Gateway {
  config: Config;
  logger: Logger;
  logs: string[];
  /** This gateway's own Temporal task queue (its worker polls it). */
  taskQueue: string;
  /** A session token of the bootstrap admin. */
  adminToken: string;
  login(email: string, password: string): Promise<string>;
  /** request() with `Authorization: Bearer <token>`. */
  as(token: string): (method: string, path: string, body?: unknown) => Promise<TestResponse>;
  request(method: string, path: string, opts?: { body?: unknown; headers?: Record<string, string> }): Promise<TestResponse>;
  /** Checks every response `request` receives against GET /v1/openapi.json (absent for workers). */
  contract?: ContractChecker;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/**
 * A database of its own: a copy of the run's migrated template (test/support/template-database.ts),
 * or with `migrated: false` an empty one (what a first start or the migrations' own tests see).
 */
export async function createTestDatabase(opts: { migrated?: boolean } = {}): Promise<string> {
  const admin = inject('pgAdminUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  if (opts.migrated !== false) return cloneTemplate(admin, inject('pgTemplateDatabase'), name);
  await ensureDatabase(admin, name);
  return urlOf(admin, name);
}

export interface StartTestGatewayOptions {
  role?: Role;
  env?: Record<string, string>;
  databaseUrl?: string;
  /** Listen on a free port chosen up front, so PUBLIC_URL is the real URL (OAuth issuer, audience). */
  realPublicUrl?: boolean;
  /** Share a task queue with another test gateway (split api / worker roles). */
  taskQueue?: string;
  /**
   * The bootstrap admin (default ADMIN_EMAIL / ADMIN_PASSWORD), e.g. as a document's commands sign
   * in; without `email`, the gateway's own default (GATEWAY_ADMIN_EMAIL unset: admin@localhost).
   */
  admin?: { email?: string; password: string };
  /** Pins the moment budget windows are taken at (server/services.ts budgetClock). */
  budgetClock?: () => Date;
}

export async function startTestGateway(opts: StartTestGatewayOptions = {}): Promise<TestGateway> {
  const admin = opts.admin ?? { email: ADMIN_EMAIL, password: ADMIN_PASSWORD };
  const databaseUrl = opts.databaseUrl ?? (await createTestDatabase());
  const fixedPort = opts.realPublicUrl ? await freePort() : undefined;
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '1',
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    // The run's workflow bundle (global setup), as spawned gateways get it (gateway-process.ts).
    TEMPORAL_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    GATEWAY_MASTER_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'info',
    // Many gateways in one run: none takes the default metrics port (metrics.test.ts scrapes its own).
    METRICS_PORT: '0',
    GATEWAY_ADMIN_EMAIL: admin.email ?? '',
    GATEWAY_ADMIN_PASSWORD: admin.password,
    ...(fixedPort ? { PORT: String(fixedPort), PUBLIC_URL: `http://localhost:${fixedPort}` } : {}),
    ...opts.env,
  });
  config.port = fixedPort ?? 0;
  // Capture logs in memory: tests search them for secrets and for expected lines.
  const logs: string[] = [];
  const logger = createLogger(config.logLevel, { write: (line: string) => void logs.push(line) });
  const taskQueue = opts.taskQueue ?? `test-${randomUUID()}`;
  const gateway = await startGateway({
    config,
    role: opts.role ?? 'all',
    logger,
    taskQueue,
    budgetClock: opts.budgetClock,
  });
  let contract: ContractChecker | undefined;
  const request: TestGateway['request'] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    let body: string | undefined;
    if (o.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    }
    const res = await fetch(gateway.url + path, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    // Every response is held to the published contract (a redirect elsewhere is not ours to check).
    const finalUrl = new URL(res.url);
    if (contract && finalUrl.origin === new URL(gateway.url).origin) {
      contract.check(method, finalUrl.pathname, res.status, res.headers.get('content-type'), text);
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
  if (opts.role !== 'worker') {
    const doc = await fetch(`${gateway.url}/v1/openapi.json`);
    if (doc.status !== 200) throw new Error(`GET /v1/openapi.json answered ${doc.status}`);
    contract = contractChecker((await doc.json()) as OpenApiDoc);
  }
  const login = async (email: string, password: string) => {
    const res = await request('POST', '/v1/auth/login', { body: { email, password } });
    if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
    return res.body.token as string;
  };
  const as: TestGateway['as'] = (token) => (method, path, body) =>
    request(method, path, { ...(body !== undefined ? { body } : {}), headers: { authorization: `Bearer ${token}` } });
  const adminToken = opts.role === 'worker' ? '' : await login(admin.email ?? 'admin@localhost', admin.password);
  return { ...gateway, config, logger, logs, taskQueue, request, adminToken, login, as, ...(contract ? { contract } : {}) };
}
