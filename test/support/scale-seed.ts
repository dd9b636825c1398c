// One org seeded to scale by the database itself (INSERT … SELECT over generate_series; never the
// API): people, agents and subagents in chains, permission rules (some with conditions and
// budgets), custom services with many actions, calls with their approvals and executions, and
// the audit log (test/support/audit-volume.ts). `npm run bench:scale` seeds a big org and a small
// one in the same database and measures each read on both.
//
// Ids are md5 of the org and a name (`uuidOf`), so the bench can name any seeded row without
// reading it back.
import { createHash } from 'node:crypto';
import { sql, type CommonQueryMethods } from 'slonik';
import { hashPassword } from '../../server/auth/passwords.ts';
import { seedAuditVolume } from './audit-volume.ts';

export interface OrgShape {
  people: number;
  /** Agents and subagents together; every CHAIN_LENGTH of them form one chain under a person. */
  agents: number;
  rules: number;
  services: number;
  actionsPerService: number;
  calls: number;
  decidedApprovals: number;
  pendingApprovals: number;
  auditRows: number;
}

/** Agent, then subagents below it: depth 5 from the person at the top. */
export const CHAIN_LENGTH = 5;

/** The org of issue 46, × `scale` (people and the shape of a chain stay). */
export function bigOrg(scale: number): OrgShape {
  const n = (v: number, min = 1) => Math.max(min, Math.round(v * scale));
  return {
    people: 50,
    agents: n(2_000, CHAIN_LENGTH),
    rules: n(10_000),
    services: n(100),
    actionsPerService: 100,
    calls: n(200_000),
    decidedApprovals: n(100_000),
    pendingApprovals: n(5_000),
    auditRows: n(1_000_000),
  };
}

export const SMALL_ORG: OrgShape = {
  people: 5,
  agents: 20,
  rules: 20,
  services: 5,
  actionsPerService: 20,
  calls: 200,
  decidedApprovals: 100,
  pendingApprovals: 20,
  auditRows: 1_000,
};

/** The uuid the seed's SQL makes for `what` in `orgId`: md5 of both, with the version-4 and variant digits. */
export function uuidOf(orgId: string, what: string): string {
  const hex = createHash('md5').update(orgId + what).digest('hex');
  return `${hex.slice(0, 12)}4${hex.slice(13, 16)}8${hex.slice(17)}`.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
}

export interface SeededOrg {
  orgId: string;
  shape: OrgShape;
  admin: { email: string; password: string; id: string };
  /** An agent at the top of a chain (its rules are the rules page's). */
  agentId: string;
  /** The newest pending approval (the approval page, its blast radius). */
  pendingApprovalId: string;
  seconds: Record<string, number>;
}

const PASSWORD = 'scale bench password';

/** A custom service document with `actions` operations (what gateway_search indexes). */
export function serviceDocument(n: number, actions: number) {
  const paths: Record<string, unknown> = {};
  const verbs = ['list', 'get', 'create', 'update', 'archive'];
  const nouns = ['invoice', 'ticket', 'message', 'report', 'customer', 'order', 'file', 'event', 'task', 'comment'];
  for (let a = 0; a < actions; a++) {
    const verb = verbs[a % verbs.length]!;
    const noun = nouns[Math.floor(a / verbs.length) % nouns.length]!;
    paths[`/v${a}/${noun}s/{id}`] = {
      [verb === 'list' || verb === 'get' ? 'get' : 'post']: {
        operationId: `${verb}_${noun}_${a}`,
        summary: `${verb} ${noun} {id} in service ${n}`,
        description: `${verb[0]!.toUpperCase()}${verb.slice(1)}s the ${noun} named by its id, one of the ${noun}s of the account.`,
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok' } },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: `Scale service ${n}`, key: `scale-svc-${n}`, version: '1' },
    servers: [{ url: `https://svc${n}.example.test` }],
    components: { securitySchemes: { api_key: { type: 'apiKey', in: 'header', name: 'X-Api-Key', default_secret_name: `SVC${n}_KEY` } } },
    security: [{ api_key: [] }],
    paths,
  };
}

async function timedStep(seconds: Record<string, number>, name: string, fn: () => Promise<unknown>): Promise<void> {
  const t = performance.now();
  await fn();
  seconds[name] = Math.round((performance.now() - t) / 100) / 10;
}

/** Seeds one org of `shape`; `label` makes its admin's email unique in the database. */
export async function seedOrg(db: CommonQueryMethods, label: string, shape: OrgShape): Promise<SeededOrg> {
  const orgId = uuidOf(label, 'org');
  const org = sql.fragment`${orgId}::uuid`;
  // An RFC 4122 version-4 form of the md5 (the API's uuid checks want one), as uuidOf makes it.
  const id = (what: ReturnType<typeof sql.fragment>) => sql.fragment`overlay(overlay(md5(${orgId}::text || ${what}) placing '4' from 13) placing '8' from 17)::uuid`;
  const person = (n: ReturnType<typeof sql.fragment>) => id(sql.fragment`'user:' || (${n})`);
  const agent = (n: ReturnType<typeof sql.fragment>) => id(sql.fragment`'agent:' || (${n})`);
  const chains = Math.floor(shape.agents / CHAIN_LENGTH);
  // Chain c's person: every person but the admin (person 0) owns chains.
  const ownerOfChain = (c: ReturnType<typeof sql.fragment>) => person(sql.fragment`1 + (${c}) % ${shape.people - 1}`);
  const email = `admin@${label}.example.test`;
  const seconds: Record<string, number> = {};

  await timedStep(seconds, 'identities', async () => {
    await db.query(sql.unsafe`INSERT INTO orgs (id, name, max_pending_per_agent) VALUES (${org}, ${label}, 1000)`);
    const hash = await hashPassword(PASSWORD);
    await db.query(sql.unsafe`
      INSERT INTO identities (id, org_id, kind, user_id, name, email, role, password_hash)
      SELECT ${person(sql.fragment`u`)}, ${org}, 'user', ${person(sql.fragment`u`)}, 'person ' || u,
             CASE WHEN u = 0 THEN ${email} ELSE 'person' || u || '@' || ${label} || '.example.test' END,
             CASE WHEN u = 0 THEN 'admin' ELSE 'member' END, ${hash}
      FROM generate_series(0, ${shape.people - 1}::int) AS u`);
    // Agent n: the head of chain n / CHAIN_LENGTH when n % CHAIN_LENGTH = 0, else a subagent of agent n - 1.
    await db.query(sql.unsafe`
      INSERT INTO identities (id, org_id, kind, parent_id, user_id, name, inherit_permissions, created_at)
      SELECT ${agent(sql.fragment`n`)}, ${org}, CASE WHEN n % ${CHAIN_LENGTH} = 0 THEN 'agent' ELSE 'subagent' END,
             CASE WHEN n % ${CHAIN_LENGTH} = 0 THEN ${ownerOfChain(sql.fragment`n / ${CHAIN_LENGTH}`)} ELSE ${agent(sql.fragment`n - 1`)} END,
             ${ownerOfChain(sql.fragment`n / ${CHAIN_LENGTH}`)}, 'agent ' || n, n % ${CHAIN_LENGTH} = 2,
             now() - make_interval(secs => ${shape.agents} - n)
      FROM generate_series(0, ${chains * CHAIN_LENGTH - 1}::int) AS n`);
  });

  await timedStep(seconds, 'rules', () =>
    // Rule r on agent r % agents; one in 10 with a condition, one in 20 with a budget.
    db.query(sql.unsafe`
      INSERT INTO permission_rules (org_id, identity_id, effect, pattern, source, created_by, condition, budget, created_at)
      SELECT ${org}, ${agent(sql.fragment`r % ${chains * CHAIN_LENGTH}`)}, CASE WHEN r % 50 = 0 THEN 'deny' ELSE 'allow' END,
             'scale-svc-' || (r % ${shape.services}) || ':' || (r / ${shape.services}) % ${shape.actionsPerService} || ':*',
             'manual', ${person(sql.fragment`0`)},
             CASE WHEN r % 10 = 3 THEN 'body.amount < ' || (r % 1000) END,
             CASE WHEN r % 20 = 7 THEN jsonb_build_object('calls', 100, 'per', '1h') END,
             now() - make_interval(secs => ${shape.rules} - r)
      FROM generate_series(0, ${shape.rules - 1}::int) AS r`),
  );

  await timedStep(seconds, 'services', async () => {
    const docs = Array.from({ length: shape.services }, (_, n) => serviceDocument(n, shape.actionsPerService));
    await db.query(sql.unsafe`
      INSERT INTO service_templates (org_id, key, title, document, created_by)
      SELECT ${org}, d->'info'->>'key', d->'info'->>'title', d, ${person(sql.fragment`0`)}
      FROM jsonb_array_elements(${sql.jsonb(docs as never)}) AS d`);
  });

  // Calls, newest last, one a second up to now; the oldest of them have approvals, mostly decided
  // (allowed ones with their execution). The open ones are spread among them, as approvals that
  // wait days (a long TTL) are: many were decided since the oldest open one.
  const approvals = Math.min(shape.calls, shape.decidedApprovals + shape.pendingApprovals);
  const pendingEvery = Math.max(1, Math.floor(approvals / shape.pendingApprovals));
  const pending = sql.fragment`(n % ${pendingEvery} = ${pendingEvery - 1})`;
  const newestPending = Math.floor(approvals / pendingEvery) * pendingEvery - 1;
  const requester = sql.fragment`${agent(sql.fragment`n % ${chains * CHAIN_LENGTH}`)}`;
  const owner = ownerOfChain(sql.fragment`(n % ${chains * CHAIN_LENGTH}) / ${CHAIN_LENGTH}`);
  const at = sql.fragment`now() - make_interval(secs => ${shape.calls} - n)`;
  const keyOf = sql.fragment`'scale-svc-' || (n % ${shape.services}) || '.action' || (n % ${shape.actionsPerService})`;
  await timedStep(seconds, 'calls', () =>
    db.query(sql.unsafe`
      INSERT INTO calls (id, org_id, requester_id, user_id, service, template, action, risk, permission_keys, description,
                         request_redacted, request_envelope, status, created_at, finished_at, approval_id)
      SELECT ${id(sql.fragment`'call:' || n`)}, ${org}, ${requester}, ${owner}, 'scale-svc-' || (n % ${shape.services}),
             'scale-svc-' || (n % ${shape.services}), 'action' || (n % ${shape.actionsPerService}), 'write', ARRAY[${keyOf}],
             'do action ' || n, jsonb_build_object('params', jsonb_build_object('id', n::text)), '{}'::jsonb,
             CASE WHEN ${pending} AND n < ${approvals} THEN 'pending' ELSE 'finished' END, ${at},
             CASE WHEN ${pending} AND n < ${approvals} THEN NULL ELSE ${at} END,
             CASE WHEN n < ${approvals} THEN ${id(sql.fragment`'approval:' || n`)} END
      FROM generate_series(0, ${shape.calls - 1}::int) AS n`),
  );
  const status = sql.fragment`CASE WHEN ${pending} THEN 'pending' WHEN n % 7 = 0 THEN 'denied' WHEN n % 11 = 0 THEN 'expired' ELSE 'allowed' END`;
  await timedStep(seconds, 'approvals', () =>
    db.query(sql.unsafe`
      INSERT INTO approvals (id, call_id, org_id, requester_id, user_id, gap_identity_id, resolver_id, status, risk, permission_keys,
                             derived_keys, suggested_tiers, action_description, auto_call_on_approve, dedupe_key, expires_at,
                             decision, resolved_by, resolved_at, created_at, updated_at)
      SELECT ${id(sql.fragment`'approval:' || n`)}, ${id(sql.fragment`'call:' || n`)}, ${org}, ${requester}, ${owner}, ${owner}, ${owner},
             ${status}, 'med', ARRAY[${keyOf}], ARRAY[${keyOf}],
             jsonb_build_array(jsonb_build_object('keys', jsonb_build_array(${keyOf}), 'description', 'this action'),
                               jsonb_build_object('keys', jsonb_build_array('scale-svc-' || (n % ${shape.services}) || '.*'), 'description', 'the whole service')),
             'do action ' || n, true, 'dedupe:' || n,
             CASE WHEN ${pending} THEN now() + interval '7 days' ELSE ${at} + interval '15 minutes' END,
             CASE WHEN ${pending} THEN NULL WHEN n % 7 = 0 THEN 'deny' WHEN n % 11 = 0 THEN NULL ELSE 'allow' END,
             CASE WHEN ${pending} OR n % 11 = 0 THEN NULL ELSE ${owner} END,
             CASE WHEN ${pending} THEN NULL ELSE ${at} + interval '1 minute' END,
             ${at}, ${at}
      FROM generate_series(0, ${approvals - 1}::int) AS n`),
  );
  await timedStep(seconds, 'executions', () =>
    db.query(sql.unsafe`
      INSERT INTO executions (id, approval_id, status, runtime, triggered_by, http_status_code, expires_at, created_at, started_at, finished_at)
      SELECT ${id(sql.fragment`'execution:' || n`)}, ${id(sql.fragment`'approval:' || n`)}, 'executed', 'http', 'auto', 200,
             ${at} + interval '1 day', ${at}, ${at}, ${at}
      FROM generate_series(0, ${approvals - 1}::int) AS n
      WHERE NOT ${pending} AND n % 7 <> 0 AND n % 11 <> 0`),
  );
  await timedStep(seconds, 'audit', () => seedAuditVolume(db, orgId, shape.auditRows));

  return {
    orgId,
    shape,
    admin: { email, password: PASSWORD, id: uuidOf(orgId, 'user:0') },
    agentId: uuidOf(orgId, 'agent:0'),
    pendingApprovalId: uuidOf(orgId, `approval:${newestPending}`),
    seconds,
  };
}
