// Tool changes of a connected MCP server told to the org's admins through its notice channels
// (issue 43): one email per active admin (members get none) through the org's email channel, one
// message in the org's Slack channel, naming the server, the changed tools and the review page;
// a re-list that changes nothing sends nothing; a channel that fails never fails the re-list.
// A real SMTP server and a fake Slack Web API, both on loopback.
import type { Tool } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeSlack, type FakeSlack } from '../support/fake-slack.ts';
import { ADMIN_EMAIL, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startChangeableServer } from '../support/mcp-upstreams.ts';
import { seedUser } from '../support/seed.ts';
import { startSmtpCapture, type SmtpCapture } from '../support/smtp.ts';
import { until } from '../support/wait.ts';

const PUBLIC_URL = 'https://gateway.example.test';
const deployTool = (description: string): Tool => ({ name: 'deploy', description, inputSchema: { type: 'object', properties: { env: { type: 'string' } } } });
const statusTool: Tool = { name: 'status', description: 'Show the status', inputSchema: { type: 'object', properties: {} } };
const rollbackTool: Tool = { name: 'rollback', description: 'Roll back', inputSchema: { type: 'object', properties: {} } };

describe('MCP tool changes announced to admins in Slack and email', () => {
  let gw: TestGateway;
  let upstream: Awaited<ReturnType<typeof startChangeableServer>>;
  let slack: FakeSlack;
  let smtp: SmtpCapture;
  let admin: ReturnType<TestGateway['as']>;
  let serverId: string;
  const about = (text: string) => text.includes('deployer');

  beforeAll(async () => {
    [upstream, slack, smtp] = await Promise.all([startChangeableServer([deployTool('Deploy the app'), statusTool]), startFakeSlack(), startSmtpCapture()]);
    // No schedule: only the refreshes below re-list.
    gw = await startTestGateway({ env: { MCP_SERVER_RELIST_MINUTES: '0', PUBLIC_URL, GATEWAY_SLACK_API_URL: slack.apiUrl } });
    admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    await seedUser(gw.databaseUrl, { orgId, email: 'grace@example.test', role: 'admin' });
    await seedUser(gw.databaseUrl, { orgId, email: 'mel@example.test', role: 'member' });
    const s = await admin('POST', '/v1/notification-channels', {
      kind: 'slack',
      name: 'Slack',
      slack: { channel: 'C0OPSADMIN', dm_resolver: true, bot_token: slack.botToken, signing_secret: slack.signingSecret },
    });
    expect(s.status, s.text).toBe(201);
    const e = await admin('POST', '/v1/notification-channels', {
      kind: 'email',
      name: 'Email',
      email: { host: smtp.host, port: smtp.port, starttls: false, user: smtp.user, password: smtp.password, from: 'gateway@example.test' },
    });
    expect(e.status, e.text).toBe(201);
    const connected = await admin('POST', '/v1/mcp-servers', { name: 'deployer', url: upstream.url });
    expect(connected.status, connected.text).toBe(201);
    serverId = connected.body.id;
  });
  afterAll(async () => {
    await gw?.stop();
    await Promise.all([upstream?.close(), slack?.close(), smtp?.close()]);
  });

  it('nothing for a refresh that changes nothing; for a change, an email to each admin (not members) and one Slack message, with the tools and the review page', async () => {
    const unchanged = await admin('POST', `/v1/mcp-servers/${serverId}/refresh`);
    expect(unchanged.status, unchanged.text).toBe(200);

    upstream.tools = [deployTool('Deploy the app to production'), rollbackTool];
    const refreshed = await admin('POST', `/v1/mcp-servers/${serverId}/refresh`);
    expect(refreshed.status, refreshed.text).toBe(200);
    const reviewUrl = `${PUBLIC_URL}/services/mcp-servers/${serverId}`;

    // The change's notices come after any the unchanged refresh could have started: all there is
    // about this server is the change's, one per admin and one in Slack.
    const mails = await until(async () => smtp.messages.filter((m) => about(m.text)), (m) => m.length >= 2, 30_000);
    expect(mails.flatMap((m) => m.to).sort()).toEqual([ADMIN_EMAIL, 'grace@example.test']);
    for (const mail of mails) {
      expect(mail.raw).toMatch(/^Subject: Tools changed on the MCP server deployer$/m);
      expect(mail.text).toContain('New (disabled until enabled): rollback');
      expect(mail.text).toContain('Removed (disabled): status');
      expect(mail.text).toContain('Changed (refused until accepted): deploy');
      expect(mail.text).toContain(`Review them: ${reviewUrl}`);
      // Names only: no descriptions or schemas.
      expect(mail.text).not.toContain('Deploy the app');
    }
    const posted = await until(async () => slack.messages.filter((m) => about(m.text)), (m) => m.length >= 1, 30_000);
    expect(posted).toHaveLength(1);
    expect(posted[0]).toMatchObject({ channel: 'C0OPSADMIN' });
    expect(posted[0]!.text).toContain('Changed (refused until accepted): deploy');
    expect(posted[0]!.text).toContain(`<${reviewUrl}|Review them>`);
  });

  it('a failing channel is logged without secrets and never fails the re-list; the other channel still goes', async () => {
    slack.failing = true;
    try {
      upstream.tools = [deployTool('Deploy the app to production'), rollbackTool, statusTool];
      const refreshed = await admin('POST', `/v1/mcp-servers/${serverId}/refresh`);
      expect(refreshed.status, refreshed.text).toBe(200);
      await until(async () => smtp.messages.filter((m) => about(m.text) && m.text.includes('New (disabled until enabled): status')), (m) => m.length === 2, 30_000);
      const warned = await until(async () => gw.logs.filter((l) => l.includes('could not send the MCP tool change notice')), (l) => l.length > 0, 30_000);
      expect(warned.join('\n')).toContain('"kind":"slack"');
      // One announcement per change set, never to a member: two changes, two emails each to the two admins.
      expect(smtp.messages.filter((m) => about(m.text))).toHaveLength(4);
      expect(smtp.messages.some((m) => m.to.includes('mel@example.test'))).toBe(false);
      for (const secret of [slack.botToken, slack.signingSecret, smtp.password]) expect(gw.logs.join('\n')).not.toContain(secret);
    } finally {
      slack.failing = false;
    }
  });
});
