// `npm run bench:streams [-- --json] [--streams 500] [--rounds 3]`: 500 open people's event streams
// (GET /v1/events) of one org, and an approval raised: how long until it arrives in each
// (bench/support/scale-streams.ts). One embedded gateway; loopback only.
import http from 'node:http';
import { parseArgs } from 'node:util';
import { setUpCoveredAgent, type JsonRequest } from './support/covered-agent.ts';
import { describeStreams, measureStreams } from './support/scale-streams.ts';
import { startEmbeddedTarget, type BenchTarget } from './targets.ts';

const { values: args } = parseArgs({
  options: { json: { type: 'boolean', default: false }, streams: { type: 'string', default: '500' }, rounds: { type: 'string', default: '3' } },
});

async function main() {
  const upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
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
    const { adminToken, key } = await setUpCoveredAgent(json, target.admin, upstreamUrl);
    const orgId = (await json('GET', '/v1/identities/me', adminToken)).org.id as string;
    let n = 0;
    // The agent's rule covers get_item only: a delete raises an approval the org's admins see.
    const raise = async () => {
      const out = await json('POST', '/v1/actions/call', key, { service: 'widgets', action: 'delete_item', params: { id: `streams-${n++}` } });
      if (out.status !== 'pending_approval') throw new Error(`expected pending_approval, got ${JSON.stringify(out)}`);
      return out.approval_id as string;
    };
    const result = await measureStreams({ baseUrl: base, databaseUrl: target.databaseUrl, orgId, raise }, { streams: Number(args.streams), rounds: Number(args.rounds) });
    console.log(args.json ? JSON.stringify({ streams: result }, null, 2) : describeStreams(result));
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
