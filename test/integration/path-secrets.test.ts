// A credential in a URL path segment (issue 41 leftover): the shipped Telegram template, its server
// pointed at a loopback fake of the Bot API, sends the vault's bot token in `/bot<token>/METHOD` as
// Telegram reads it, and nowhere else: not in the call's answer or GET /v1/calls/{id}, the approval
// view, the audit rows, the workflow history or the logs (all show `bot***`). The token stays bound
// to its hosts: outside its allowed_hosts, or toward a member's own copy of the template, nothing is sent.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { callWorkflowId } from '../../workflows/definitions.ts';
import { startFakeTelegram, type FakeTelegram } from '../support/fake-telegram.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { historyText } from '../support/history.ts';
import { seedUser } from '../support/seed.ts';
import { until } from '../support/wait.ts';

// A token shaped as @BotFather issues them (`<bot id>:<secret>`); the colon is sent as is.
const TOKEN = '7312345678:AAF-KNOWN_telegram_token_plaintext_9Q';

function telegramTemplate(baseUrl: string): Record<string, unknown> {
  const doc = parse(readFileSync(path.resolve(import.meta.dirname, '..', '..', 'services', 'telegram.yaml'), 'utf8')) as Record<string, unknown>;
  doc.servers = [{ url: baseUrl }];
  return doc;
}

describe('a bot token in the URL path (Telegram)', () => {
  let gw: TestGateway;
  let telegram: FakeTelegram;
  let elsewhere: FakeTelegram;
  let admin: ReturnType<TestGateway['as']>;
  let agent: { id: string; call: ReturnType<TestGateway['as']> };
  const callIds: string[] = [];

  const auditText = async () => JSON.stringify(await gw.pool.any(sql.type(z.object({ details: z.any() }))`SELECT details FROM audit_log`));

  beforeAll(async () => {
    telegram = await startFakeTelegram(TOKEN);
    elsewhere = await startFakeTelegram(TOKEN);
    gw = await startTestGateway({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    admin = gw.as(gw.adminToken);
    const tpl = await admin('POST', '/v1/templates', { scope: 'org', document: telegramTemplate(telegram.url) });
    expect(tpl.status, tpl.text).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'TELEGRAM_BOT_TOKEN', value: TOKEN })).status).toBe(201);
    const created = await admin('POST', '/v1/identities/agents', { name: 'notifier' });
    expect(created.status, created.text).toBe(201);
    agent = { id: created.body.identity.id, call: gw.as(created.body.key.token) };
  });
  afterAll(async () => {
    await gw?.stop();
    await telegram?.close();
    await elsewhere?.close();
  });

  it('lists the Telegram actions as callable, none taking the token', async () => {
    const service = await admin('GET', '/v1/services/telegram');
    expect(service.status, service.text).toBe(200);
    expect(service.text).not.toMatch(/"disabled":true/);
    expect(service.text).not.toContain('"name":"token"');
  });

  it('sends a covered sendMessage with the token in the path, and shows it nowhere', async () => {
    expect((await admin('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'telegram:send_message:*' })).status).toBe(201);
    const res = await agent.call('POST', '/v1/actions/call', { service: 'telegram', action: 'send_message', params: { chat_id: -100123, text: 'Deploy finished' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'called', result: { status_code: 200, body: { ok: true, result: { text: 'Deploy finished' } } } });
    callIds.push(res.body.call_id);
    const sent = telegram.calls.at(-1)!;
    expect(sent).toMatchObject({ method: 'sendMessage', rawPath: `/bot${TOKEN}/sendMessage`, authorized: true, body: { chat_id: -100123, text: 'Deploy finished' } });
    // The token went in the path only: no header or query parameter carries it.
    expect(JSON.stringify(sent.headers)).not.toContain(TOKEN);

    const view = await agent.call('GET', `/v1/calls/${res.body.call_id}`);
    expect(view.status, view.text).toBe(200);
    expect(view.text).not.toContain(TOKEN);
    expect(res.text).not.toContain(TOKEN);
  });

  it('shows an approver the path as bot***, then sends the approved call with the token', async () => {
    const raised = await agent.call('POST', '/v1/actions/call', { service: 'telegram', action: 'delete_message', params: { chat_id: '@ops', message_id: 7 } });
    expect(raised.status, raised.text).toBe(202);
    const approvalId = raised.body.approval_id as string;
    const view = await admin('GET', `/v1/approvals/${approvalId}`);
    expect(view.body.permission_keys).toEqual(['telegram:delete_message:@ops']);
    expect(view.body.action.request.url).toBe(`${telegram.url}/bot***/deleteMessage`);
    const edit = await admin('GET', `/v1/approvals/${approvalId}/edit`);
    expect(edit.body.parameters.map((p: { name: string }) => p.name)).not.toContain('token');

    const before = telegram.calls.length;
    expect((await admin('POST', `/v1/approvals/${approvalId}/resolve`, { decision: 'allow_once' })).status).toBe(200);
    const done = await until(() => admin('GET', `/v1/approvals/${approvalId}`), (r) => r.body.execution?.status === 'executed', 30_000);
    expect(telegram.calls.slice(before)).toMatchObject([{ method: 'deleteMessage', rawPath: `/bot${TOKEN}/deleteMessage`, authorized: true }]);
    const callId = (done.body.call_id ?? raised.body.call_id) as string;
    callIds.push(callId);
    const resumed = await agent.call('POST', '/v1/actions/call', { approval_id: approvalId });
    expect(resumed.body).toMatchObject({ status: 'called', result: { status_code: 200 } });
    expect(JSON.stringify([raised.body, view.body, edit.body, done.body, resumed.body])).not.toContain(TOKEN);
  });

  it('refuses raw HTTP through the service: the token has no placeholder there to go in', async () => {
    const before = telegram.calls.length;
    const res = await admin('POST', '/v1/actions/call', { service: 'telegram', method: 'POST', path: '/botguess/getMe' });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', message: 'telegram carries its credential in the URL path: call one of its actions' });
    expect(telegram.calls.length).toBe(before);
    expect(res.text).not.toContain(TOKEN);
  });

  it('refuses to send the token outside its allowed_hosts, and says so without it', async () => {
    expect((await admin('POST', '/v1/secrets', { name: 'TELEGRAM_BOT_TOKEN', value: TOKEN, allowed_hosts: ['api.telegram.org'] })).status).toBe(200);
    const before = telegram.calls.length;
    const res = await agent.call('POST', '/v1/actions/call', { service: 'telegram', action: 'send_message', params: { chat_id: 1, text: 'hi' } });
    expect(res.status, res.text).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'secret_not_allowed_for_host', details: { secret_name: 'TELEGRAM_BOT_TOKEN', host: '127.0.0.1' } });
    expect(res.text).not.toContain(TOKEN);
    expect(telegram.calls.length).toBe(before);
    // Bound to this host again, the same call goes.
    expect((await admin('POST', '/v1/secrets', { name: 'TELEGRAM_BOT_TOKEN', value: TOKEN, allowed_hosts: ['127.0.0.1'] })).status).toBe(200);
    const again = await agent.call('POST', '/v1/actions/call', { service: 'telegram', action: 'send_message', params: { chat_id: 1, text: 'hi' } });
    expect(again.body.status, again.text).toBe('called');
    callIds.push(again.body.call_id);
    expect((await admin('POST', '/v1/secrets', { name: 'TELEGRAM_BOT_TOKEN', value: TOKEN, allowed_hosts: null })).status).toBe(200);
  });

  it("never sends the org's token to a member's own copy of the template pointing elsewhere", async () => {
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id as string;
    const member = await seedUser(gw.databaseUrl, { orgId, email: 'telegram-member@example.test' });
    const asMember = gw.as(await gw.login(member.email, member.password));
    const copy = await asMember('POST', '/v1/templates', { scope: 'user', document: telegramTemplate(elsewhere.url) });
    expect(copy.status, copy.text).toBe(201);
    const res = await asMember('POST', '/v1/actions/call', { service: 'telegram', action: 'get_me', params: {} });
    expect(res.status, res.text).toBe(403);
    expect(res.body.error.code).toBe('secret_not_allowed_for_host');
    expect(elsewhere.calls).toEqual([]);
    expect(res.text).not.toContain(TOKEN);
  });

  it('left the token out of the audit rows, the workflow histories and the logs', async () => {
    expect(await auditText()).not.toContain(TOKEN);
    expect(await auditText()).toContain('bot***');
    for (const callId of callIds) {
      const history = await gw.temporal.workflow.getHandle(callWorkflowId(callId)).fetchHistory();
      expect(historyText(history)).not.toContain(TOKEN);
    }
    expect(gw.logs.join('\n')).not.toContain(TOKEN);
    expect(gw.logs.join('\n')).not.toContain(encodeURIComponent(TOKEN));
  });
});
