// A large audit log for one org, written by the database itself (one INSERT … SELECT over
// generate_series: a million rows in seconds), and the filter combinations the audit page offers
// with values that match nothing or little. Shared by the index test (test/integration/
// audit-indexes.test.ts) and the scale bench (bench/audit-scale.ts).
//
// The mix is shaped like a real log, with the correlations that defeat a one-column index:
// - events with their own outcomes (call.called is always `covered`, so call.called + denied
//   matches nothing although each alone matches many rows);
// - action names shared by services, except that `slack` never does `delete` (slack + delete
//   matches nothing, each alone matches many);
// - rare values: one action, one event, one agent, one person seen in a handful of rows.
import { sql, type CommonQueryMethods } from 'slonik';
import type { AuditRowQuery, AuditVisibility } from '../../server/audit/store.ts';

/** Identities of the seeded log (uuids made up here: the audit log has no foreign keys). */
export function volumeIds(orgId: string) {
  // The last 12 hex digits of a uuid made from the org's and a number: stable and readable.
  const id = (kind: number, n: number) => `${orgId.slice(0, 24)}${kind.toString(16)}${n.toString(16).padStart(11, '0')}`;
  return {
    /** The 40 people who own the chains. */
    user: (n: number) => id(1, n),
    /** The 400 agents (agent n belongs to person n % 40). */
    agent: (n: number) => id(2, n),
    /** An agent that acted a few times only. */
    rareAgent: id(3, 1),
    /** A person whose own rows are a few only. */
    rarePerson: id(3, 2),
  };
}

export const SERVICES = ['slack', 'github', 'jira', 'gmail', 'stripe', 'linear', 'notion', 'zendesk'] as const;
export const ACTIONS = ['list', 'get', 'create', 'update', 'delete'] as const;

/** One row in this many carries the rare values (rare action, event, outcome, agent, person). */
export const RARE_EVERY = 25_000;

/**
 * Appends `rows` entries of `orgId`, one a second up to now (ids and times rise together, as they
 * do when the gateway writes them).
 */
export async function seedAuditVolume(db: CommonQueryMethods, orgId: string, rows: number): Promise<void> {
  const ids = volumeIds(orgId);
  const users = Array.from({ length: 40 }, (_, n) => ids.user(n));
  const agents = Array.from({ length: 400 }, (_, n) => ids.agent(n));
  await db.query(sql.unsafe`
    WITH g AS (
      SELECT n, ((n::bigint * 7919) % 100)::int AS kind, ((n::bigint * 104729) % 400)::int AS agent_no, n % ${RARE_EVERY} = 0 AS rare
      FROM generate_series(1, ${rows}::int) AS n),
    shaped AS (
      SELECT g.*,
        CASE WHEN kind < 60 THEN 'call.called' WHEN kind < 64 THEN 'call.denied' WHEN kind < 74 THEN 'approval.raised'
             WHEN kind < 82 THEN 'approval.resolved' WHEN kind < 90 THEN 'execution.executed' WHEN kind < 94 THEN 'execution.failed'
             WHEN kind < 97 THEN 'execution.started' ELSE 'approval.expired' END AS event,
        CASE WHEN kind < 60 THEN 'covered' WHEN kind < 64 THEN 'denied' WHEN kind < 74 THEN 'pending'
             WHEN kind < 78 THEN 'allow' WHEN kind < 80 THEN 'allow_remember' WHEN kind < 82 THEN 'deny'
             WHEN kind < 90 THEN 'executed' WHEN kind < 94 THEN 'failed' WHEN kind < 97 THEN NULL ELSE 'expire' END AS decision,
        (${sql.array([...SERVICES], 'text')})[1 + n % 8] AS service,
        -- slack (n % 8 = 0) picks from the first four actions only: it never deletes.
        (${sql.array([...ACTIONS], 'text')})[1 + (n / 8) % (CASE WHEN n % 8 = 0 THEN 4 ELSE 5 END)] AS action
      FROM g)
    INSERT INTO audit_log (org_id, at, event, user_id, actor_id, identity_chain, service, action, permission_keys, decision, call_id, details)
    SELECT ${orgId}, now() - make_interval(secs => ${rows} - n),
           CASE WHEN rare THEN 'sso.configured' ELSE event END,
           CASE WHEN rare THEN ${ids.rarePerson}::uuid ELSE (${sql.array(users, 'uuid')})[1 + agent_no % 40] END,
           CASE WHEN rare THEN ${ids.rareAgent}::uuid ELSE (${sql.array(agents, 'uuid')})[1 + agent_no] END,
           CASE WHEN rare THEN ARRAY[${ids.rarePerson}::uuid, ${ids.rareAgent}::uuid]
                ELSE ARRAY[(${sql.array(users, 'uuid')})[1 + agent_no % 40], (${sql.array(agents, 'uuid')})[1 + agent_no]] END,
           service, CASE WHEN rare THEN 'rotate_keys' ELSE action END,
           ARRAY[service || '.' || action], CASE WHEN rare THEN 'outcome_unknown' ELSE decision END,
           -- A call's first row (its check, denial or raise) names it, as the gateway writes them.
           CASE WHEN NOT rare AND event IN ('call.called', 'call.denied', 'approval.raised') THEN md5(${orgId}::text || 'call:' || n)::uuid END,
           '{}'::jsonb
    FROM shaped`);
}

export interface VolumeCase {
  name: string;
  /** The query string the audit page sends (for reading the figures). */
  query: string;
  filter: AuditRowQuery;
  visibleTo: AuditVisibility;
}

/**
 * Each filter the audit page offers, alone and in the combinations that matter, with values that
 * match nothing or a few rows of the seeded log: the queries that must not read the whole org.
 * `seededUntil`: the time the seed ran (its rows end there), for the time windows.
 */
export function volumeCases(orgId: string, seededAt: Date): VolumeCase[] {
  const ids = volumeIds(orgId);
  const hourAgo = (h: number) => new Date(seededAt.getTime() - h * 3_600_000).toISOString();
  const admin = (name: string, query: string, filter: AuditRowQuery): VolumeCase => ({ name, query, filter, visibleTo: 'org' });
  return [
    admin('action (rare)', 'action=rotate_keys', { action: 'rotate_keys' }),
    admin('action (none)', 'action=merge', { action: 'merge' }),
    admin('service (none)', 'service=dropbox', { service: 'dropbox' }),
    admin('service + action (none)', 'service=slack&action=delete', { service: 'slack', action: 'delete' }),
    admin('event (rare)', 'event=sso.configured', { event: 'sso.configured' }),
    admin('decision (rare)', 'decision=outcome_unknown', { decision: 'outcome_unknown' }),
    admin('event + decision (none)', 'event=call.called&decision=denied', { event: 'call.called', decision: 'denied' }),
    admin('service + event + decision (none)', 'service=github&event=call.called&decision=denied', { service: 'github', event: 'call.called', decision: 'denied' }),
    admin('identity (rare)', `identity=${ids.rareAgent}`, { identity: ids.rareAgent }),
    admin('identity + action (none)', `identity=${ids.agent(7)}&action=rotate_keys`, { identity: ids.agent(7), action: 'rotate_keys' }),
    admin('time window (a day ago, 1 minute)', 'since=…&until=…', { since: hourAgo(24), until: hourAgo(24 - 1 / 60) }),
    admin('since + event (none)', 'since=…&event=member.joined', { since: hourAgo(48), event: 'member.joined' }),
    { name: 'member: own rows (few)', query: '(a member)', filter: {}, visibleTo: { userId: ids.rarePerson } },
    { name: 'member: own rows + event + decision (none)', query: '(a member) event=call.called&decision=denied', filter: { event: 'call.called', decision: 'denied' }, visibleTo: { userId: ids.user(3) } },
    { name: 'agent: own rows (few)', query: '(an agent)', filter: {}, visibleTo: { identityInChain: ids.rareAgent } },
  ];
}
