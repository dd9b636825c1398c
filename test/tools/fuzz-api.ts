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
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startThrowawayGateway } from './throwaway-gateway.ts';

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

const CHECKS = ['not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_schema_conformance', 'response_headers_conformance'];

interface RunSummary {
  name: string;
  exitCode: number;
  operations: number;
  testCases: number;
  failures: number;
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

const gw = await startThrowawayGateway({ name: 'fuzz', env: { OUTBOUND_ALLOW_PRIVATE: 'false' }, logFile: (dir) => path.join(dir, 'gateway.log') });
const { base, dataDir } = gw;
const login = { token: gw.adminToken };
const agent = { key: { token: gw.agentKey } };

const summaries: RunSummary[] = [];
let crashed: boolean;
try {
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
        // Routes whose work reaches out to a host the fuzzer would name (calls, a connection's
        // refresh, a webhook, an MCP server's discovery: their 502/504 are the upstream's answer)
        // or that end the session; the suite tests them against loopback servers.
        '--exclude-path-regex',
        '^/v1/(actions/|auth/logout$|approvals/[^/]+/resolve$|connections/[^/]+/refresh$|webhooks$|mcp-servers$|mcp-servers/[^/]+/refresh$)',
      ],
    ),
  );
  crashed = gw.child.exitCode !== null;
} finally {
  await gw.stop();
}

const logText = gw.log();
const unhandled = logText.split('\n').filter((l) => l.includes('"unhandled error"') || l.includes('OAuth server error'));
console.log(`\n=== schemathesis summary (${Math.round(performance.now() / 1000)} s in all, gateway start included) ===`);
for (const s of summaries) {
  console.log(`${s.name}: ${s.operations} operations, ${s.testCases} test cases, ${s.failures} failures (schemathesis exit ${s.exitCode})`);
}
console.log(`gateway: ${unhandled.length} unhandled errors logged${crashed ? ', and it crashed' : ''}`);
if (unhandled.length > 0) console.log(unhandled.slice(0, 10).join('\n'));
if (!args['keep-data']) await gw.removeData();
else console.log(`data and reports kept in ${dataDir}`);
const failed = crashed || unhandled.length > 0 || summaries.some((s) => s.exitCode !== 0 || s.failures > 0);
process.exit(failed ? 1 : 0);
