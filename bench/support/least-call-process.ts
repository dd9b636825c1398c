// Starting the least gateway (least-call-gateway.ts) in its own process, with the gateway's Node
// flags, against a given PostgreSQL database, Temporal server and upstream: `npm run bench:least`
// runs three of them, `npm run bench:call` one beside the gateway it measures.
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { GATEWAY_NODE_FLAGS } from '../../server/cluster/cluster.ts';
import { profileFlags } from '../targets.ts';

/** The one agent key the least gateway knows. */
const KEY = 'gw_least_call_bench_key';

/** The least gateway's three tables and its key, in `databaseUrl`'s database (made if missing). */
export async function createLeastSchema(databaseUrl: string): Promise<void> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query(`
      CREATE TABLE IF NOT EXISTS least_keys (hash text PRIMARY KEY, revoked boolean NOT NULL DEFAULT false);
      CREATE TABLE IF NOT EXISTS least_calls (id uuid PRIMARY KEY, key_hash text NOT NULL REFERENCES least_keys (hash), path text NOT NULL,
        marked boolean NOT NULL DEFAULT false, status text NOT NULL DEFAULT 'checking', result jsonb, created_at timestamptz NOT NULL DEFAULT now());
      CREATE TABLE IF NOT EXISTS least_audit (id bigserial PRIMARY KEY, call_id uuid NOT NULL, event text NOT NULL, at timestamptz NOT NULL DEFAULT now());`);
    await db.query('INSERT INTO least_keys (hash) VALUES ($1) ON CONFLICT DO NOTHING', [createHash('sha256').update(KEY).digest('hex')]);
  } finally {
    await db.end();
  }
}

/** A database of its own beside the gateway's (so the gateway's statement count stays its own). */
export async function createLeastDatabase(gatewayDatabaseUrl: string, name = 'least_gateway'): Promise<string> {
  const admin = new pg.Client({ connectionString: gatewayDatabaseUrl });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
  } finally {
    await admin.end();
  }
  const url = new URL(gatewayDatabaseUrl);
  url.pathname = `/${name}`;
  await createLeastSchema(url.toString());
  return url.toString();
}

export interface LeastGateway {
  pid: number;
  taskQueue: string;
  /** One covered call (`service: widgets, action: get_item`), checked for its `called` answer. */
  call(): Promise<void>;
  /** An uncovered call parked as pending, then allowed: ms from sending the allow to the upstream receiving it. */
  allowedToUpstream(): Promise<number>;
  stop(): Promise<void>;
}

export interface LeastGatewayOptions {
  name: string;
  /** `least`: the one-activity workflow; `operator`: with search attributes, memo, status, result; `call`: the gateway's callWorkflow. */
  workflow: 'least' | 'operator' | 'call';
  taskQueue: string;
  /** The parts of the gateway's stack to run on instead of node:http and pg (LEAST_STACK in least-call-gateway.ts). */
  stack?: ('express' | 'slonik')[];
  /** With `operator`: only the memo, or only the search attributes, at start (default both). */
  operatorParts?: 'both' | 'memo' | 'search-attributes';
  upstreamUrl: string;
  databaseUrl: string;
  temporalAddress: string;
  /** When a request for `path` reached the upstream (performance.now()); needed by allowedToUpstream only. */
  arrival?: (path: string) => Promise<number>;
}

const CALL_BODY = JSON.stringify({ service: 'widgets', action: 'get_item', params: { id: 'a1' } });

export async function startLeastGateway(o: LeastGatewayOptions): Promise<LeastGateway> {
  const child = spawn(process.execPath, [...GATEWAY_NODE_FLAGS, ...profileFlags(), path.join(import.meta.dirname, 'least-call-gateway.ts')], {
    env: {
      ...process.env,
      MALLOC_ARENA_MAX: '2',
      LEAST_TASK_QUEUE: o.taskQueue,
      LEAST_WORKFLOW: o.workflow,
      LEAST_OPERATOR_PARTS: o.operatorParts ?? 'both',
      LEAST_STACK: (o.stack ?? []).join(','),
      LEAST_UPSTREAM_URL: o.upstreamUrl,
      LEAST_DATABASE_URL: o.databaseUrl,
      LEAST_TEMPORAL_ADDRESS: o.temporalAddress,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((r) => child.once('exit', r));
  let port: number;
  try {
    port = await Promise.race([
      new Promise<number>((resolve) => {
        createInterface({ input: child.stdout! }).on('line', (line) => {
          const m = /^ready (\d+)$/.exec(line);
          if (m) resolve(Number(m[1]));
        });
      }),
      exited.then((code) => Promise.reject(new Error(`the least-call gateway (${o.name}) exited with ${code} before it was ready`))),
    ]);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  const base = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  const post = async (p: string, payload?: unknown) => {
    const res = await fetch(base + p, { method: 'POST', headers, body: JSON.stringify(payload ?? {}) });
    if (res.status !== 200) throw new Error(`least call (${o.name}) ${p} answered ${res.status} ${await res.text()}`);
    return (await res.json()) as { status?: string; approval_id?: string };
  };
  return {
    pid: child.pid!,
    taskQueue: o.taskQueue,
    async call() {
      const res = await fetch(`${base}/v1/actions/call`, { method: 'POST', headers, body: CALL_BODY, signal: AbortSignal.timeout(60_000) });
      const answer = (await res.json()) as { status?: string };
      if (res.status !== 200 || answer.status !== 'called') throw new Error(`least call (${o.name}) answered ${res.status} ${JSON.stringify(answer)}`);
    },
    async allowedToUpstream() {
      if (!o.arrival) throw new Error('allowedToUpstream needs the `arrival` option');
      const item = randomUUID();
      const raised = await post('/pending', { service: 'widgets', action: 'delete_item', params: { id: item } });
      if (raised.status !== 'pending_approval' || !raised.approval_id) throw new Error(`least call (${o.name}) did not go pending: ${JSON.stringify(raised)}`);
      const arrived = o.arrival(`/items/${item}`);
      const t0 = performance.now();
      await post(`/decide/${raised.approval_id}`);
      return (await arrived) - t0;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 30_000).unref());
      if ((await Promise.race([exited, timeout])) === 'timeout') {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}
