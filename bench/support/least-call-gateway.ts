// The least a gateway process can do for one covered call of issue 28's shape, started by
// bench/least-call.ts: plain node:http, pg's own Pool, no framework, validation, vault, logging or
// search attributes. Per call: one statement authenticates the key and inserts the call's row,
// the workflow starts eagerly on the worker's own connection, its one local activity writes the
// send mark (one statement), sends the upstream request, writes the final state with its audit
// row (one statement) and hands the answer to the HTTP handler in-process. Three statements —
// fewer than any implementation that keeps the durable mark can make — and the same Temporal
// shape as the gateway's covered call. Not a gateway: a measuring stick for what one costs.
// LEAST_WORKFLOW=call runs the gateway's own `callWorkflow` instead of the one-activity
// benchmark workflow (started with the gateway's search attributes and memo, its local
// activity answered by the same three statements): what our workflow costs over the least one.
// LEAST_WORKFLOW=operator: the one-activity workflow with what operators read of a call (the
// search attributes and memo at start, the status upserted, a result) and nothing else;
// LEAST_OPERATOR_PARTS=memo or search-attributes starts it with only that one of the two.
// Besides covered calls (any other POST), `POST /pending` parks a call as pending the least way and
// `POST /decide/<id>` allows it (bench:least's allowed → upstream figure).
// LEAST_STACK names the parts of the gateway's stack (DESIGN.md §1) this process runs on instead
// of the bare ones, comma-separated: `express` routes through an Express 5 app with its JSON body
// parser; `slonik` sends the same three statements through the gateway's own slonik pool
// (server/db/pool.ts: zod-checked rows, named prepared statements). Empty: node:http and pg.
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import express from 'express';
import pg from 'pg';
import { sql } from 'slonik';
import { z } from 'zod';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { createDatabasePool } from '../../server/db/pool.ts';
import { prepared } from '../../server/db/prepared.ts';
import { createWatchedWorker } from '../../server/temporal/workflow-threads.ts';
import { benchWorkflowBundle } from './workflow-bundle.ts';
import { CALL_SEARCH_ATTRIBUTES as SA, type CallSpec, type CheckResult, type ExecuteCallResult } from '../../workflows/definitions.ts';
import { benchmarkDecideUpdate, type BenchmarkActivities } from '../workflows/definitions.ts';

function required(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
}

Runtime.install({ logger: new DefaultLogger('WARN') });
const taskQueue = required('LEAST_TASK_QUEUE');
const upstream = new URL(required('LEAST_UPSTREAM_URL'));
const STACK_PARTS = ['express', 'slonik'] as const;
const stack = new Set((process.env.LEAST_STACK ?? '').split(',').filter(Boolean));
for (const part of stack) if (!(STACK_PARTS as readonly string[]).includes(part)) throw new Error(`LEAST_STACK parts are ${STACK_PARTS.join(', ')} (got ${JSON.stringify(part)})`);
const databaseUrl = required('LEAST_DATABASE_URL');
const pool = stack.has('slonik') ? null : new pg.Pool({ connectionString: databaseUrl, max: 10 });
const slonikPool = stack.has('slonik') ? await createDatabasePool(databaseUrl, { maxPoolSize: 10 }) : null;
const connection = await NativeConnection.connect({ address: required('LEAST_TEMPORAL_ADDRESS') });
const client = new Client({ connection });

/** What a call request carries (the benchmark only ever sends well-formed ones). */
type CallBody = { service: string; action: string; params: { id: string } };

/** The least gateway's statements, each one round trip, through pg or (LEAST_STACK=slonik) slonik. */
interface Statements {
  /** Authenticates the key and inserts the call's row: false when the key is unknown or revoked. */
  insert(id: string, keyHash: string, path: string): Promise<boolean>;
  /** The send mark (with an allow's `status`): the path to send, null when marked already. */
  mark(id: string, status: string | null): Promise<string | null>;
  /** The final state with its audit row. */
  finish(id: string, answer: string, event: string): Promise<void>;
  park(id: string): Promise<void>;
}

const INSERT = 'INSERT INTO least_calls (id, key_hash, path) SELECT $1, hash, $3 FROM least_keys WHERE hash = $2 AND NOT revoked RETURNING id';
const MARK = 'UPDATE least_calls SET marked = true, status = COALESCE($2, status) WHERE id = $1 AND NOT marked RETURNING path';
const FINISH = `WITH done AS (UPDATE least_calls SET status = 'called', result = $2 WHERE id = $1 RETURNING id)
     INSERT INTO least_audit (call_id, event) SELECT id, $3 FROM done`;
const PARK = `UPDATE least_calls SET status = 'pending_approval' WHERE id = $1`;

const pgStatements = (db: pg.Pool): Statements => ({
  insert: async (id, keyHash, path) => (await db.query(INSERT, [id, keyHash, path])).rowCount === 1,
  mark: async (id, status) => ((await db.query(MARK, [id, status])).rows[0] as { path: string } | undefined)?.path ?? null,
  finish: async (id, answer, event) => void (await db.query(FINISH, [id, answer, event])),
  park: async (id) => void (await db.query(PARK, [id])),
});

/** The same statements the gateway's way: typed rows, named prepared statements. */
const slonikStatements = (db: NonNullable<typeof slonikPool>): Statements => ({
  insert: async (id, keyHash, path) =>
    (await db.maybeOne(prepared(sql.type(z.object({ id: z.string() }))`
      INSERT INTO least_calls (id, key_hash, path) SELECT ${id}, hash, ${path} FROM least_keys WHERE hash = ${keyHash} AND NOT revoked RETURNING id`))) !== null,
  mark: async (id, status) =>
    (await db.maybeOne(prepared(sql.type(z.object({ path: z.string() }))`
      UPDATE least_calls SET marked = true, status = COALESCE(${status}::text, status) WHERE id = ${id} AND NOT marked RETURNING path`)))?.path ?? null,
  finish: async (id, answer, event) =>
    void (await db.query(prepared(sql.unsafe`
      WITH done AS (UPDATE least_calls SET status = 'called', result = ${answer}::jsonb WHERE id = ${id} RETURNING id)
      INSERT INTO least_audit (call_id, event) SELECT id, ${event} FROM done`))),
  park: async (id) => void (await db.query(prepared(sql.unsafe`UPDATE least_calls SET status = 'pending_approval' WHERE id = ${id}`))),
});

const statements = slonikPool ? slonikStatements(slonikPool) : pgStatements(pool!);

/** The callers waiting for their call's in-process answer, by call id. */
const waiting = new Map<string, (answer: string) => void>();

function upstreamGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: upstream.hostname, port: upstream.port, path, method: 'GET', headers: { authorization: 'Bearer upstream-token' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const WORKFLOWS = ['least', 'operator', 'call'] as const;
const workflow = process.env.LEAST_WORKFLOW ?? 'least';
if (!(WORKFLOWS as readonly string[]).includes(workflow)) throw new Error(`LEAST_WORKFLOW must be one of ${WORKFLOWS.join(', ')} (got ${JSON.stringify(workflow)})`);

/**
 * The least send: one statement writes the send mark (with `status`, an allow's decision), then
 * the request, then one statement writes the final state with its audit row `event`. Null when
 * the call was marked already: a re-run sends nothing.
 */
async function markSendRecord(id: string, event: string, status?: string): Promise<{ status: number; result: unknown; answer: string } | null> {
  const path = await statements.mark(id, status ?? null);
  if (!path) return null;
  const sent = await upstreamGet(path);
  const result = JSON.parse(sent.body) as unknown;
  const answer = JSON.stringify({ status: 'called', upstream_status: sent.status, result });
  await statements.finish(id, answer, event);
  return { status: sent.status, result, answer };
}

const activities = {
  async benchmarkAnswer(id: string) {
    const done = await markSendRecord(id, 'call.called');
    if (done) waiting.get(id)?.(done.answer);
  },
  // The one activity the gateway's workflow runs for a covered call.
  async checkThenExecute(input: { spec: CallSpec }): Promise<{ check: CheckResult; executed: ExecuteCallResult | null }> {
    const done = await markSendRecord(input.spec.callId, 'call.called');
    if (!done) throw new Error('marked already');
    waiting.get(input.spec.callId)?.(done.answer);
    const result = { status_code: done.status, duration_ms: 1, body: done.result };
    return { check: { outcome: 'covered' }, executed: { outcome: { status: 'called', result, action_description: input.spec.description }, httpStatusCode: done.status, executionStatus: null } };
  },
  // The least approval: parked as pending (one statement), the caller told in-process.
  async benchmarkRaise(id: string) {
    await statements.park(id);
    waiting.get(id)?.(JSON.stringify({ status: 'pending_approval', approval_id: id }));
  },
  // Allowed: the decision with the send mark (one statement), the send, the final state + audit.
  async benchmarkSendAllowed(id: string) {
    await markSendRecord(id, 'approval.executed', 'allowed');
  },
} satisfies Required<BenchmarkActivities> & Record<string, unknown>;

// The workflow sandbox as the gateway runs it (without the SDK's per-entry watchdog, its threads
// watched): the least gateway may not pay for what the gateway has shown it can do without.
const { worker } = await createWatchedWorker({ connection, taskQueue, workflowBundle: { code: (await benchWorkflowBundle()).code }, activities });

const ORG = '0d587130-dbf6-43ec-be5a-e5c580009653';
const AGENT = 'e6369d74-41e1-4edd-8136-3f10c94bccfa';
const USER = 'd87a1d34-212a-4e8e-8530-fd0c87a76635';

/** A covered call's spec as the gateway builds it (the shape of test/fixtures/histories/v9-covered.json). */
function callSpec(callId: string): CallSpec {
  return {
    callId,
    orgId: ORG,
    requesterId: AGENT,
    userId: USER,
    chain: [
      { id: AGENT, kind: 'agent', parentId: USER, inheritPermissions: false },
      { id: USER, kind: 'user', parentId: null, inheritPermissions: false },
    ],
    service: 'widgets',
    template: 'widgets',
    action: 'get_item',
    runtime: 'http',
    risk: 'read',
    approvalRisk: 'low',
    permissionKeys: ['widgets:get_item:*'],
    description: 'Read item a1',
    autoCallOnApprove: true,
    maxPendingPerAgent: 10,
    clocks: { approvalTtlMs: 900_000, executionWindowMs: 3_000, autoBubbleMs: null },
    approvalUrlBase: 'http://localhost:1',
    requestId: randomUUID(),
    verbose: false,
    callDigest: 'fMns5V83KHoCoruEss49fLArJeHf1ylNreMS-VMWnA0',
  } as CallSpec;
}

const OPERATOR_PARTS = process.env.LEAST_OPERATOR_PARTS ?? 'both';
if (!['both', 'memo', 'search-attributes'].includes(OPERATOR_PARTS)) throw new Error(`LEAST_OPERATOR_PARTS must be both, memo or search-attributes (got ${JSON.stringify(OPERATOR_PARTS)})`);

/** The start options operators read: `parts` both (as the gateway starts a call), or one of the two. */
function callOptions(callId: string, parts = 'both') {
  const searchAttributes = {
    typedSearchAttributes: [
      { key: SA.org, value: ORG },
      { key: SA.agent, value: AGENT },
      { key: SA.service, value: 'widgets' },
      { key: SA.action, value: 'get_item' },
      { key: SA.status, value: 'checking' },
    ],
  };
  const memo = { memo: { description: `Read item ${callId.slice(0, 2)}` } };
  return {
    workflowIdConflictPolicy: 'FAIL' as const,
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    ...(parts === 'memo' ? {} : searchAttributes),
    ...(parts === 'search-attributes' ? {} : memo),
  };
}

type Answer = { status: number; body: string };

/**
 * One statement authenticates the key and inserts the call's row; then `start` starts its
 * workflow eagerly, and the answer comes in-process from the workflow's local activity.
 */
async function insertStartAndWait(token: string, item: string, start: (id: string) => Promise<unknown>): Promise<Answer> {
  const id = randomUUID();
  const hash = createHash('sha256').update(token).digest('hex');
  if (!(await statements.insert(id, hash, `/items/${encodeURIComponent(item)}`))) return { status: 401, body: '{"error":{"code":"unauthenticated"}}' };
  const answered = new Promise<string>((resolve) => waiting.set(id, resolve));
  try {
    await start(id);
    return { status: 200, body: await answered };
  } finally {
    waiting.delete(id);
  }
}

/** A covered call, answered with its outcome. */
const covered = (token: string, body: CallBody): Promise<Answer> =>
  insertStartAndWait(token, body.params.id, (id) => {
    const eager = { taskQueue, requestEagerStart: true };
    if (workflow === 'call') return client.workflow.start('callWorkflow', { ...eager, workflowId: `call-${id}`, args: [callSpec(id)], ...callOptions(id) });
    if (workflow === 'operator') return client.workflow.start('benchmarkOperatorShapeWorkflow', { ...eager, workflowId: `op-${id}`, args: [id], ...callOptions(id, OPERATOR_PARTS) });
    return client.workflow.start('benchmarkLocalAnswerWorkflow', { ...eager, workflowId: `least-${id}`, args: [id] });
  });

/** An uncovered call, answered once it is parked as pending. */
const pending = (token: string, body: CallBody): Promise<Answer> =>
  insertStartAndWait(token, body.params.id, (id) => {
    const operatorShape = workflow === 'operator';
    return client.workflow.start('benchmarkLeastApprovalWorkflow', { workflowId: `approval-${id}`, taskQueue, args: [id, operatorShape], requestEagerStart: true, ...(operatorShape ? callOptions(id) : {}) });
  });

/** The approver's allow: the update, answered once the workflow accepted it. */
async function decide(id: string): Promise<Answer> {
  const decision = await client.workflow.getHandle(`approval-${id}`).executeUpdate(benchmarkDecideUpdate);
  return { status: 200, body: JSON.stringify({ decision }) };
}

/** What a request asks for, answered; the same whichever stack carried it in. */
function handle(url: string, token: string, body: () => CallBody): Promise<Answer> {
  return url.startsWith('/decide/') ? decide(url.slice('/decide/'.length)) : url === '/pending' ? pending(token, body()) : covered(token, body());
}

const bearer = (header: string | undefined) => (header ?? '').replace(/^Bearer /, '');

/** Plain node:http: the body gathered and parsed by hand. */
function plainServer(): http.Server {
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = () => JSON.parse(Buffer.concat(chunks).toString('utf8')) as CallBody;
      handle(req.url ?? '', bearer(req.headers.authorization), body).then(
        (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(r.body),
        (err: Error) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: err.message })),
      );
    });
  });
}

/** Express 5 with the gateway's JSON body parser settings (server/app.ts), one router. */
function expressServer(): http.Server {
  const app = express();
  app.disable('x-powered-by');
  const routes = express.Router();
  routes.post('/{*path}', express.json({ limit: '1mb', strict: false }), async (req, res) => {
    const r = await handle(req.originalUrl, bearer(req.get('authorization')), () => req.body as CallBody);
    res.status(r.status).type('application/json').send(r.body);
  });
  app.use(routes);
  app.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(500).json({ error: err.message });
  });
  return http.createServer(app);
}

const server = stack.has('express') ? expressServer() : plainServer();
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const running = worker.run();
process.stdout.write(`ready ${(server.address() as { port: number }).port}\n`);

process.once('SIGTERM', () => {
  server.close();
  worker.shutdown();
  void running.then(async () => {
    await connection.close();
    await pool?.end();
    await slonikPool?.end();
    process.exit(0);
  });
});
