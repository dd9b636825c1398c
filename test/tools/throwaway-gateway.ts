// A gateway of its own for the dev tools (`npm run fuzz:api`, `npm run conformance`): `gateway
// serve` with embedded PostgreSQL and Temporal in a fresh data folder on free ports, waited for
// until /readyz answers, with a signed-in admin and one agent key. Its log is kept in memory (and
// in `logFile` when given) for the tool's report.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../server/embedded/processes.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const READY_WITHIN_MS = 300_000;

export interface ThrowawayGateway {
  base: string;
  port: number;
  dataDir: string;
  child: ChildProcess;
  /** A session of the seeded admin. */
  adminToken: string;
  /** A key of an agent made by that admin. */
  agentKey: string;
  /** Everything the gateway printed so far. */
  log(): string;
  /** Stops the gateway (SIGTERM) and waits for it; the data folder stays until `removeData`. */
  stop(): Promise<void>;
  removeData(): Promise<void>;
}

export async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.url} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

async function waitForReady(base: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + READY_WITHIN_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the gateway exited (${child.exitCode}):\n${log()}`);
    try {
      if ((await fetch(`${base}/readyz`)).status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the gateway was not ready within ${READY_WITHIN_MS / 1000} s:\n${log()}`);
}

export async function startThrowawayGateway(opts: { name: string; env?: Record<string, string>; logFile?: (dataDir: string) => string }): Promise<ThrowawayGateway> {
  const email = `${opts.name}@example.test`;
  const password = `a long ${opts.name} password`;
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `gateway-${opts.name}-`));
  await chmod(dataDir, 0o755); // embedded PostgreSQL runs as the postgres user when we are root
  const port = await freePort();
  const base = `http://localhost:${port}`;
  const child = spawn(process.execPath, [path.join(ROOT, 'cli', 'gateway.ts'), 'serve'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      PUBLIC_URL: base,
      TEMPORAL_PORT: String(await freePort()),
      TEMPORAL_UI_PORT: String(await freePort()),
      GATEWAY_ADMIN_EMAIL: email,
      GATEWAY_ADMIN_PASSWORD: password,
      GATEWAY_RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'warn',
      // Throwaway gateways run side by side (schemathesis beside the conformance run): none keeps
      // the default metrics port.
      METRICS_PORT: '0',
      ...opts.env,
    },
  });
  const chunks: Buffer[] = [];
  const file = opts.logFile ? createWriteStream(opts.logFile(dataDir)) : null;
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (c: Buffer) => {
      chunks.push(c);
      file?.write(c);
    });
  }
  const log = () => Buffer.concat(chunks).toString('utf8');
  const stop = async () => {
    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
    file?.end();
  };
  try {
    await waitForReady(base, child, () => log().split('\n').slice(-60).join('\n'));
    const login = await json<{ token: string }>(
      await fetch(`${base}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) }),
    );
    const agent = await json<{ key: { token: string } }>(
      await fetch(`${base}/v1/identities/agents`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${login.token}` },
        body: JSON.stringify({ name: `${opts.name} agent` }),
      }),
    );
    return { base, port, dataDir, child, adminToken: login.token, agentKey: agent.key.token, log, stop, removeData: () => rm(dataDir, { recursive: true, force: true }) };
  } catch (err) {
    await stop();
    throw err;
  }
}
