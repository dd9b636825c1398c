// The permission check with many rules (issue 46): a covered call whose chain (person → agent →
// subagent) carries `small` rules against one whose chain carries `large`, on the same gateway in
// the same run, called in alternating blocks so both meet the same moments of a noisy machine.
// Reports p50/p95 of each and the gateway's CPU per call, and their ratios (goal: p50 ≤ 1.1×).
//
// The rules are inserted with one INSERT … SELECT over generate_series per chain (not the API):
// a mix of patterns that do not match the benchmarked key — other services, other actions of the
// same service, `*` in the service or the action, raw HTTP, and a few on the same action with
// another argument — a third with a CEL condition, some with budgets, a fifth of them denies.
// Both chains also carry the two allows that cover the call (one with a condition), so both
// calls take the same path.
import pg from 'pg';
import { processCpuMs } from './proc.ts';
import { latency, round, type Latency } from './figures.ts';
import type { JsonRequest } from './covered-agent.ts';

export const RULES_GOAL = { p50_ratio_max: 1.1 } as const;

export interface RulesScaleOptions {
  /** Rules on the small chain and on the large one (both at least 2: the covering allows). */
  small?: number;
  large?: number;
  /** Measured calls per chain, after `warmup` per chain. */
  calls?: number;
  warmup?: number;
  /** Calls per chain in each alternating block (CPU is read per block). */
  block?: number;
}

export interface ChainFigures {
  rules: number;
  latency_ms: Latency;
  gateway_cpu_ms_per_call: number;
}

export interface RulesScaleResult {
  small: ChainFigures;
  large: ChainFigures;
  ratios: { p50: number; p95: number; gateway_cpu: number };
  goal: { p50_ratio_max: number; met: boolean };
}

export interface RulesScaleTarget {
  baseUrl: string;
  databaseUrl: string;
  /** The gateway processes whose CPU counts (the API replica the calls reach, and any worker). */
  gatewayPids: readonly number[];
  /** An admin's token, with the `widgets` service of bench/support/covered-agent.ts set up. */
  adminToken: string;
  json: JsonRequest;
}

/** The covering allows every chain carries (the subagent does not inherit: both are checked). */
const COVERING = [
  { on: 'agent', pattern: 'widgets:get_item:*', condition: 'method == "GET"' },
  { on: 'subagent', pattern: 'widgets:get_item:*' },
] as const;

/**
 * `fillers` rules that never match `widgets:get_item:a1`, split between the agent and its
 * subagent, in one statement. Exported for bench:scale, which seeds the same mix.
 */
export async function seedFillerRules(db: pg.Client, ids: { agent: string; subagent: string }, fillers: number): Promise<void> {
  if (fillers <= 0) return;
  await db.query(
    `INSERT INTO permission_rules (org_id, identity_id, effect, pattern, condition, budget)
     SELECT i.org_id, CASE WHEN g % 2 = 0 THEN $1::uuid ELSE $2::uuid END,
       CASE WHEN g % 5 = 0 THEN 'deny' ELSE 'allow' END,
       CASE
         WHEN g % 100 = 99 THEN 'widgets:get_item:other-' || g
         WHEN g % 10 < 4 THEN 'svc' || (g % 100) || ':act' || g || ':*'
         WHEN g % 10 = 4 THEN '*:act' || g || ':*'
         WHEN g % 10 = 5 THEN 'svc' || g || ':*:*'
         WHEN g % 10 < 8 THEN 'widgets:act' || g || ':*'
         ELSE 'http:GET:host' || g || '.example.test/*'
       END,
       CASE WHEN g % 3 = 0 THEN 'body.amount <= ' || g END,
       CASE WHEN g % 7 = 0 AND g % 5 <> 0 THEN '{"calls": 1000000, "per": "1h"}'::jsonb END
     FROM generate_series(1, $3::int) g, identities i WHERE i.id = $1::uuid`,
    [ids.agent, ids.subagent, fillers],
  );
}

/** A person's agent and its (non-inheriting) subagent carrying `rules` rules; the subagent's key. */
async function chainWithRules(t: RulesScaleTarget, db: pg.Client, name: string, rules: number): Promise<string> {
  const agent = await t.json('POST', '/v1/identities/agents', t.adminToken, { name: `${name}-agent` });
  const sub = await t.json('POST', '/v1/identities/agents', t.adminToken, { name: `${name}-subagent`, parent_id: agent.identity.id, inherit_permissions: false });
  const ids = { agent: agent.identity.id as string, subagent: sub.identity.id as string };
  for (const c of COVERING) {
    await t.json('POST', `/v1/identities/${ids[c.on]}/rules`, t.adminToken, { effect: 'allow', pattern: c.pattern, ...('condition' in c ? { condition: c.condition } : {}) });
  }
  await seedFillerRules(db, ids, rules - COVERING.length);
  await db.query('ANALYZE permission_rules');
  return sub.key.token as string;
}

function coveredCall(baseUrl: string, key: string): () => Promise<number> {
  const body = JSON.stringify({ service: 'widgets', action: 'get_item', params: { id: 'a1' } });
  return async () => {
    const started = performance.now();
    const res = await fetch(`${baseUrl}/v1/actions/call`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
    const out = (await res.json()) as { status?: string };
    if (out.status !== 'called') throw new Error(`expected a covered call, got ${res.status} ${JSON.stringify(out)}`);
    return performance.now() - started;
  };
}

const gatewayCpuMs = (pids: readonly number[]) => pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);

/** Seeds both chains, then times covered calls on each in alternating blocks. */
export async function measureRulesScale(t: RulesScaleTarget, opts: RulesScaleOptions = {}): Promise<RulesScaleResult> {
  const small = opts.small ?? 10;
  const large = opts.large ?? 10_000;
  const calls = opts.calls ?? 300;
  const warmup = opts.warmup ?? 50;
  const block = opts.block ?? 25;
  if (small < COVERING.length || large < COVERING.length) throw new Error(`each chain carries at least ${COVERING.length} rules`);
  const db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  let keys: [string, string];
  try {
    const tag = Date.now().toString(36);
    keys = [await chainWithRules(t, db, `rules-${small}-${tag}`, small), await chainWithRules(t, db, `rules-${large}-${tag}`, large)];
  } finally {
    await db.end();
  }
  const callers = keys.map((k) => coveredCall(t.baseUrl, k));
  for (let i = 0; i < warmup; i++) for (const call of callers) await call();
  const samples: [number[], number[]] = [[], []];
  const cpu = [0, 0];
  for (let b = 0; samples[0].length < calls; b++) {
    // Alternate which chain's block goes first, so neither always follows the other.
    const order = b % 2 === 0 ? [0, 1] : [1, 0];
    const n = Math.min(block, calls - samples[0].length);
    for (const c of order) {
      const before = gatewayCpuMs(t.gatewayPids);
      for (let i = 0; i < n; i++) samples[c]!.push(await callers[c]!());
      cpu[c]! += gatewayCpuMs(t.gatewayPids) - before;
    }
  }
  const figures = (rules: number, c: 0 | 1): ChainFigures => ({ rules, latency_ms: latency(samples[c]), gateway_cpu_ms_per_call: round(cpu[c]! / samples[c].length) });
  const s = figures(small, 0);
  const l = figures(large, 1);
  const ratios = { p50: round(l.latency_ms.p50 / s.latency_ms.p50, 3), p95: round(l.latency_ms.p95 / s.latency_ms.p95, 3), gateway_cpu: round(l.gateway_cpu_ms_per_call / s.gateway_cpu_ms_per_call, 3) };
  return { small: s, large: l, ratios, goal: { p50_ratio_max: RULES_GOAL.p50_ratio_max, met: ratios.p50 <= RULES_GOAL.p50_ratio_max } };
}

/** The result as a few lines of text. */
export function describeRulesScale(r: RulesScaleResult): string {
  const row = (f: ChainFigures) => `${String(f.rules).padStart(6)} rules   ${String(f.latency_ms.p50).padStart(7)}  ${String(f.latency_ms.p95).padStart(7)}  ${String(f.gateway_cpu_ms_per_call).padStart(9)}`;
  return [
    `covered call by a subagent, rules on its chain (${r.small.latency_ms.n} calls each, alternating blocks)`,
    `                 p50 ms   p95 ms   gw CPU ms/call`,
    row(r.small),
    row(r.large),
    `ratio ${r.large.rules} / ${r.small.rules}: p50 ${r.ratios.p50}, p95 ${r.ratios.p95}, gateway CPU ${r.ratios.gateway_cpu} — goal p50 ≤ ${r.goal.p50_ratio_max}×: ${r.goal.met ? 'met' : 'MISSED'}`,
  ].join('\n');
}
