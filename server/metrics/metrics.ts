// The gateway's Prometheus metrics: one registry per gateway, handed to the code that counts as a
// dependency (never a module global, so two gateways in one process keep their own counts).
// Every label is bounded: names come from templates (capped), outcomes and kinds from fixed sets.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { LabelCap } from './label-cap.ts';

/** How a call reached its upstream: checked and sent at once, sent on an allow, or resumed by its agent. */
export type CallPath = 'covered' | 'approved' | 'resumed';

/** A call's final state as counted (its row's status, flattened). */
export type CallOutcomeLabel = 'called' | 'failed' | 'outcome_unknown' | 'denied' | 'expired' | 'cancelled' | 'superseded' | 'execution_expired';

/** Where a decision was given. */
export type DecisionChannel = 'api' | 'mcp' | 'slack' | 'email';

export type NoticeOutcome = 'delivered' | 'failed';
export type WebhookOutcome = 'delivered' | 'attempt_failed';

/** What a pool gauge reads (slonik's pool state). */
export interface PoolState {
  acquiredConnections: number;
  idleConnections: number;
  waitingClients: number;
}

// Seconds; the gateway's own overhead is small, an upstream's time anything up to its timeout.
const OVERHEAD_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const DECISION_BUCKETS = [1, 5, 15, 30, 60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600, 24 * 3600, 7 * 24 * 3600];

/** Distinct (service, action) pairs kept as labels; past it, new pairs are counted as `other`. */
export const MAX_ACTION_LABELS = 500;

export interface GatewayMetrics {
  readonly registry: Registry;
  /** A call's final state, counted where it is committed (once per call). */
  callFinished(c: { service: string; action: string; outcome: CallOutcomeLabel; path: CallPath }): void;
  /** Time the upstream took for one sent request. */
  upstreamSeconds(path: CallPath, seconds: number): void;
  /** A synchronous answer's time in the gateway: its whole time less the upstream's. */
  overheadSeconds(path: CallPath, seconds: number): void;
  approvalRaised(): void;
  approvalDecided(decision: string, channel: DecisionChannel, secondsSinceRaised: number): void;
  approvalExpired(): void;
  notice(outcome: NoticeOutcome): void;
  webhook(outcome: WebhookOutcome): void;
  rateLimited(): void;
  /** A request that did not get an answer from its upstream, by its error code (a fixed set). */
  outboundError(code: string): void;
  outcomeUnknown(path: CallPath): void;
  /** The gauges read on scrape: the pool's state and the approvals pending now. */
  watch(sources: { pool?: () => PoolState; pendingApprovals?: () => Promise<number> }): void;
}

const DECISIONS = new Set(['allow', 'allow_once', 'allow_remember', 'deny', 'bubble', 'cancel']);

export function createMetrics(): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gateway_process_' });
  const actions = new LabelCap(MAX_ACTION_LABELS);
  const reg = [registry];

  const calls = new Counter({ name: 'gateway_calls_total', help: 'Calls by final state, counted once when the state is committed.', labelNames: ['service', 'action', 'outcome', 'path'], registers: reg });
  const overhead = new Histogram({ name: 'gateway_overhead_seconds', help: 'Time a synchronous answer spent in the gateway (its whole time less the upstream’s).', labelNames: ['path'], buckets: OVERHEAD_BUCKETS, registers: reg });
  const upstream = new Histogram({ name: 'gateway_upstream_seconds', help: 'Time the upstream took to answer a sent request.', labelNames: ['path'], buckets: UPSTREAM_BUCKETS, registers: reg });
  const raised = new Counter({ name: 'gateway_approvals_raised_total', help: 'Approvals raised (a deduplicated call joins one and raises none).', registers: reg });
  const decided = new Counter({ name: 'gateway_approvals_decided_total', help: 'Decisions the workflow accepted, by decision and where they were given.', labelNames: ['decision', 'channel'], registers: reg });
  const expired = new Counter({ name: 'gateway_approvals_expired_total', help: 'Approvals that expired without a decision.', registers: reg });
  const decisionTime = new Histogram({ name: 'gateway_approval_decision_seconds', help: 'Time from an approval being raised to its decision.', buckets: DECISION_BUCKETS, registers: reg });
  const notices = new Counter({ name: 'gateway_notice_deliveries_total', help: 'Approval notices (Slack, email) delivered, or failed for good after their retries.', labelNames: ['outcome'], registers: reg });
  const webhooks = new Counter({ name: 'gateway_webhook_deliveries_total', help: 'Webhook delivery attempts: delivered, or failed (retried by the workflow).', labelNames: ['outcome'], registers: reg });
  const refused = new Counter({ name: 'gateway_rate_limit_refusals_total', help: 'Calls refused with rate_limited.', registers: reg });
  const outbound = new Counter({ name: 'gateway_outbound_errors_total', help: 'Sent requests without an upstream answer, by error code.', labelNames: ['kind'], registers: reg });
  const unknown = new Counter({ name: 'gateway_outcome_unknown_total', help: 'Calls ended outcome_unknown: a non-idempotent request that may have left was not sent again.', labelNames: ['path'], registers: reg });
  // Read on each scrape (`collect`): the state at that moment, from the sources `watch` names.
  const sources: { pool?: () => PoolState; pendingApprovals?: () => Promise<number> } = {};
  new Gauge({
    name: 'gateway_db_pool_connections',
    help: 'The PostgreSQL pool’s connections by state, and clients waiting for one.',
    labelNames: ['state'],
    registers: reg,
    collect() {
      if (!sources.pool) return;
      const s = sources.pool();
      this.set({ state: 'acquired' }, s.acquiredConnections);
      this.set({ state: 'idle' }, s.idleConnections);
      this.set({ state: 'waiting_clients' }, s.waitingClients);
    },
  });
  new Gauge({
    name: 'gateway_approvals_pending',
    help: 'Approvals pending (or bubbled) now, read on scrape with a bounded query.',
    registers: reg,
    async collect() {
      if (sources.pendingApprovals) this.set(await sources.pendingApprovals());
    },
  });

  return {
    registry,
    callFinished({ service, action, outcome, path }) {
      const [s, a] = actions.pair(service, action);
      calls.inc({ service: s, action: a, outcome, path });
    },
    upstreamSeconds: (path, seconds) => upstream.observe({ path }, seconds),
    overheadSeconds: (path, seconds) => overhead.observe({ path }, Math.max(0, seconds)),
    approvalRaised: () => raised.inc(),
    approvalDecided(decision, channel, seconds) {
      decided.inc({ decision: DECISIONS.has(decision) ? decision : 'other', channel });
      decisionTime.observe(Math.max(0, seconds));
    },
    approvalExpired: () => expired.inc(),
    notice: (outcome) => notices.inc({ outcome }),
    webhook: (outcome) => webhooks.inc({ outcome }),
    rateLimited: () => refused.inc(),
    // Error codes are the spec's fixed set; anything not shaped like one is folded.
    outboundError: (code) => outbound.inc({ kind: /^[a-z_]{1,40}$/.test(code) ? code : 'other' }),
    outcomeUnknown: (path) => unknown.inc({ path }),
    watch(from) {
      Object.assign(sources, from);
    },
  };
}
