// What the rules and streams measures need of a running target: a loopback upstream, a JSON
// client of the target's API, and the covered agent of bench/support/covered-agent.ts. Shared by
// bench:rules, bench:streams and bench:scale, which runs both after its reads.
import http from 'node:http';
import { startEmbeddedTarget, type BenchTarget } from '../targets.ts';
import { setUpCoveredAgent, type JsonRequest } from './covered-agent.ts';
import { measureRulesScale, type RulesScaleOptions, type RulesScaleResult } from './scale-rules.ts';
import { measureStreams, type StreamsScaleOptions, type StreamsScaleResult } from './scale-streams.ts';

export interface BenchAgent {
  base: string;
  /** The loopback upstream the covered agent's service sends to. */
  upstreamUrl: string;
  json: JsonRequest;
  adminToken: string;
  key: string;
  close(): Promise<void>;
}

/** An upstream answering every request with 200 and `body`, and the covered agent against it. */
export async function benchAgent(target: BenchTarget, body = '{"ok":true,"item":{"id":"a1","name":"bench"}}'): Promise<BenchAgent> {
  const upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  const base = target.apiUrls[0]!;
  const json: JsonRequest = async (method, p, token, payload) => {
    const res = await fetch(base + p, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(payload !== undefined ? { body: JSON.stringify(payload) } : {}),
    });
    const parsed = (await res.json()) as unknown;
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(parsed)}`);
    return parsed;
  };
  const { adminToken, key } = await setUpCoveredAgent(json, target.admin, upstreamUrl);
  return {
    base,
    upstreamUrl,
    json,
    adminToken,
    key,
    close: async () => {
      upstream.closeAllConnections();
      await new Promise<void>((r) => upstream.close(() => r()));
    },
  };
}

/** An embedded target and its bench agent for `work`, both stopped after it (bench:rules, bench:streams). */
export async function withBenchAgent<T>(work: (target: BenchTarget, agent: BenchAgent) => Promise<T>, body?: string): Promise<T> {
  const target = await startEmbeddedTarget();
  try {
    const agent = await benchAgent(target, body);
    try {
      return await work(target, agent);
    } finally {
      await agent.close();
    }
  } finally {
    await target.stop().catch(() => undefined);
  }
}

/** A covered call with many rules on its chain against few (scale-rules.ts). */
export function rulesScaleOn(target: BenchTarget, agent: BenchAgent, opts: RulesScaleOptions = {}): Promise<RulesScaleResult> {
  const gatewayPids = target.processes.filter((p) => p.group === 'gateway').map((p) => p.pid);
  return measureRulesScale({ baseUrl: agent.base, databaseUrl: target.databaseUrl, gatewayPids, adminToken: agent.adminToken, json: agent.json }, opts);
}

/** An approval's arrival on many open event streams (scale-streams.ts): the agent's deletes raise approvals the admins see. */
export async function streamsScaleOn(target: BenchTarget, agent: BenchAgent, opts: StreamsScaleOptions = {}): Promise<StreamsScaleResult> {
  const orgId = (await agent.json('GET', '/v1/identities/me', agent.adminToken)).org.id as string;
  let n = 0;
  // The agent's rule covers get_item only: a delete raises an approval the org's admins see.
  const raise = async () => {
    const out = await agent.json('POST', '/v1/actions/call', agent.key, { service: 'widgets', action: 'delete_item', params: { id: `streams-${n++}` } });
    if (out.status !== 'pending_approval') throw new Error(`expected pending_approval, got ${JSON.stringify(out)}`);
    return out.approval_id as string;
  };
  return measureStreams({ baseUrl: agent.base, databaseUrl: target.databaseUrl, orgId, raise }, opts);
}
