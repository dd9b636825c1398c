// `gateway members` and `gateway invite` run as a user runs them (issue 29): the link printed
// once on stdout, role changes, deactivation, and the documented exit codes (0 done, 2 usage or an
// error answer from the gateway).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGatewayCli, type RunOptions } from '../support/cli.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startUpstream, upstreamServiceDoc } from '../support/upstream.ts';
import { until } from '../support/wait.ts';

describe('gateway members / gateway invite', () => {
  let gw: TestGateway;
  let home: string;
  let admin: RunOptions['env'];
  const cli = (args: string[], env: RunOptions['env'], extra: Partial<RunOptions> = {}) => runGatewayCli(args, { env, ...extra });

  beforeAll(async () => {
    gw = await startTestGateway();
    home = await mkdtemp(path.join(os.tmpdir(), 'gateway-cli-members-'));
    admin = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'config') };
    const login = await cli(['login', '--url', gw.url, '--email', ADMIN_EMAIL], admin, { stdin: ADMIN_PASSWORD });
    expect(login.code, login.stderr).toBe(0);
  });
  afterAll(async () => {
    await gw?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('invites: prints the link once on stdout; the link joins with the role', async () => {
    const r = await cli(['invite', 'dana@example.test', '--role', 'approver'], admin, { via: 'npx' });
    expect(r.code, r.stderr).toBe(0);
    const link = r.stdout.trim();
    expect(link).toMatch(new RegExp(`^${gw.config.publicUrl}/invitation#token=gwi_[0-9A-Za-z]+$`));
    expect(r.stderr).toContain('Invited dana@example.test as approver');
    expect(r.stderr).toContain('email delivery is not configured');
    const token = link.split('#token=')[1]!;
    const joined = await gw.request('POST', '/v1/invitations/accept', { body: { token, name: 'Dana', password: 'dana has a long password' } });
    expect(joined.status, joined.text).toBe(200);
    // Not shown again anywhere: the list does not carry it.
    const list = await cli(['members', '--json'], admin);
    expect(list.stdout).not.toContain(token);
    expect(JSON.parse(list.stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ email: 'dana@example.test', role: 'approver', status: 'active' })]));
  });

  it('an approver sees in `gateway approvals show` why a bubbled approval is theirs, and approves it', async () => {
    const up = await startUpstream();
    try {
      const asAdmin = gw.as(gw.adminToken);
      expect((await asAdmin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
      expect((await asAdmin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_cli_members' })).status).toBe(201);
      const lee = await cli(['invite', 'lee@example.test', '--role', 'member', '--approver', 'dana@example.test'], admin);
      const token = lee.stdout.trim().split('#token=')[1]!;
      const joined = await gw.request('POST', '/v1/invitations/accept', { body: { token, name: 'Lee', password: 'lee has a long password' } });
      const asLee = gw.as(joined.body.token);
      const agent = await asLee('POST', '/v1/identities/agents', { name: 'lee-bot' });
      const call = await gw.as(agent.body.key.token)('POST', '/v1/actions/call', { service: 'widgets', action: 'create_item', params: { name: 'cli-routed' } });
      expect(call.status, call.text).toBe(202);
      expect((await asLee('POST', `/v1/approvals/${call.body.approval_id}/resolve`, { decision: 'bubble' })).status).toBe(200);

      const dana = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), GATEWAY_PROFILE: 'dana' };
      expect((await cli(['login', '--url', gw.url, '--email', 'dana@example.test'], dana, { stdin: 'dana has a long password' })).code).toBe(0);
      const shown = await cli(['approvals', 'show', call.body.approval_id], dana);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toContain("yours:       bubbled from Lee: you are Lee's approver");
      const approved = await cli(['approve', call.body.approval_id], dana);
      expect(approved.code, approved.stderr).toBe(0);
      await until(async () => up.requests.filter((r) => JSON.stringify(r).includes('cli-routed')).length, (n) => n === 1, 30_000);
    } finally {
      await up.close();
    }
  });

  it('lists people, changes a role and an approver, deactivates; refuses bad usage with exit 2', async () => {
    const sam = await cli(['invite', 'sam@example.test', '--role', 'member', '--approver', 'dana@example.test'], admin);
    expect(sam.code, sam.stderr).toBe(0);
    const token = sam.stdout.trim().split('#token=')[1]!;
    expect((await gw.request('POST', '/v1/invitations/accept', { body: { token, name: 'Sam', password: 'sam has a long password' } })).status).toBe(200);

    const table = await cli(['members'], admin);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/EMAIL\s+NAME\s+ROLE\s+STATUS\s+APPROVER\s+SIGNED IN\s+AGENTS\s+PENDING/);
    expect(table.stdout).toMatch(/sam@example\.test\s+Sam\s+member\s+active\s+dana@example\.test/);

    const promoted = await cli(['members', 'set-role', 'sam@example.test', 'approver'], admin);
    expect(promoted.code, promoted.stderr).toBe(0);
    expect(promoted.stderr).toContain('sam@example.test is now approver');
    const toAdmins = await cli(['members', 'set-approver', 'sam@example.test', 'none'], admin);
    expect(toAdmins.code).toBe(0);
    expect((await gw.as(gw.adminToken)('GET', '/v1/org/members')).body.members.find((m: { email: string }) => m.email === 'sam@example.test')).toMatchObject({ role: 'approver', approver_id: null });

    const samSession = await gw.login('sam@example.test', 'sam has a long password');
    const gone = await cli(['members', 'deactivate', 'sam@example.test'], admin);
    expect(gone.code, gone.stderr).toBe(0);
    expect(gone.stderr).toContain('sam@example.test is deactivated');
    expect((await gw.as(samSession)('GET', '/v1/identities/me')).status).toBe(401);

    // Exit 2: usage, and error answers of the gateway (typed, one line).
    const cases: [string[], RegExp][] = [
      [['invite', 'x@example.test', '--role', 'owner'], /the role is one of admin, member, approver/],
      [['invite', 'x@example.test'], /required option '--role <role>'/],
      [['invite', 'x@example.test', '--role', 'member', '--expires-in-days', '90'], /--expires-in-days/],
      [['invite', 'dana@example.test', '--role', 'member'], /already a member of this org \(conflict\)/],
      [['members', 'set-role', 'nobody@example.test', 'member'], /no person "nobody@example.test"/],
      [['members', 'set-role', ADMIN_EMAIL, 'member'], /the org's last admin.*\(last_admin\)/],
      [['members', 'deactivate', 'sam@example.test'], /already deactivated \(conflict\)/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args, admin);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stdout, args.join(' ')).toBe('');
    }
  });
});
