// Edit before approve (issue 31): the approver narrows what the agent asked for; the gateway
// re-derives the keys and re-checks; what runs, is audited and remembered is the edited request.
// Real gateway, PostgreSQL, Temporal and a loopback upstream.
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { temporal } from '@temporalio/proto';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callWorkflowId } from '../../workflows/definitions.ts';
import { BIN, NODE, ROOT, runGatewayCli } from '../support/cli.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { historyText } from '../support/history.ts';
import { startReceiver } from '../support/receiver.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

const SECRET = 'sk_edit_plaintext_7f3a';

/**
 * Runs the CLI on a pseudo-terminal (util-linux `script`), typing `answer` once it asks; the
 * terminal's output (stdout and stderr together) comes back as `output`.
 */
function onTerminal(args: string[], env: Record<string, string>, answer: string): Promise<{ code: number | null; output: string }> {
  const command = [NODE, BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', TERM: 'dumb', NO_COLOR: '1', ...env } });
  let output = '';
  let answered = false;
  const onData = (c: Buffer) => {
    output += c.toString();
    if (!answered && output.includes('[y/N]')) {
      answered = true;
      child.stdin.write(`${answer}\n`);
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output })));
}

describe('edit before approve', () => {
  let gw: TestGateway;
  let up: Upstream;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let admin: ReturnType<TestGateway['as']>;
  type Agent = { id: string; key: string; call: ReturnType<TestGateway['as']> };
  let agent: Agent;
  let parent: Agent;
  let child: Agent;
  const recorded: Record<string, string> = {};

  const makeAgent = async (body: Record<string, unknown>): Promise<Agent> => {
    const res = await admin('POST', '/v1/identities/agents', body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return { id: res.body.identity.id as string, key: res.body.key.token as string, call: gw.as(res.body.key.token) };
  };
  const pending = async (who: Agent, body: Record<string, unknown>) => {
    const res = await who.call('POST', '/v1/actions/call', body);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return { approvalId: res.body.approval_id as string, callId: res.body.call_id as string };
  };
  const hitsTo = (p: string) => up.requests.filter((r) => r.url.startsWith(p));
  /** The auto-run execution has finished (a resume before that would find it in flight). */
  const executed = (approvalId: string) => until(() => admin('GET', `/v1/approvals/${approvalId}`), (r) => r.body.execution?.status === 'executed', 30_000);
  const auditRows = (approvalId: string) =>
    gw.pool.any(sql.type(z.object({ event: z.string(), decision: z.string().nullable(), details: z.any() }))`
      SELECT event, decision, details FROM audit_log WHERE approval_id = ${approvalId} ORDER BY id`);

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1,localhost' } });
    admin = gw.as(gw.adminToken);
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: SECRET })).status).toBe(201);
    expect((await admin('PATCH', '/v1/org/settings', { max_pending_per_agent: 100 })).status).toBe(200);
    receiver = await startReceiver();
    const hook = await admin('POST', '/v1/webhooks', { url: `${receiver.url}/hooks`, events: ['approval.resolved'] });
    expect(hook.status, hook.text).toBe(201);
    agent = await makeAgent({ name: 'payer' });
    parent = await makeAgent({ name: 'lead' });
    child = await makeAgent({ name: 'helper', parent_id: parent.id });
  });
  afterAll(async () => {
    if (process.env.RECORD_HISTORIES && gw) {
      const dir = path.resolve(import.meta.dirname, '..', 'fixtures', 'histories');
      for (const [shape, callId] of Object.entries(recorded)) {
        const history = await gw.temporal.workflow.getHandle(callWorkflowId(callId)).fetchHistory();
        await writeFile(path.join(dir, `${process.env.RECORD_HISTORIES}-edited-${shape}.json`), JSON.stringify(temporal.api.history.v1.History.fromObject(history as never).toJSON()));
      }
    }
    await gw?.stop();
    await up?.close();
    await receiver?.close();
  });

  it('runs the edited raw request once, and the agent, the approval, the audit and the event stream all say what changed', async () => {
    const { approvalId, callId } = await pending(agent, { service: 'http', method: 'POST', path: `${up.url}/transfer`, body: { amount: 5000, to: 'acct-9' } });
    const resolved = await admin('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'allow_once', request: { body: { amount: 50, to: 'acct-9' } } });
    expect(resolved.status, JSON.stringify(resolved.body)).toBe(200);
    const diff = [{ field: 'body.amount', before: 5000, after: 50 }];
    expect(resolved.body).toMatchObject({ status: 'allowed', modified_by_approver: true, diff, edited_permission_keys: [`http:POST:127.0.0.1:${up.port}/transfer`] });

    // auto_call_on_approve: the workflow sends the edited request, exactly once.
    await executed(approvalId);
    const resumed = await agent.call('POST', '/v1/actions/call', { approval_id: approvalId });
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'called', modified_by_approver: true, diff, result: { status_code: 200 } });
    expect(hitsTo('/transfer').map((r) => JSON.parse(r.body))).toEqual([{ amount: 50, to: 'acct-9' }]);

    const view = await admin('GET', `/v1/approvals/${approvalId}`);
    expect(view.body).toMatchObject({
      modified_by_approver: true,
      diff,
      action: { request: { body: { amount: 5000, to: 'acct-9' } } },
      edited_request: { method: 'POST', body: { amount: 50, to: 'acct-9' } },
      execution: { status: 'executed' },
    });

    const audit = await until(() => auditRows(approvalId), (rows) => rows.some((r) => r.event === 'execution.executed'));
    expect(audit.find((r) => r.event === 'approval.resolved')?.details).toMatchObject({ outcome: 'allowed with changes', modified_by_approver: true, diff });
    expect(audit.find((r) => r.event === 'execution.executed')?.details).toMatchObject({ modified_by_approver: true, diff, request: { body: { amount: 50 } } });

    // The people's event stream (GET /v1/events replays these rows) and the webhooks carry the same
    // data. The execution's event is written after its audit row: waited for as the audit row is.
    const events = await until(
      () => gw.pool.any(sql.type(z.object({ type: z.string(), data: z.any() }))`
        SELECT type, data FROM user_events WHERE approval_id = ${approvalId} ORDER BY id`),
      (rows) => rows.some((e) => e.type === 'approval.executed'),
    );
    expect(events.find((e) => e.type === 'approval.resolved')?.data).toMatchObject({ modified_by_approver: true, diff });
    expect(events.find((e) => e.type === 'approval.executed')?.data).toMatchObject({ modified_by_approver: true, diff, execution: { status: 'executed' } });
    // The webhook: the approval.resolved delivery carries the diff and the edited keys.
    const delivered = await until(async () => receiver.received.filter((r) => r.body.includes(approvalId)), (rs) => rs.length > 0, 30_000);
    expect(JSON.parse(delivered[0]!.body)).toMatchObject({ type: 'approval.resolved', data: { approval_id: approvalId, modified_by_approver: true, diff, edited_permission_keys: [`http:POST:127.0.0.1:${up.port}/transfer`] } });
    recorded['allowed-once'] = callId;
  });

  it('refuses a widening edit with 422 edit_widens_request naming the key, and nothing runs', async () => {
    const { approvalId } = await pending(agent, { service: 'http', method: 'GET', path: `${up.url}/ledger/acct-9` });
    const widen = async (request: Record<string, unknown>, key: string) => {
      const res = await admin('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'allow_once', request });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'edit_widens_request', details: { key } });
      expect(res.body.error.message).toContain(key);
    };
    await widen({ url: `http://localhost:${up.port}/ledger/acct-9` }, `http:GET:localhost:${up.port}/ledger/acct-9`);
    await widen({ url: `${up.url}/ledger` }, `http:GET:127.0.0.1:${up.port}/ledger`);
    await widen({ method: 'DELETE' }, `http:DELETE:127.0.0.1:${up.port}/ledger/acct-9`);

    // A parameter that moves the permission key (the scope parameter): refused just the same.
    const action = await pending(agent, { service: 'widgets', action: 'create_item', params: { name: 'report', folder: 'drafts' } });
    const broad = await admin('POST', `/v1/approvals/${action.approvalId}/resolve`, { decision: 'allow_once', params: { name: '*' } });
    expect(broad.status, JSON.stringify(broad.body)).toBe(422);
    expect(broad.body.error).toMatchObject({ code: 'edit_widens_request', details: { key: 'widgets:create_item:%2A' } });

    expect(hitsTo('/ledger')).toHaveLength(0);
    expect(hitsTo('/items')).toHaveLength(0);
    for (const id of [approvalId, action.approvalId]) {
      expect((await admin('GET', `/v1/approvals/${id}`)).body).toMatchObject({ status: 'pending' });
      expect((await auditRows(id)).map((r) => r.event)).toEqual(['approval.raised']);
    }
  });

  it('refuses an invalid edit with 400 (schema, credentials, shape) and an approval no longer pending with 409', async () => {
    const { approvalId } = await pending(agent, { service: 'widgets', action: 'create_item', params: { name: 'invoice', folder: 'inbox' } });
    const bad = async (body: Record<string, unknown>, field?: string) => {
      const res = await admin('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'allow_once', ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      if (field) expect(JSON.stringify(res.body.error.details)).toContain(field);
    };
    await bad({ params: { folder: 42 } }, 'folder');
    await bad({ params: { colour: 'red' } }, 'colour');
    await bad({ request: { body: { name: 'x' } } }, 'request');
    await bad({ params: { folder: 'inbox' } }, 'params'); // changes nothing
    await bad({ params: { folder: 'x' }, surprise: true });
    const deny = await admin('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'deny', params: { folder: 'x' } });
    expect(deny.status).toBe(400);

    const raw = await pending(agent, { service: 'http', method: 'POST', path: `${up.url}/notes`, body: { text: 'hi' } });
    const cred = await admin('POST', `/v1/approvals/${raw.approvalId}/resolve`, { decision: 'allow_once', request: { headers: { Authorization: 'Bearer typed-by-approver' } } });
    expect(cred.status).toBe(400);
    expect(cred.body.error.details).toMatchObject({ field: 'request.headers.Authorization' });

    expect((await admin('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'deny' })).status).toBe(200);
    const late = await admin('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'allow_once', params: { folder: 'archive' } });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: 'conflict', details: { status: 'denied' } });
    expect(hitsTo('/items')).toHaveLength(0);
    expect(hitsTo('/notes')).toHaveLength(0);
  });

  it('lets an agent resolver allow a key it could grant, and remembers the edited request\'s tier, never the original\'s', async () => {
    // The lead may create any item; its helper asked for "scratch": the lead narrows it to "final".
    expect((await admin('POST', `/v1/identities/${parent.id}/rules`, { effect: 'allow', pattern: 'widgets:create_item:*' })).status).toBe(201);
    const { approvalId, callId } = await pending(child, { service: 'widgets', action: 'create_item', params: { name: 'scratch', password: SECRET } });
    const original = await parent.call('POST', `/v1/approvals/${approvalId}/resolve`, {
      decision: 'allow_always',
      params: { name: 'final' },
      remember_keys: ['widgets:create_item:scratch'],
      ttl: '1h',
    });
    expect(original.status, JSON.stringify(original.body)).toBe(400);
    expect(original.body.error.details).toMatchObject({ reason: 'invalid_remember_keys' });

    const res = await parent.call('POST', `/v1/approvals/${approvalId}/resolve`, {
      decision: 'allow_always',
      params: { name: 'final' },
      remember_keys: ['widgets:create_item:final'],
      ttl: '1h',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ modified_by_approver: true, edited_permission_keys: ['widgets:create_item:final'], diff: [{ field: 'body.name', before: 'scratch', after: 'final' }] });
    await until(async () => hitsTo('/items').length, (n) => n > 0);
    expect(hitsTo('/items').map((r) => JSON.parse(r.body))).toEqual([{ name: 'final', password: SECRET }]);
    const rules = await until(
      () => admin('GET', `/v1/identities/${child.id}/rules`),
      (r) => JSON.stringify(r.body).includes('widgets:create_item:final'),
    );
    expect(JSON.stringify(rules.body)).not.toContain('widgets:create_item:scratch');

    // The redacted field never shows; neither the workflow's history nor any audit row holds it.
    const view = await admin('GET', `/v1/approvals/${approvalId}`);
    expect(JSON.stringify(view.body)).not.toContain(SECRET);
    expect(JSON.stringify(await auditRows(approvalId))).not.toContain(SECRET);
    const history = await gw.temporal.workflow.getHandle(callWorkflowId(callId)).fetchHistory();
    expect(historyText(history)).not.toContain(SECRET);
    expect(gw.logs.join('\n')).not.toContain(SECRET);
    // The vault secret went upstream, injected by the gateway into the edited request.
    expect(hitsTo('/items').at(-1)!.headers['x-api-key']).toBe(SECRET);
    recorded['remember'] = callId;
  });

  it('takes the same edit through MCP-style resolution for a person resolving a service action, and refuses a person\'s widening edit', async () => {
    // A person (the user) may not widen by an edit: rules are how a person grants more.
    const { approvalId } = await pending(agent, { service: 'widgets', action: 'create_item', params: { name: 'memo', folder: 'a' } });
    const widen = await admin('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'allow_once', params: { name: 'memo2' } });
    expect(widen.status).toBe(422);
    const ok = await admin('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'allow', params: { folder: 'b' } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.diff).toEqual([{ field: 'body.folder', before: 'a', after: 'b' }]);
    await until(async () => hitsTo('/items').filter((r) => r.body.includes('memo')).length, (n) => n > 0);
    expect(hitsTo('/items').filter((r) => r.body.includes('memo')).map((r) => JSON.parse(r.body))).toEqual([{ name: 'memo', folder: 'b' }]);
  });

  it('CLI: gateway approve ID --set key=value … and --body @file.json allow with changes', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'gateway-edit-cli-'));
    const person = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'config') };
    const login = await runGatewayCli(['login', '--url', gw.url, '--email', ADMIN_EMAIL], { env: person, stdin: ADMIN_PASSWORD });
    expect(login.code, login.stderr).toBe(0);

    const raw = await pending(agent, { service: 'http', method: 'POST', path: `${up.url}/cli-transfer`, body: { amount: 900, to: 'acct-1' } });
    const set = await runGatewayCli(['approve', raw.approvalId, '--set', 'amount=90', '--yes'], { env: person });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toContain('Changes (original → edited):\n  body.amount: 900 → 90');
    expect(set.stderr).toContain(`Allowed ${raw.approvalId} with changes`);
    expect(set.stdout).toContain('body.amount: 900 → 90');
    await until(async () => hitsTo('/cli-transfer').length, (n) => n > 0);
    const shown = await runGatewayCli(['approvals', 'show', raw.approvalId], { env: person });
    expect(shown.stdout).toContain('allowed with changes: POST');
    expect(shown.stdout).toContain('  body.amount: 900 → 90');
    expect(hitsTo('/cli-transfer').map((r) => JSON.parse(r.body))).toEqual([{ amount: 90, to: 'acct-1' }]);

    const other = await pending(agent, { service: 'http', method: 'POST', path: `${up.url}/cli-body`, body: { amount: 700, to: 'acct-2' } });
    const file = path.join(home, 'body.json');
    await writeFile(file, JSON.stringify({ amount: 7, to: 'acct-2' }));
    const body = await runGatewayCli(['approve', other.approvalId, '--body', `@${file}`, '--json', '--yes'], { env: person });
    expect(body.code, body.stderr).toBe(0);
    expect(JSON.parse(body.stdout)).toMatchObject({ modified_by_approver: true, diff: [{ field: 'body.amount', before: 700, after: 7 }] });
    await until(async () => hitsTo('/cli-body').length, (n) => n > 0);
    expect(hitsTo('/cli-body').map((r) => JSON.parse(r.body))).toEqual([{ amount: 7, to: 'acct-2' }]);

    // A widening edit through the CLI: the gateway's refusal, exit code non-zero, nothing sent.
    const action = await pending(agent, { service: 'widgets', action: 'create_item', params: { name: 'cli-note' } });
    const wide = await runGatewayCli(['approve', action.approvalId, '--set', 'name=cli-other', '--yes'], { env: person });
    expect(wide.code).not.toBe(0);
    expect(wide.stderr).toContain('widgets:create_item:cli-other');
    expect(hitsTo('/items').filter((r) => r.body.includes('cli-'))).toHaveLength(0);
  });

  it('refuses an edit adding a body field the raw request lacks (400 naming it), and takes the raw call\'s `path` spelling', async () => {
    const { approvalId } = await pending(agent, { service: 'http', method: 'POST', path: `${up.url}/typo`, body: { amount: 100, to: 'acct-3', meta: { ref: 'r1' } } });
    const refused = async (route: 'resolve' | 'edit-preview', body: unknown, field: string) => {
      const res = await admin('POST', `/v1/approvals/${approvalId}/${route}`, { ...(route === 'resolve' ? { decision: 'allow_once' } : {}), request: { body } });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', details: { field: `request.${field}` } });
      expect(res.body.error.message).toContain(field);
    };
    await refused('resolve', { amount: 100, to: 'acct-3', meta: { ref: 'r1' }, amout: 5 }, 'body.amout');
    await refused('edit-preview', { amount: 5, meta: { ref: 'r1', note: 'x' } }, 'body.meta.note');
    expect((await admin('GET', `/v1/approvals/${approvalId}`)).body.status).toBe('pending');

    // `path`, as the raw call named it (SPEC: service, method, path); `url` is the same field, never both.
    const both = await admin('POST', `/v1/approvals/${approvalId}/edit-preview`, { request: { path: `${up.url}/typo`, url: `${up.url}/typo` } });
    expect(both.status).toBe(400);
    expect(both.body.error.details.issues).toEqual([expect.objectContaining({ path: 'request.url', message: 'give path or url (the same field), not both' })]);
    const notUrl = await admin('POST', `/v1/approvals/${approvalId}/edit-preview`, { request: { path: '/typo' } });
    expect(notUrl.status).toBe(400);
    expect(notUrl.body.error.details.issues).toEqual([expect.objectContaining({ path: 'request.path' })]);
    const res = await admin('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'allow_once', request: { path: `${up.url}/typo?dry_run=1`, body: { amount: 5, to: 'acct-3' } } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.diff).toEqual([
      { field: 'body.amount', before: 100, after: 5 },
      { field: 'body.meta.ref', before: 'r1' },
      { field: 'url', before: `${up.url}/typo`, after: `${up.url}/typo?dry_run=1` },
    ]);
    await until(async () => hitsTo('/typo').length, (n) => n > 0);
    expect(hitsTo('/typo').map((r) => [r.url, JSON.parse(r.body)])).toEqual([['/typo?dry_run=1', { amount: 5, to: 'acct-3' }]]);
  });

  it('CLI: refuses a --set field the body lacks or the action\'s schema lacks, naming it; shows the diff and asks (or needs --yes) before allowing', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'gateway-edit-confirm-'));
    const person = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'config') };
    expect((await runGatewayCli(['login', '--url', gw.url, '--email', ADMIN_EMAIL], { env: person, stdin: ADMIN_PASSWORD })).code).toBe(0);
    const raw = await pending(agent, { service: 'http', method: 'POST', path: `${up.url}/confirm`, body: { amount: 100, to: 'acct-4' } });
    const status = async () => (await admin('GET', `/v1/approvals/${raw.approvalId}`)).body.status as string;

    const typo = await runGatewayCli(['approve', raw.approvalId, '--set', 'amout=5', '--yes'], { env: person });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('--set amout: the agent\'s body has no field amout (its fields: amount, to)');
    const file = path.join(home, 'typo.json');
    await writeFile(file, JSON.stringify({ amount: 100, to: 'acct-4', amout: 5 }));
    const typoBody = await runGatewayCli(['approve', raw.approvalId, '--body', `@${file}`, '--yes'], { env: person });
    expect(typoBody.code).toBe(2);
    expect(typoBody.stderr).toContain('body.amout is not in the agent\'s request');

    // Not a terminal and no --yes: the diff is shown, nothing is allowed.
    const unseen = await runGatewayCli(['approve', raw.approvalId, '--set', 'amount=5'], { env: person });
    expect(unseen.code).toBe(2);
    expect(unseen.stderr).toContain('Changes (original → edited):\n  body.amount: 100 → 5');
    expect(unseen.stderr).toContain('--yes');
    expect(await status()).toBe('pending');

    // On a terminal it asks: "n" leaves it waiting, "y" allows.
    const declined = await onTerminal(['approve', raw.approvalId, '--set', 'amount=5'], person, 'n');
    expect(declined.code, declined.output).toBe(1);
    expect(declined.output).toContain('body.amount: 100 → 5');
    expect(declined.output).toContain(`Not allowed: ${raw.approvalId} still waits.`);
    expect(await status()).toBe('pending');
    expect(hitsTo('/confirm')).toHaveLength(0);
    const allowed = await onTerminal(['approve', raw.approvalId, '--set', 'amount=5'], person, 'y');
    expect(allowed.code, allowed.output).toBe(0);
    expect(allowed.output).toContain(`Allowed ${raw.approvalId} with changes`);
    await until(async () => hitsTo('/confirm').length, (n) => n > 0);
    expect(hitsTo('/confirm').map((r) => JSON.parse(r.body))).toEqual([{ amount: 5, to: 'acct-4' }]);

    // A service action: the gateway refuses a parameter its schema lacks, and says which.
    const action = await pending(agent, { service: 'widgets', action: 'create_item', params: { name: 'cli-schema' } });
    const unknown = await runGatewayCli(['approve', action.approvalId, '--set', 'colour=red', '--yes'], { env: person });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('colour is not a parameter of widgets.create_item');
    expect((await admin('GET', `/v1/approvals/${action.approvalId}`)).body.status).toBe('pending');
  });

  it('MCP: gateway_approve takes the same edit, and the agent\'s resume through gateway_call carries modified_by_approver and the diff', async () => {
    const connect = async (token: string) => {
      const client = new Client({ name: 'edit-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      return client;
    };
    const lead = await connect(parent.key);
    const helper = await connect(child.key);
    try {
      const tool = (await lead.listTools()).tools.find((t) => t.name === 'gateway_approve')!;
      expect(Object.keys(tool.inputSchema.properties!)).toEqual(expect.arrayContaining(['params', 'request']));
      const { approvalId } = await pending(child, { service: 'widgets', action: 'create_item', params: { name: 'mcp-draft', folder: 'x' } });
      const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
      const wide = await call(lead, 'gateway_approve', { approval_id: approvalId, resolution: 'allow', request: { method: 'DELETE' } });
      expect(wide.isError).toBe(true);
      const resolved = await call(lead, 'gateway_approve', { approval_id: approvalId, resolution: 'allow', params: { folder: 'y' } });
      expect(resolved.isError, JSON.stringify(resolved)).toBeFalsy();
      expect(resolved.structuredContent).toMatchObject({ status: 'allowed', modified_by_approver: true, diff: [{ field: 'body.folder', before: 'x', after: 'y' }] });
      await executed(approvalId);
      const resumed = await call(helper, 'gateway_call', { approval_id: approvalId });
      expect(resumed.structuredContent).toMatchObject({ status: 'called', modified_by_approver: true, diff: [{ field: 'body.folder', before: 'x', after: 'y' }] });
      expect(hitsTo('/items').filter((r) => r.body.includes('mcp-draft')).map((r) => JSON.parse(r.body))).toEqual([{ name: 'mcp-draft', folder: 'y' }]);
    } finally {
      await lead.close();
      await helper.close();
    }
  });

  it('serves the dashboard its edit form and a preview that decides nothing, refusing as resolve would', async () => {
    const { approvalId } = await pending(agent, { service: 'widgets', action: 'create_item', params: { name: 'form-item', folder: 'f1', password: SECRET } });
    const form = await admin('GET', `/v1/approvals/${approvalId}/edit`);
    expect(form.status, JSON.stringify(form.body)).toBe(200);
    expect(form.body).toMatchObject({ kind: 'params', editable: true });
    const byName = Object.fromEntries(form.body.parameters.map((p: any) => [p.name, p]));
    expect(byName.name).toMatchObject({ in: 'body', required: true, type: 'string', value: 'form-item', redacted: false });
    expect(byName.folder).toMatchObject({ in: 'body', required: false, value: 'f1' });
    expect(byName.password).toMatchObject({ redacted: true });
    expect(byName.password.value).toBeUndefined();
    expect(JSON.stringify(form.body)).not.toContain(SECRET);

    const preview = await admin('POST', `/v1/approvals/${approvalId}/edit-preview`, { params: { folder: 'f2' } });
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(preview.body).toEqual({ permission_keys: ['widgets:create_item:form-item'], action_description: 'Create item "form-item" in f2', diff: [{ field: 'body.folder', before: 'f1', after: 'f2' }] });
    expect((await admin('POST', `/v1/approvals/${approvalId}/edit-preview`, { params: { name: 'other' } })).status).toBe(422);
    expect((await admin('POST', `/v1/approvals/${approvalId}/edit-preview`, { params: { folder: 7 } })).status).toBe(400);
    expect((await admin('POST', `/v1/approvals/${approvalId}/edit-preview`, {})).status).toBe(400);
    // The requester may neither read the form nor preview (and agents use resolve, not these routes).
    expect((await agent.call('GET', `/v1/approvals/${approvalId}/edit`)).status).toBe(403);
    // Nothing was decided: still pending, nothing sent.
    expect((await admin('GET', `/v1/approvals/${approvalId}`)).body.status).toBe('pending');
    expect(hitsTo('/items').filter((r) => r.body.includes('form-item'))).toHaveLength(0);

    const raw = await pending(agent, { service: 'http', method: 'PUT', path: `${up.url}/doc?v=2`, headers: { 'X-Trace': 'abc' }, body: { title: 'T' } });
    const rawForm = await admin('GET', `/v1/approvals/${raw.approvalId}/edit`);
    expect(rawForm.body).toEqual({ kind: 'request', editable: true, request: { method: 'PUT', url: `${up.url}/doc?v=2`, headers: ['X-Trace'], body: { title: 'T' } } });
    expect((await admin('POST', `/v1/approvals/${raw.approvalId}/resolve`, { decision: 'deny' })).status).toBe(200);
    const late = await admin('POST', `/v1/approvals/${raw.approvalId}/edit-preview`, { request: { body: { title: 'U' } } });
    expect(late.status).toBe(409);
  });

  it('keeps a per-call vault secret injected by the gateway in the edited raw request: the approver can neither type it nor see it', async () => {
    const BANK = 'bank-key-plaintext-4b8e';
    expect((await admin('POST', '/v1/secrets', { name: 'BANK_KEY', value: BANK, allowed_hosts: ['127.0.0.1'] })).status).toBe(201);
    const { approvalId, callId } = await pending(agent, {
      service: 'http',
      method: 'POST',
      path: `${up.url}/payout`,
      body: { amount: 300 },
      secret: { name: 'BANK_KEY', in: 'header', param: 'X-Bank-Key' },
    });
    const typed = await admin('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'allow_once', request: { headers: { 'x-bank-key': 'typed-by-a-person' } } });
    expect(typed.status).toBe(400);
    expect(typed.body.error.details).toMatchObject({ field: 'request.headers.x-bank-key' });

    const res = await admin('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'allow_once', request: { body: { amount: 30 } } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.edited_permission_keys).toEqual([`http:POST:127.0.0.1:${up.port}/payout`, `secret:BANK_KEY:127.0.0.1:${up.port}`]);
    await executed(approvalId);
    const sent = hitsTo('/payout');
    expect(sent.map((r) => JSON.parse(r.body))).toEqual([{ amount: 30 }]);
    expect(sent[0]!.headers['x-bank-key']).toBe(BANK);

    const view = await admin('GET', `/v1/approvals/${approvalId}`);
    expect(view.body.edited_request).toMatchObject({ body: { amount: 30 }, secret: { name: 'BANK_KEY', in: 'header', param: 'X-Bank-Key' } });
    const history = await gw.temporal.workflow.getHandle(callWorkflowId(callId)).fetchHistory();
    for (const text of [JSON.stringify(view.body), JSON.stringify(await auditRows(approvalId)), historyText(history), gw.logs.join('\n')]) expect(text).not.toContain(BANK);
  });
});
