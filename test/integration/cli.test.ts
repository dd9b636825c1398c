// The `gateway` command as people and scripts use it: the real binary (see test/support/cli.ts),
// a real gateway (PostgreSQL, Temporal), a real upstream on loopback, a real terminal (tmux).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, NODE, ROOT, runGatewayCli, startGatewayCli, type RunOptions } from '../support/cli.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser } from '../support/seed.ts';
import { startUpstream, upstreamServiceDoc, type Upstream } from '../support/upstream.ts';
import { until } from '../support/wait.ts';
import { ensureDashboardBuilt } from '../support/web-build.ts';

const exec = promisify(execFile);
const shq = (v: string) => `'${v.replaceAll("'", `'\\''`)}'`;
const SECRET_VALUE = 'raw_KNOWN_SECRET_VALUE_5150';
const PASSWORD = 'a perfectly fine password';

describe('the gateway command', { timeout: 180_000 }, () => {
  let gw: TestGateway;
  let up: Upstream;
  let home: string;
  let person: RunOptions['env'];
  let agentEnv: RunOptions['env'];
  let agentId: string;
  const cli = (args: string[], env: RunOptions['env'], extra: Partial<RunOptions> = {}) => runGatewayCli(args, { env, ...extra });

  /** The newest pending approval of the agent, as the person sees it through the CLI. */
  const pendingId = async (): Promise<string> => {
    const listed = await until(
      () => cli(['approvals', '--json'], person),
      (r) => r.code === 0 && JSON.parse(r.stdout).approvals.length > 0,
      60_000,
    );
    return JSON.parse(listed.stdout).approvals[0].id as string;
  };

  beforeAll(async () => {
    up = await startUpstream();
    gw = await startTestGateway({ env: { OUTBOUND_ALLOWLIST: '127.0.0.1' } });
    home = await mkdtemp(path.join(os.tmpdir(), 'gateway-cli-home-'));
    const admin = gw.as(gw.adminToken);
    const orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
    await seedUser(gw.databaseUrl, { orgId, email: 'owner@example.test', password: PASSWORD });
    expect((await admin('POST', '/v1/templates', { scope: 'org', document: upstreamServiceDoc('widgets', up.url) })).status).toBe(201);
    expect((await admin('POST', '/v1/secrets', { name: 'WIDGETS_KEY', value: 'sk_widgets' })).status).toBe(201);
    person = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'config') };
  });
  afterAll(async () => {
    await gw?.stop();
    await up?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('signs a person in with npx gateway login (password on stdin), stores the session 0600, and whoami --json parses', async () => {
    const login = await cli(['login', '--url', gw.url, '--email', 'owner@example.test'], person, { stdin: PASSWORD, via: 'npx' });
    expect(login.stderr).toContain(`Signed in to ${gw.url} as owner`);
    expect(login.code).toBe(0);
    const file = path.join(home, 'config', 'agent-gateway', 'profiles.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, 'utf8')).not.toContain(PASSWORD);
    const me = await cli(['whoami', '--json'], person);
    expect(me.code).toBe(0);
    expect(JSON.parse(me.stdout)).toMatchObject({ identity: { kind: 'user', email: 'owner@example.test' }, authenticated_via: 'session' });

    const bad = await cli(['login', '--url', gw.url, '--email', 'owner@example.test', '--profile', 'other'], person, { stdin: 'wrong password' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^gateway: sign-in refused/m);

    // The person creates the agent; its key is printed once on stdout.
    const created = await cli(['agents', 'create', 'assistant'], person);
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^osk_/);
    const agents = JSON.parse((await cli(['agents', '--json'], person)).stdout) as Array<{ id: string; name: string }>;
    agentId = agents.find((a) => a.name === 'assistant')!.id;
    agentEnv = { HOME: home, XDG_CONFIG_HOME: path.join(home, 'agent-config'), GATEWAY_URL: gw.url, GATEWAY_AGENT_KEY: key };
  });

  it('a covered call prints the result body and exits 0 (npx gateway call), and --json parses', async () => {
    expect((await gw.as(gw.adminToken)('POST', `/v1/identities/${agentId}/rules`, { effect: 'allow', pattern: 'widgets:get_item:*' })).status).toBe(201);
    const r = await cli(['call', 'widgets', 'get_item', '-p', 'id=a1'], agentEnv, { via: 'npx' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ok: true, method: 'GET', url: '/items/a1', body_keys: [] });

    const j = await cli(['call', 'widgets', 'get_item', '-p', 'id=a2', '--json'], agentEnv);
    expect(j.code).toBe(0);
    expect(JSON.parse(j.stdout)).toMatchObject({ status: 'called', action_description: 'Read item a2', result: { status_code: 200, body: { url: '/items/a2' } } });
    for (const args of [['services', '--json'], ['services', 'show', 'widgets', '--json'], ['services', 'search', 'item', '--json']]) {
      const d = await cli(args, agentEnv);
      expect(d.code, args.join(' ')).toBe(0);
      expect(() => JSON.parse(d.stdout)).not.toThrow();
    }
  });

  it('call sends an Idempotency-Key: --idempotency-key K twice runs the call once; each plain run is its own call', async () => {
    const rule = await gw.as(gw.adminToken)('POST', `/v1/identities/${agentId}/rules`, { effect: 'allow', pattern: 'widgets:create_item:cli-*' });
    expect(rule.status).toBe(201);
    const hits = (name: string) => up.requests.filter((r) => r.method === 'POST' && r.body.includes(`"${name}"`)).length;
    const args = ['call', 'widgets', 'create_item', '-p', 'name=cli-keyed', '--idempotency-key', 'cli-key-1', '--json'];
    const first = await cli(args, agentEnv);
    const again = await cli(args, agentEnv);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual(JSON.parse(first.stdout));
    expect(hits('cli-keyed')).toBe(1);
    const other = await cli(['call', 'widgets', 'create_item', '-p', 'name=cli-other', '--idempotency-key', 'cli-key-1'], agentEnv);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('idempotency_key_reused');
    expect(hits('cli-other')).toBe(0);
    const bad = await cli(['call', 'widgets', 'create_item', '-p', 'name=cli-x', '--idempotency-key', 'has space'], agentEnv);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--idempotency-key');
    // Without the option each run is a new call (a fresh key every time).
    for (let i = 0; i < 2; i++) expect((await cli(['call', 'widgets', 'create_item', '-p', 'name=cli-plain'], agentEnv)).code).toBe(0);
    expect(hits('cli-plain')).toBe(2);
    expect(up.requests.filter((r) => r.body.includes('"cli-plain"')).every((r) => r.headers['idempotency-key'] === undefined)).toBe(true);
    expect((await gw.as(gw.adminToken)('POST', `/v1/identities/${agentId}/rules/${rule.body.id}/revoke`)).status).toBe(204);
  });

  it('call --resume of an approval that expired exits 1 and says so', async () => {
    const admin = gw.as(gw.adminToken);
    expect((await admin('PATCH', '/v1/org/settings', { approval_ttl_seconds: 2 })).status).toBe(200);
    try {
      const r = await cli(['call', 'widgets', 'create_item', '-p', 'name=will-expire'], agentEnv);
      expect(r.code).toBe(3);
      const id = /approval: +([0-9a-f-]{36})/.exec(r.stderr)![1]!;
      await until(() => admin('GET', `/v1/approvals/${id}`), (a) => a.body.status === 'expired', 30_000);
      const resumed = await cli(['call', '--resume', id], agentEnv);
      expect(resumed.code).toBe(1);
      expect(resumed.stderr).toContain('The approval is expired; the call did not run.');
    } finally {
      expect((await admin('PATCH', '/v1/org/settings', { approval_ttl_seconds: 900 })).status).toBe(200);
    }
  });

  it('an uncovered call is pending: the approval on stderr, exit 3', async () => {
    const r = await cli(['call', 'widgets', 'create_item', '-p', 'name=draft'], agentEnv);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Approval needed [med] Create item "draft"');
    expect(r.stderr).toMatch(/approve at: +http:\/\/\S+\/approvals\/[0-9a-f-]{36}/);
    const id = /approval: +([0-9a-f-]{36})/.exec(r.stderr)![1]!;
    // Any unique start of the id will do (as git and docker take ids); an unknown one is named.
    const resumed = await cli(['call', '--resume', id.slice(0, 8)], agentEnv);
    expect(resumed.code).toBe(3);
    expect(resumed.stderr).toContain('still pending');
    const shown = await cli(['approvals', 'show', id.slice(0, 10), '--json'], person);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout).id).toBe(id);
    const unknown = await cli(['deny', 'fffff0000', '--reason', 'x'], person);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no approval starts with fffff0000');
    expect((await cli(['deny', id.slice(0, 12), '--reason', 'tidy up'], person)).code).toBe(0);
  });

  it('call --wait is resolved by `gateway approve` in a second process: the result is printed, exit 0', async () => {
    const watcher = startGatewayCli(['approvals', 'watch', '--json', '--interval', '1'], { env: person });
    await until(async () => watcher.stderr(), (e) => e.includes('Watching for new approvals'), 60_000);
    const waiting = startGatewayCli(['call', 'widgets', 'create_item', '-p', 'name=report', '-p', 'folder=q3', '--wait', '--timeout', '5m'], { env: agentEnv });
    const id = await pendingId();
    // The approver's watch prints it as it arrives (one JSON line per approval).
    await until(async () => watcher.stdout(), (o) => o.includes(id), 60_000);
    watcher.child.kill('SIGTERM');
    expect(JSON.parse(watcher.stdout().trim().split('\n').find((l) => l.includes(id))!)).toMatchObject({ id, status: 'pending', risk: 'med' });
    await until(async () => waiting.stderr(), (s) => s.includes('Waiting for a person to decide'), 60_000);
    const shown = await cli(['approvals', 'show', id], person);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('Create item "report" in q3');
    expect(shown.stdout).toContain('widgets:create_item:report');
    // What will be sent, where the decision is made: method, URL and body.
    expect(shown.stdout).toMatch(/^request: +POST http:\/\/127\.0\.0\.1:\d+\/items$/m);
    expect(shown.stdout).toMatch(/^body:\n {2}\{\n {4}"name": "report",\n {4}"folder": "q3"\n {2}\}$/m);
    const approved = await cli(['approve', id], person);
    expect(approved.code).toBe(0);
    expect(approved.stderr).toContain(`Allowed ${id}`);
    const done = await Promise.race([waiting.done, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still waiting: ${waiting.stderr()}`)), 90_000))]);
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toEqual({ ok: true, method: 'POST', url: '/items', body_keys: ['folder', 'name'] });
  });

  it('call --wait ends with the denial reason and exit 1 when a person denies it', async () => {
    const waiting = startGatewayCli(['call', 'widgets', 'delete_item', '-p', 'id=w9', '--wait'], { env: agentEnv });
    const id = await pendingId();
    const denied = await cli(['deny', id, '--reason', 'not on a Friday'], person);
    expect(denied.code).toBe(0);
    const done = await waiting.done;
    expect(done.code).toBe(1);
    expect(done.stderr).toContain('Denied: not on a Friday');
    expect(done.stdout).toBe('');
  });

  it('approve ID… decides several at once: a table per id, refused ones named with their reason, exit 2; --json and deny ID… too', async () => {
    const raise = async (name: string) => {
      const r = await cli(['call', 'widgets', 'create_item', '-p', `name=${name}`], agentEnv);
      expect(r.code, r.stderr).toBe(3);
      return /approval: +([0-9a-f-]{36})/.exec(r.stderr)![1]!;
    };
    const [a, b, gone] = [await raise('batch-a'), await raise('batch-b'), await raise('batch-gone')];
    expect((await cli(['deny', gone], person)).code).toBe(0);
    const sent = () => up.requests.filter((r) => r.method === 'POST' && /"batch-/.test(r.body)).length;

    // Prefixes work as for one id; the approval already decided is refused, the others allowed.
    const r = await cli(['approve', a.slice(0, 13), b, gone], person);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^ID +RESULT +DETAIL$/m);
    expect(r.stdout).toMatch(new RegExp(`^${a} +allowed +the call is \\w+$`, 'm'));
    expect(r.stdout).toMatch(new RegExp(`^${b} +allowed +the call is \\w+$`, 'm'));
    expect(r.stdout).toMatch(new RegExp(`^${gone} +refused +conflict: the approval is denied`, 'm'));
    expect(r.stderr).toContain('gateway: 2 allowed, 1 refused (of 3)');
    await until(async () => sent(), (n) => n === 2, 60_000);

    // Several ids with an edit or a tier: refused before anything is sent.
    const [c, d] = [await raise('batch-c'), await raise('batch-d')];
    for (const extra of [['--set', 'name=x', '--yes'], ['--tier', '1', '--ttl', '1h']]) {
      const refused = await cli(['approve', c, d, ...extra], person);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/one approval|--tier names one/);
    }
    expect((await cli(['approve', c, c.slice(0, 10)], person)).stderr).toContain('already given');

    const denied = await cli(['deny', c, d, '--reason', 'batch says no', '--json'], person);
    expect(denied.code, denied.stderr).toBe(0);
    expect(JSON.parse(denied.stdout)).toMatchObject({ results: [{ id: c, status: 'decided', approval: { status: 'denied' } }, { id: d, status: 'decided', approval: { status: 'denied' } }] });
    expect(denied.stderr).toContain('2 denied (of 2)');
    expect(sent()).toBe(2);
  });

  it('on a terminal (tmux): a spinner with the live expiry countdown, and the approvals table; the command exits once the result is printed, garbage collected during the wait or not', async () => {
    const sock = `gateway-cli-${process.pid}`;
    // Collections during the wait, as a long one (70 s and more) meets them: `call --wait` used
    // to stay open after printing its result once its event stream's request had been collected.
    const gcFile = path.join(home, 'gc-count');
    const collecting = { NODE_OPTIONS: `--expose-gc --import ${path.join(ROOT, 'test', 'support', 'collect-garbage-often.ts')}`, GATEWAY_TEST_GC_FILE: gcFile };
    const tmux = (...args: string[]) => exec('tmux', ['-u', '-L', sock, ...args]);
    const shell = (env: RunOptions['env'], args: string) =>
      `cd ${shq(ROOT)} && env -i ${Object.entries({ ...env, PATH: process.env.PATH ?? '', TERM: 'xterm-256color', LANG: 'C.UTF-8' }).map(([k, v]) => `${k}=${shq(v)}`).join(' ')} ${NODE} ${BIN} ${args}; echo "EXIT=$?"; sleep 600`;
    const screen = async (name: string) => (await tmux('capture-pane', '-p', '-t', name)).stdout;
    try {
      await tmux('new-session', '-d', '-s', 'agent', '-x', '160', '-y', '20', shell({ ...agentEnv, ...collecting }, 'call widgets delete_item -p id=tty1 --wait'));
      // GET /mcp carries the agent's events: the spinner says so once the stream is open.
      const spinning = await until(() => screen('agent'), (s) => /expires in \d+:\d\d · live/.test(s), 60_000);
      expect(spinning).toContain('Approval needed [high] Delete item tty1');
      expect(spinning).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] waiting for a person to decide · expires in 1[45]:\d\d · live/);
      const first = /expires in (\d+:\d\d)/.exec(spinning)![1];
      await until(() => screen('agent'), (s) => /expires in (\d+:\d\d)/.exec(s)?.[1] !== first, 30_000); // the countdown moves

      await tmux('new-session', '-d', '-s', 'person', '-x', '160', '-y', '20', shell(person, 'approvals'));
      const listed = await until(() => screen('person'), (s) => s.includes('EXIT='), 60_000);
      expect(listed).toMatch(/RISK +DESCRIPTION +REQUESTER +AGE +EXPIRES +ID/);
      expect(listed).toMatch(/high +Delete item tty1 +owner › assistant +\d+s ago +in 1[45]m \d+s +[0-9a-f-]{36}/);

      const id = /([0-9a-f-]{36})/.exec(listed.split('\n').find((l) => l.includes('tty1'))!)![1]!;
      await until(() => readFile(gcFile, 'utf8').catch(() => ''), (n) => n.length >= 5, 60_000);
      expect((await cli(['approve', id], person)).code).toBe(0);
      const end = await until(() => screen('agent'), (s) => s.includes('EXIT='), 90_000);
      expect(end).toContain('✔ allowed');
      expect(end).toContain('"url": "/items/tty1"');
      expect(end).toContain('EXIT=0');
    } finally {
      await tmux('kill-server').catch(() => undefined);
    }
  });

  it('on a terminal (tmux): Ctrl-C during call --wait exits 130 with a hint, the approval stays pending and the terminal keeps echo', async () => {
    const sock = `gateway-cli-int-${process.pid}`;
    const tmux = (...args: string[]) => exec('tmux', ['-u', '-L', sock, ...args]);
    const env = { ...agentEnv, PATH: process.env.PATH ?? '', TERM: 'xterm-256color', LANG: 'C.UTF-8' };
    // `trap : INT`: the pane's shell survives the Ctrl-C (a handler, not an ignore, so the CLI
    // still gets SIGINT's default disposition and its own handler) to report the exit code.
    const line = `trap : INT; cd ${shq(ROOT)} && env -i ${Object.entries(env).map(([k, v]) => `${k}=${shq(v)}`).join(' ')} ${NODE} ${BIN} call widgets delete_item -p id=tty-int --wait; echo "EXIT=$?"; stty -a | grep -o -- '-\\?echo ' | head -1; sleep 600`;
    const screen = async () => (await tmux('capture-pane', '-p', '-t', 'int')).stdout;
    try {
      await tmux('new-session', '-d', '-s', 'int', '-x', '160', '-y', '20', line);
      await until(() => screen(), (s) => /waiting for a person to decide/.test(s), 60_000);
      await tmux('send-keys', '-t', 'int', 'C-c');
      // Wait for the line `stty` prints after the exit code.
      const end = await until(() => screen(), (s) => s.includes('EXIT=') && /^-?echo\s*$/m.test(s), 30_000);
      expect(end).toContain('EXIT=130');
      expect(end).toMatch(/stopped waiting; the approval stays: gateway call --resume [0-9a-f-]{36} --wait/);
      // `stty -a` lists "echo" (on), not "-echo": the terminal was left as it was.
      expect(end).toMatch(/^echo\s*$/m);
      const id = /--resume ([0-9a-f-]{36})/.exec(end)![1]!;
      expect((await gw.as(gw.adminToken)('GET', `/v1/approvals/${id}`)).body.status).toBe('pending');
    } finally {
      await tmux('kill-server').catch(() => undefined);
    }
  });

  it('gateway web serves the built dashboard and proxies the API', async () => {
    ensureDashboardBuilt();
    const web = startGatewayCli(['web', '--port', '0', '--api', gw.url], { env: person });
    try {
      const said = await until(async () => web.stderr(), (s) => /Dashboard at http:\/\/127\.0\.0\.1:\d+/.test(s), 60_000);
      const base = /Dashboard at (\S+)/.exec(said)![1]!;
      const built = await readFile(path.join(ROOT, 'web', 'build', 'index.html'), 'utf8');
      for (const p of ['/', '/approvals/some-id']) {
        const page = await fetch(base + p);
        expect(page.status).toBe(200);
        expect(await page.text()).toBe(built);
      }
      const login = await fetch(`${base}/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'owner@example.test', password: PASSWORD }) });
      expect(login.status).toBe(200);
      expect(login.headers.get('set-cookie')).toMatch(/^gw_session=/);
      const { token } = (await login.json()) as { token: string };
      const me = await fetch(`${base}/v1/identities/me`, { headers: { authorization: `Bearer ${token}` } });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { identity: { email: string } }).identity.email).toBe('owner@example.test');
      const meta = await fetch(`${base}/.well-known/oauth-authorization-server`);
      expect(meta.status).toBe(200);
    } finally {
      web.child.kill('SIGTERM');
    }
    expect((await web.done).code).toBe(0);
  });

  it('--url makes a raw call with an injected secret that is never on argv and never printed', async () => {
    const set = await cli(['secrets', 'set', 'RAW_TOKEN', '--allow-host', '127.0.0.1'], person, { stdin: `${SECRET_VALUE}\n` });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout + set.stderr).not.toContain(SECRET_VALUE);
    const listed = await cli(['secrets'], person);
    expect(listed.stdout).toMatch(/RAW_TOKEN +v1 +\d+s ago +127\.0\.0\.1/);
    expect(listed.stdout).not.toContain(SECRET_VALUE);

    const args = ['call', '--url', `${up.url}/raw?x=1`, '-X', 'PUT', '-H', 'X-Trace: t-1', '-d', '{"hello":"world"}', '--secret', 'RAW_TOKEN', '--verbose'];
    const before = up.requests.length;
    const r = await cli(args, person);
    expect(r.code, r.stderr).toBe(0);
    expect(args.join(' ')).not.toContain(SECRET_VALUE);
    expect(r.stdout + r.stderr).not.toContain(SECRET_VALUE);
    const verbose = JSON.parse(r.stdout);
    expect(verbose).toMatchObject({ status_code: 200, headers: expect.any(Object) });
    expect(JSON.parse(verbose.body)).toMatchObject({ method: 'PUT', url: '/raw?x=1', body_keys: ['hello'] });
    const seen = up.requests.slice(before).at(-1)!;
    expect(seen.headers.authorization).toBe(`Bearer ${SECRET_VALUE}`);
    expect(seen.headers['x-trace']).toBe('t-1');
  });

  it('usage errors and missing sign-in exit 2 with one line', async () => {
    const none = await cli(['approvals'], { HOME: home, XDG_CONFIG_HOME: path.join(home, 'nobody') });
    expect(none.code).toBe(2);
    expect(none.stderr.trim().split('\n')).toHaveLength(1);
    expect(none.stderr).toMatch(/^gateway: not signed in/);
    const both = await cli(['call', 'widgets', 'get_item', '--url', up.url], agentEnv);
    expect(both.code).toBe(2);
    const unknown = await cli(['approvals', 'show', '00000000-0000-4000-8000-000000000000'], person);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^gateway: approval not found \(not_found\)$/m);
    const help = await cli(['--help'], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Exit codes:');
  });

  it('agents are named by name or any unique start of their id: agents create --parent, audit --identity', async () => {
    const sub = await cli(['agents', 'create', 'cli-helper', '--parent', 'assistant', '--json'], person);
    expect(sub.code, sub.stderr).toBe(0);
    expect(JSON.parse(sub.stdout).identity).toMatchObject({ name: 'cli-helper', parent_id: agentId });
    const byPrefix = await cli(['agents', 'create', 'cli-helper-2', '--parent', agentId.slice(0, 8), '--json'], person);
    expect(byPrefix.code, byPrefix.stderr).toBe(0);
    expect(JSON.parse(byPrefix.stdout).identity.parent_id).toBe(agentId);
    const audit = await cli(['audit', '--identity', 'assistant', '--format', 'jsonl', '--limit', '20'], person);
    expect(audit.code, audit.stderr).toBe(0);
    const rows = audit.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.identity_chain).toContain(agentId);
    const unknown = await cli(['audit', '--identity', 'nobody-by-this-name'], person);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^gateway: no agent or person is named "nobody-by-this-name"/);
    // The chain path as `gateway agents` prints it names one too.
    const byPath = await cli(['audit', '--identity', 'owner › assistant', '--format', 'jsonl', '--limit', '5'], person);
    expect(byPath.code, byPath.stderr).toBe(0);
  });

  it('agents allow --when --calls --per adds a rule with a condition and a budget; agents rules says it in words; a bad condition exits 1 naming its position', async () => {
    const added = await cli(['agents', 'allow', 'assistant', 'http:GET:127.0.0.1:1/*', '--when', 'method == "GET"', '--calls', '5', '--per', '1h', '--json'], person);
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ effect: 'allow', condition: 'method == "GET"', budget: { calls: 5, per: '1h' } });
    const listed = await cli(['agents', 'rules', 'assistant'], person);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('only when method == "GET"; at most 5 calls per hour (0 of 5 used)');
    const bad = await cli(['agents', 'deny', 'assistant', 'http:*:*', '--when', 'method =='], person);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/invalid condition at position \d+/);
    const usage = await cli(['agents', 'deny', 'assistant', 'http:*:*', '--calls', '3', '--per', '1h'], person);
    expect(usage.code).toBe(2);
  });

  it('audit exports CSV and JSON lines', async () => {
    const jsonl = await cli(['audit', '--format', 'jsonl', '--limit', '5'], person);
    expect(jsonl.code).toBe(0);
    const rows = jsonl.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.length).toBeGreaterThan(0);
    const csv = await cli(['audit', '--format', 'csv', '--limit', '5'], person);
    const lines = csv.stdout.trim().split('\n');
    expect(lines[0]).toBe('at,event,who,service,action,decision,http_status_code,permission_keys,actor_name,actor_id,approval_id,call_id,request_id');
    // Names beside the ids: the chain as people read it, person first.
    expect(lines.slice(1).some((l) => l.includes('owner › assistant'))).toBe(true);
    const table = await cli(['audit', '--limit', '5'], person);
    expect(table.stdout.split('\n')[0]).toMatch(/^AT +EVENT +WHO +SERVICE/);
    expect(table.stdout).toContain('owner › assistant');
  });

  it('bash completion offers commands and options, by prefix, for `gateway` and `npx gateway`', async () => {
    const script = (await cli(['completion', 'bash'], {})).stdout;
    const complete = async (fn: string, words: string[]) =>
      (await exec('bash', ['-c', `${script}\nCOMP_WORDS=(${words.map(shq).join(' ')}); COMP_CWORD=${words.length - 1}; ${fn}; echo "\${COMPREPLY[*]}"`])).stdout.trim();
    expect(await complete('_gateway', ['gateway', 'appr'])).toBe('approvals approve');
    expect(await complete('_gateway', ['gateway', 'approvals', '--st'])).toBe('--status');
    expect(await complete('_gateway_npx', ['npx', 'gateway', 'appr'])).toBe('approvals approve');
    expect(await complete('_gateway_npx', ['npx', 'gateway', 'approvals', '--st'])).toBe('--status');
    expect(await complete('_gateway_npx', ['npx', 'gat'])).toBe('gateway');
    expect(await complete('_gateway_npx', ['npx', 'eslint', '--fi'])).toBe('');
    // Registered for npx as well (unless npx already has a completion).
    const registered = (await exec('bash', ['-c', `${script}\ncomplete -p npx`])).stdout;
    expect(registered).toContain('_gateway_npx');
  });

  it('the client commands load no server code: `gateway help` imports neither express, the MCP SDK nor server/', async () => {
    // Which modules `help` loads, recorded by a resolve hook (its start time follows from this).
    const hook = `data:text/javascript,${encodeURIComponent("import { registerHooks } from 'node:module'; registerHooks({ resolve(s, c, next) { const r = next(s, c); process.stderr.write('LOADED ' + r.url + '\\n'); return r; } });")}`;
    const { stdout, stderr } = await exec(NODE, ['--import', hook, BIN, 'help'], { cwd: ROOT });
    expect(stdout).toContain('Usage: gateway');
    const loaded = stderr.split('\n').filter((l) => l.startsWith('LOADED ')).map((l) => l.slice(7));
    expect(loaded.length).toBeGreaterThan(10);
    expect(loaded.filter((u) => /node_modules\/(express|@modelcontextprotocol|@temporalio|slonik|pg)\/|\/server\//.test(u))).toEqual([]);
  });
});
