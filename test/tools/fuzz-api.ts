// npm run fuzz:api -- --schemathesis <path to the schemathesis binary>
//
// Starts a real gateway (embedded PostgreSQL + Temporal, a fresh DATA_DIR, free ports), seeds a
// session and an agent key, and runs schemathesis against GET /v1/openapi.json: the stateless
// phases (examples, fuzzing; coverage in the session run) and the stateful one, with a bounded
// number of examples per operation. Any 5xx, any response the document does not describe, or a
// crash fails the run.
//
// No traffic leaves loopback. The agent-key run goes first, on an empty org: an agent's calls are
// covered by no rule, so every call becomes a pending approval and nothing executes. The session
// run comes second and leaves out what could make the gateway act on caller-chosen hosts: calls,
// resolving the agent run's approvals, token refresh, webhook endpoints (and signing out).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../../server/embedded/processes.ts';

const { values: args } = parseArgs({
  options: {
    schemathesis: { type: 'string' },
    'max-examples': { type: 'string', default: '5' },
    'keep-data': { type: 'boolean', default: false },
  },
});
if (!args.schemathesis) {
  console.error('usage: npm run fuzz:api -- --schemathesis <path to schemathesis>');
  process.exit(64);
}

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CHECKS = ['not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_schema_conformance', 'response_headers_conformance'];
const EMAIL = 'fuzz@example.test';
const PASSWORD = 'a long fuzzing password';

interface RunSummary {
  name: string;
  exitCode: number;
  operations: number;
  testCases: number;
  failures: number;
}

async function waitForReady(base: string, child: ChildProcess, log: () => Promise<string>): Promise<void> {
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the gateway exited (${child.exitCode}):\n${await log()}`);
    try {
      if ((await fetch(`${base}/readyz`)).status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the gateway was not ready within 300 s:\n${await log()}`);
}

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.url} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** One schemathesis run; its counts are read from the summary it prints (and passed through). */
async function schemathesis(name: string, base: string, token: string, phases: string, extra: string[]): Promise<RunSummary> {
  const argv = [
    'run',
    `${base}/v1/openapi.json`,
    '--header',
    `Authorization: Bearer ${token}`,
    '--checks',
    CHECKS.join(','),
    '--phases',
    phases,
    '--max-examples',
    args['max-examples']!,
    // One worker: with two, hypothesis' lambda-description cache is not thread-safe (a spurious
    // FlakyFailure), and the shared 2-core machine gains little.
    '--workers',
    '1',
    '--request-timeout',
    '30',
    '--seed',
    '15',
    '--no-shrink',
    '--suppress-health-check',
    'all',
    ...extra,
  ];
  console.log(`\n--- schemathesis: ${name} run ---`);
  const child = spawn(args.schemathesis!, argv, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NO_COLOR: '1', SCHEMATHESIS_TELEMETRY: 'false' } });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString('utf8');
    process.stdout.write(c);
  });
  const [exitCode] = (await once(child, 'exit')) as [number | null];
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? NaN);
  return {
    name,
    exitCode: exitCode ?? 1,
    operations: num(/Tested:\s*(\d+)/),
    testCases: num(/Test cases:\s*(\d+) generated/),
    // The closing line: "==== 1 failure, 2 errors, 3 warnings in 92.50s ====".
    failures: (num(/^=+ .*?(\d+) failures?\b.* in [\d.]+s =+$/m) || 0) + (num(/^=+ .*?(\d+) errors?\b.* in [\d.]+s =+$/m) || 0),
  };
}

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gateway-fuzz-'));
await chmod(dataDir, 0o755); // embedded PostgreSQL runs as the postgres user when we are root
const port = await freePort();
const base = `http://localhost:${port}`;
const logFile = path.join(dataDir, 'gateway.log');
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
    GATEWAY_ADMIN_EMAIL: EMAIL,
    GATEWAY_ADMIN_PASSWORD: PASSWORD,
    GATEWAY_RATE_LIMIT_PER_MINUTE: '0',
    OUTBOUND_ALLOW_PRIVATE: 'false',
    LOG_LEVEL: 'warn',
  },
});
const logChunks: Buffer[] = [];
const logStream = createWriteStream(logFile);
for (const stream of [child.stdout!, child.stderr!]) {
  stream.on('data', (c: Buffer) => {
    logChunks.push(c);
    logStream.write(c);
  });
}
const log = async () => Buffer.concat(logChunks).toString('utf8').split('\n').slice(-60).join('\n');

const summaries: RunSummary[] = [];
let crashed: boolean;
try {
  await waitForReady(base, child, log);
  const login = await json<{ token: string }>(
    await fetch(`${base}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: EMAIL, password: PASSWORD }) }),
  );
  const agent = await json<{ key: { token: string } }>(
    await fetch(`${base}/v1/identities/agents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${login.token}` },
      body: JSON.stringify({ name: 'fuzz agent' }),
    }),
  );
  // The agent cannot reach past the authority table on most people-only routes (403 before any
  // validation), so its run spends no time on the coverage phase; the session run has them all.
  summaries.push(await schemathesis('agent-key', base, agent.key.token, 'examples,fuzzing,stateful', []));
  summaries.push(
    await schemathesis(
      'session',
      base,
      login.token,
      'examples,coverage,fuzzing,stateful',
      [
        '--exclude-path-regex',
        '^/v1/(actions/|auth/logout$|approvals/[^/]+/resolve$|connections/[^/]+/refresh$|webhooks$)',
      ],
    ),
  );
  crashed = child.exitCode !== null;
} finally {
  child.kill('SIGTERM');
  if (child.exitCode === null) await once(child, 'exit');
}

const logText = Buffer.concat(logChunks).toString('utf8');
const unhandled = logText.split('\n').filter((l) => l.includes('"unhandled error"') || l.includes('OAuth server error'));
console.log(`\n=== schemathesis summary (${Math.round(performance.now() / 1000)} s in all, gateway start included) ===`);
for (const s of summaries) {
  console.log(`${s.name}: ${s.operations} operations, ${s.testCases} test cases, ${s.failures} failures (schemathesis exit ${s.exitCode})`);
}
console.log(`gateway: ${unhandled.length} unhandled errors logged${crashed ? ', and it crashed' : ''}`);
if (unhandled.length > 0) console.log(unhandled.slice(0, 10).join('\n'));
if (!args['keep-data']) await rm(dataDir, { recursive: true, force: true });
else console.log(`data and reports kept in ${dataDir}`);
const failed = crashed || unhandled.length > 0 || summaries.some((s) => s.exitCode !== 0 || s.failures > 0);
process.exit(failed ? 1 : 0);
