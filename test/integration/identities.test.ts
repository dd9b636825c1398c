import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { seedUser, type SeededUser } from '../support/seed.ts';

describe('identities, sessions, agent keys and rules', () => {
  let gw: TestGateway;
  let admin: ReturnType<TestGateway['as']>;
  let member: SeededUser;
  let memberToken: string;
  let me: any;

  beforeAll(async () => {
    gw = await startTestGateway();
    admin = gw.as(gw.adminToken);
    me = (await admin('GET', '/v1/identities/me')).body;
    member = await seedUser(gw.databaseUrl, { orgId: me.org.id, email: 'member@example.test' });
    memberToken = await gw.login(member.email, member.password);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  describe('sign-in', () => {
    it('bootstrapped one org and its admin', () => {
      expect(me.identity).toMatchObject({ kind: 'user', email: ADMIN_EMAIL, role: 'admin', status: 'active' });
      expect(me.chain).toHaveLength(1);
      expect(me.authenticated_via).toBe('session');
    });

    it('sets an HttpOnly SameSite cookie that authenticates the dashboard', async () => {
      const res = await fetch(`${gw.url}/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: member.email, password: member.password }),
      });
      const cookie = res.headers.get('set-cookie')!;
      expect(cookie).toMatch(/^gw_session=gws_[0-9A-Za-z]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+/);
      const viaCookie = await gw.request('GET', '/v1/identities/me', { headers: { cookie: cookie.split(';')[0]! } });
      expect(viaCookie.status).toBe(200);
      expect(viaCookie.body.identity.email).toBe(member.email);
    });

    it('rejects wrong passwords and unknown emails alike, and validates the body', async () => {
      const wrong = await gw.request('POST', '/v1/auth/login', { body: { email: member.email, password: 'nope' } });
      const unknown = await gw.request('POST', '/v1/auth/login', { body: { email: 'who@example.test', password: 'nope' } });
      expect(wrong.status).toBe(401);
      expect(unknown.status).toBe(401);
      expect(wrong.body.error.message).toBe(unknown.body.error.message);
      const extra = await gw.request('POST', '/v1/auth/login', { body: { email: member.email, password: 'x', remember: true } });
      expect(extra.status).toBe(400);
    });

    describe('sign-in throttling (issue 14): per source and per account, with backoff, never a lockout of the owner', () => {
      const from = (source: string, email: string, password: string) =>
        gw.request('POST', '/v1/auth/login', { body: { email, password }, headers: { 'x-forwarded-for': source } });

      it('slows one source guessing at an account (429 with a growing Retry-After) while the owner signs in from another', async () => {
        const victim = await seedUser(gw.databaseUrl, { orgId: me.org.id, email: 'victim@example.test' });
        const attacker = '198.51.100.7';
        let refused: Awaited<ReturnType<typeof from>> | undefined;
        for (let i = 0; i < 10 && !refused; i++) {
          const res = await from(attacker, victim.email, `guess-${i}`);
          if (res.status === 429) refused = res;
          else expect(res.status).toBe(401);
        }
        expect(refused?.body.error.code).toBe('rate_limited');
        const first = Number(refused!.headers.get('retry-after'));
        expect(first).toBeGreaterThan(0);
        // Even the right password waits, from the guessing source.
        expect((await from(attacker, victim.email, victim.password)).status).toBe(429);
        // The owner, from another address, is not held back by the attacker.
        const owner = await from('203.0.113.9', victim.email, victim.password);
        expect(owner.status, owner.text).toBe(200);
        // Backoff, not a fixed lockout: once it has waited, the source may guess again, and waits longer after.
        await new Promise((r) => setTimeout(r, first * 1000 + 200));
        expect((await from(attacker, victim.email, 'one-more-guess')).status).toBe(401);
        const next = await from(attacker, victim.email, 'and-another');
        expect(next.status).toBe(429);
        expect(Number(next.headers.get('retry-after'))).toBeGreaterThan(first);
      });

      it('slows one source guessing across many accounts, without touching other sources', async () => {
        const scanner = '198.51.100.66';
        let refused: Awaited<ReturnType<typeof from>> | undefined;
        for (let i = 0; i < 40 && !refused; i++) {
          const res = await from(scanner, `nobody-${i}@example.test`, 'password1');
          if (res.status === 429) refused = res;
          else expect(res.status).toBe(401);
        }
        expect(refused?.body.error.code).toBe('rate_limited');
        expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
        expect((await from(scanner, member.email, member.password)).status).toBe(429);
        expect((await from('203.0.113.10', member.email, member.password)).status).toBe(200);
      });
    });

    it('logs out: the session token stops working', async () => {
      const token = await gw.login(member.email, member.password);
      expect((await gw.as(token)('GET', '/v1/identities/me')).status).toBe(200);
      expect((await gw.as(token)('POST', '/v1/auth/logout')).status).toBe(204);
      const after = await gw.as(token)('GET', '/v1/identities/me');
      expect(after.status).toBe(401);
      expect(after.body.error.code).toBe('unauthenticated');
    });

    it.each([
      ['no header', undefined],
      ['not bearer', 'Basic abc'],
      ['garbage', 'Bearer garbage'],
      ['unknown agent key', 'Bearer osk_' + 'A'.repeat(43)],
      ['unknown session', 'Bearer gws_' + 'A'.repeat(43)],
      ['a JWT with no authorization server yet', 'Bearer a.b.c'],
    ])('answers 401 with the envelope for %s', async (_name, header) => {
      const res = await gw.request('GET', '/v1/identities/me', header ? { headers: { authorization: header } } : {});
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthenticated');
      expect(res.body.request_id).toBeTruthy();
    });
  });

  describe('agents, subagents and keys', () => {
    let agent: any;
    let agentKey: string;
    let sub: any;
    let subKey: string;

    it('creates an agent under the caller and returns its key once', async () => {
      const res = await gw.as(memberToken)('POST', '/v1/identities/agents', { name: 'Claude Desktop' });
      expect(res.status).toBe(201);
      agent = res.body.identity;
      agentKey = res.body.key.token;
      expect(agent).toMatchObject({ kind: 'agent', parent_id: member.userId, user_id: member.userId, auto_call_on_approve: true });
      expect(agentKey).toMatch(/^osk_[0-9A-Za-z]{43}$/);
      expect(res.body.key.prefix).toBe(agentKey.slice(0, 10));
      const keys = await gw.as(memberToken)('GET', `/v1/identities/${agent.id}/keys`);
      expect(keys.body.keys).toHaveLength(1);
      expect(JSON.stringify(keys.body)).not.toContain(agentKey);
    });

    it('authenticates with the agent key, which can create inheriting subagents under itself', async () => {
      const whoami = await gw.as(agentKey)('GET', '/v1/identities/me');
      expect(whoami.status).toBe(200);
      // The cookie is for dashboard sessions only: an agent key placed there is refused.
      expect((await gw.request('GET', '/v1/identities/me', { headers: { cookie: `gw_session=${agentKey}` } })).status).toBe(401);
      expect(whoami.body.authenticated_via).toBe('agent_key');
      expect(whoami.body.chain.map((c: any) => c.kind)).toEqual(['agent', 'user']);
      const res = await gw.as(agentKey)('POST', '/v1/identities/agents', { name: 'researcher', inherit_permissions: true, auto_call_on_approve: false });
      expect(res.status).toBe(201);
      sub = res.body.identity;
      subKey = res.body.key.token;
      expect(sub).toMatchObject({ kind: 'subagent', parent_id: agent.id, inherit_permissions: true, auto_call_on_approve: false });
      const keys = await gw.as(memberToken)('GET', `/v1/identities/${agent.id}/keys`);
      expect(keys.body.keys[0].last_used_at).not.toBeNull();
    });

    it('refuses inherit_permissions on a top-level agent and validates input strictly', async () => {
      const bad = await gw.as(memberToken)('POST', '/v1/identities/agents', { name: 'x', inherit_permissions: true });
      expect(bad.status).toBe(400);
      for (const body of [{}, { name: '' }, { name: 'x', extra: 1 }, { name: 'x', parent_id: 'not-a-uuid' }]) {
        const res = await gw.as(memberToken)('POST', '/v1/identities/agents', body);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('invalid_request');
      }
      const before = (await gw.as(memberToken)('GET', '/v1/identities')).body.identities.length;
      expect(before).toBe(3);
    });

    it('shows each principal only what it may see', async () => {
      const memberView = (await gw.as(memberToken)('GET', '/v1/identities')).body.identities.map((i: any) => i.id);
      expect(memberView.sort()).toEqual([member.userId, agent.id, sub.id].sort());
      const agentView = (await gw.as(agentKey)('GET', '/v1/identities')).body.identities.map((i: any) => i.id);
      expect(agentView.sort()).toEqual([agent.id, sub.id].sort());
      const subView = (await gw.as(subKey)('GET', '/v1/identities')).body.identities.map((i: any) => i.id);
      expect(subView).toEqual([sub.id]);
      const adminView = (await admin('GET', '/v1/identities')).body.identities.map((i: any) => i.id);
      expect(adminView).toEqual(expect.arrayContaining([me.identity.id, member.userId, agent.id, sub.id]));
      expect((await gw.as(subKey)('GET', `/v1/identities/${agent.id}`)).status).toBe(404);
      expect((await gw.as(memberToken)('GET', `/v1/identities/${me.identity.id}`)).status).toBe(404);
      expect((await gw.as(agentKey)('GET', `/v1/identities/${sub.id}`)).status).toBe(200);
      const filtered = await admin('GET', '/v1/identities?kind=subagent');
      expect(filtered.body.identities.map((i: any) => i.id)).toEqual([sub.id]);
      expect((await admin('GET', '/v1/identities?kind=robot')).status).toBe(400);
    });

    it('mints and revokes extra keys', async () => {
      const created = await gw.as(memberToken)('POST', `/v1/identities/${agent.id}/keys`, { name: 'ci' });
      expect(created.status).toBe(201);
      const token = created.body.token;
      expect((await gw.as(token)('GET', '/v1/identities/me')).status).toBe(200);
      expect((await gw.as(memberToken)('POST', `/v1/identities/${agent.id}/keys/${created.body.id}/revoke`)).status).toBe(204);
      expect((await gw.as(token)('GET', '/v1/identities/me')).status).toBe(401);
      expect((await gw.as(agentKey)('GET', '/v1/identities/me')).status).toBe(200);
      expect((await gw.as(memberToken)('POST', `/v1/identities/${member.userId}/keys`, {})).status).toBe(400);
    });

    it('lets only humans manage rules, validating patterns and ttl', async () => {
      const rules = gw.as(memberToken);
      const ok = await rules('POST', `/v1/identities/${agent.id}/rules`, { effect: 'allow', pattern: 'github:list_issues:*', ttl: '2h' });
      expect(ok.status).toBe(201);
      expect(new Date(ok.body.expires_at).getTime()).toBeGreaterThan(Date.now() + 7_000_000);
      const deny = await rules('POST', `/v1/identities/${agent.id}/rules`, { effect: 'deny', pattern: 'http:DELETE:api.example.com/*' });
      expect(deny.status).toBe(201);
      expect(deny.body.expires_at).toBeNull();
      for (const body of [
        { effect: 'allow', pattern: 'not a pattern' },
        { effect: 'maybe', pattern: 'github:*:*' },
        { effect: 'allow', pattern: 'github:*:*', ttl: '3w' },
        { effect: 'allow', pattern: 'github:*:*', ttl: '91d' },
        { effect: 'allow', pattern: 'github:*:*', ttl: '1h', expires_at: '2099-01-01T00:00:00Z' },
        { effect: 'allow', pattern: 'github:*:*', expires_at: '2001-01-01T00:00:00Z' },
        { effect: 'allow', pattern: 'github:*:*', note: 'x' },
      ]) {
        const res = await rules('POST', `/v1/identities/${agent.id}/rules`, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
      }
      const byAgent = await gw.as(agentKey)('POST', `/v1/identities/${sub.id}/rules`, { effect: 'allow', pattern: 'github:*:*' });
      expect(byAgent.status).toBe(403);
      const listed = await gw.as(agentKey)('GET', `/v1/identities/${agent.id}/rules`);
      expect(listed.body.rules.map((r: any) => r.pattern)).toEqual(['github:list_issues:*', 'http:DELETE:api.example.com/*']);
      expect((await rules('POST', `/v1/identities/${agent.id}/rules/${ok.body.id}/revoke`)).status).toBe(204);
      expect((await rules('GET', `/v1/identities/${agent.id}/rules`)).body.rules).toHaveLength(1);
      expect((await rules('GET', `/v1/identities/${agent.id}/rules?include_revoked=true`)).body.rules).toHaveLength(2);
      expect((await rules('POST', `/v1/identities/${member.userId}/rules`, { effect: 'allow', pattern: 'github:*:*' })).status).toBe(400);
    });

    it('refuses a name an active sibling holds, at creation and at rename: 409 conflict naming the field', async () => {
      const person = gw.as(memberToken);
      const taken = (r: { status: number; body: any }, holder: string) => {
        expect(r.status).toBe(409);
        expect(r.body.error).toMatchObject({ code: 'conflict', details: { field: 'name', identity_id: holder } });
      };
      // Another agent of the same person, case aside.
      const twin = await person('POST', '/v1/identities/agents', { name: 'claude desktop' });
      taken(twin, agent.id);
      expect(twin.body.error.message).toBe('member already has an agent named "Claude Desktop": choose another name');
      // Another subagent of the same agent, whoever creates it.
      const subTwin = await gw.as(agentKey)('POST', '/v1/identities/agents', { name: 'Researcher' });
      taken(subTwin, sub.id);
      expect(subTwin.body.error.message).toBe('Claude Desktop already has a subagent named "researcher": choose another name');
      // The same name under another parent is someone else's business.
      expect((await admin('POST', '/v1/identities/agents', { name: 'Claude Desktop' })).status).toBe(201);
      expect((await person('POST', '/v1/identities/agents', { name: 'researcher' })).status).toBe(201);

      // Rename (people only): to a sibling's name is refused, to a free one (or its own in other case) works.
      const helper = (await person('POST', '/v1/identities/agents', { name: 'helper' })).body.identity;
      taken(await person('PATCH', `/v1/identities/${helper.id}`, { name: ' CLAUDE DESKTOP ' }), agent.id);
      expect((await person('GET', `/v1/identities/${helper.id}`)).body.name).toBe('helper');
      const renamed = await person('PATCH', `/v1/identities/${helper.id}`, { name: 'Release helper' });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ id: helper.id, name: 'Release helper', auto_call_on_approve: true });
      expect((await person('PATCH', `/v1/identities/${helper.id}`, { name: 'release helper' })).body.name).toBe('release helper');
      expect((await gw.as(agentKey)('PATCH', `/v1/identities/${sub.id}`, { name: 'renamed by an agent' })).status).toBe(403);
      expect((await person('PATCH', `/v1/identities/${member.userId}`, { name: 'someone else' })).status).toBe(400);
      expect((await person('PATCH', `/v1/identities/${helper.id}`, { name: '' })).status).toBe(400);

      // A revoked agent's name is free again.
      expect((await person('POST', `/v1/identities/${helper.id}/revoke`)).status).toBe(200);
      expect((await person('POST', '/v1/identities/agents', { name: 'Release helper' })).status).toBe(201);
      // Two requests for one new name at once: exactly one gets it.
      const race = await Promise.all([0, 1, 2].map(() => person('POST', '/v1/identities/agents', { name: 'racer' })));
      expect(race.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    });

    it('revoking an agent revokes its subtree and kills every key below it', async () => {
      expect((await gw.as(subKey)('POST', `/v1/identities/${agent.id}/revoke`)).status).toBe(403);
      expect((await gw.as(agentKey)('POST', `/v1/identities/${agent.id}/revoke`)).status).toBe(403);
      const res = await gw.as(memberToken)('POST', `/v1/identities/${agent.id}/revoke`);
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('revoked');
      expect((await gw.as(agentKey)('GET', '/v1/identities/me')).status).toBe(401);
      expect((await gw.as(subKey)('GET', '/v1/identities/me')).status).toBe(401);
      const subNow = await gw.as(memberToken)('GET', `/v1/identities/${sub.id}`);
      expect(subNow.body.status).toBe('revoked');
      expect((await gw.as(memberToken)('POST', `/v1/identities/${member.userId}/revoke`)).status).toBe(403);
    });
  });
});
