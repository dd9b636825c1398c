// `npm run bench:rules [-- --json] [--small 10] [--large 10000] [--calls 300]`: the covered call
// with 10,000 rules on its chain against one with 10, in one embedded gateway in one run
// (bench/support/scale-rules.ts). Loopback only.
import http from 'node:http';
import { parseArgs } from 'node:util';
import { setUpCoveredAgent, type JsonRequest } from './support/covered-agent.ts';
import { describeRulesScale, measureRulesScale } from './support/scale-rules.ts';
import { startEmbeddedTarget, type BenchTarget } from './targets.ts';

const { values: args } = parseArgs({
  options: { json: { type: 'boolean', default: false }, small: { type: 'string', default: '10' }, large: { type: 'string', default: '10000' }, calls: { type: 'string', default: '300' } },
});

async function main() {
  const upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true,"item":{"id":"a1","name":"bench"}}');
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  let target: BenchTarget | null = null;
  try {
    target = await startEmbeddedTarget();
    const base = target.apiUrls[0]!;
    const json: JsonRequest = async (method, p, token, body) => {
      const res = await fetch(base + p, {
        method,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const parsed = (await res.json()) as unknown;
      if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(parsed)}`);
      return parsed;
    };
    const { adminToken } = await setUpCoveredAgent(json, target.admin, upstreamUrl);
    const result = await measureRulesScale(
      { baseUrl: base, databaseUrl: target.databaseUrl, gatewayPids: target.processes.filter((p) => p.group === 'gateway').map((p) => p.pid), adminToken, json },
      { small: Number(args.small), large: Number(args.large), calls: Number(args.calls) },
    );
    console.log(args.json ? JSON.stringify({ rules: result }, null, 2) : describeRulesScale(result));
  } finally {
    await target?.stop().catch(() => undefined);
    upstream.closeAllConnections();
    upstream.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
