// Single sign-on with OpenID Connect against a real provider on loopback (issue 29): the admin's
// configuration (secret in the vault, strict input), joining from an invitation, just-in-time join
// on and off, and every refusal a page that says why — a wrong audience, an expired ID token, an
// unknown domain, a replayed state. Password sign-in can be turned off once SSO worked.
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, ADMIN_EMAIL, ADMIN_PASSWORD, type TestGateway } from '../support/gateway.ts';
import { authorizeAtProvider } from '../support/oauth-provider.ts';
import { startOidcIdp, type TestIdp } from '../support/oidc-idp.ts';
import { seedUser } from '../support/seed.ts';

type As = ReturnType<TestGateway['as']>;

describe('single sign-on (OpenID Connect)', () => {
  let gw: TestGateway;
  let idp: TestIdp;
  let admin: As;
  let orgId: string;
  let callbackPrefix: string;

  /** Starts at the gateway, signs in at the provider as `account`, and comes back; answers the callback's response. */
  const signIn = async (account: string, opts: { invitationToken?: string; edit?: (c: Record<string, unknown>) => Record<string, unknown>; org?: string } = {}) => {
    const start = await gw.request('POST', '/v1/auth/sso/start', { body: { org_id: opts.org ?? orgId, ...(opts.invitationToken ? { invitation_token: opts.invitationToken } : {}) } });
    expect(start.status, start.text).toBe(200);
    const url = new URL(start.body.authorization_url);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('state')).toBeTruthy();
    expect(url.searchParams.get('nonce')).toBeTruthy();
    // The browser that started it carries its binding cookie back to the callback.
    const browser = start.headers.get('set-cookie')!.split(';')[0]!;
    expect(browser).toMatch(/^gw_sso=/);
    expect(start.headers.get('set-cookie')).toContain('HttpOnly');
    const callback = await authorizeAtProvider(start.body.authorization_url, account, callbackPrefix);
    if (opts.edit) idp.tamperNextIdToken(opts.edit);
    return { callback, browser, ...(await back(callback, browser)) };
  };
  const back = async (callback: string, browser: string | null) => {
    const res = await fetch(callback, { redirect: 'manual', headers: { accept: 'text/html', ...(browser ? { cookie: browser } : {}) } });
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('gw_session='));
    return { status: res.status, location: res.headers.get('location'), html: await res.text(), session: cookie ? decodeURIComponent(cookie.split(';')[0]!.slice('gw_session='.length)) : null };
  };
  const people = async () => (await admin('GET', '/v1/org/members')).body.members as { email: string; role: string; id: string }[];

  beforeAll(async () => {
    gw = await startTestGateway({ realPublicUrl: true });
    callbackPrefix = `${gw.config.publicUrl}/v1/auth/sso/callback`;
    idp = await startOidcIdp(callbackPrefix);
    admin = gw.as(gw.adminToken);
    orgId = (await admin('GET', '/v1/identities/me')).body.org.id;
  });
  afterAll(async () => {
    await gw?.stop();
    await idp?.stop();
  });

  it('an admin configures it: strict input, the secret in the vault and never shown, the sign-in page’s button', async () => {
    const good = { issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, allowed_domains: ['corp.test'], jit: false, display_name: 'Corp SSO' };
    const bad: [Record<string, unknown>, number][] = [
      [{ ...good, issuer: 'http://idp.example.com' }, 400],
      [{ ...good, allowed_domains: ['not a domain'] }, 400],
      [{ ...good, allowed_domains: [] }, 400],
      [{ ...good, extra: true }, 400],
      [{ ...good, client_secret: undefined }, 400],
      [{ ...good, password_signin: false }, 409],
      [{ ...good, issuer: 'http://127.0.0.1:9/' }, 422],
    ];
    for (const [body, status] of bad) {
      const res = await admin('PUT', '/v1/org/sso', body);
      expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(status);
    }
    expect((await admin('GET', '/v1/org/sso')).status).toBe(404);
    const put = await admin('PUT', '/v1/org/sso', good);
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ issuer: idp.issuer, client_secret_set: true, jit: false, password_signin: true, verified_at: null, redirect_uri: callbackPrefix });
    expect(put.text).not.toContain(idp.clientSecret);
    expect((await admin('GET', '/v1/org/sso')).text).not.toContain(idp.clientSecret);
    const secrets = await admin('GET', '/v1/secrets');
    expect(secrets.body.secrets.map((s: { name: string }) => s.name)).toContain('sso.client_secret');
    expect(secrets.text).not.toContain(idp.clientSecret);
    const audit = await admin('GET', '/v1/audit?event=sso.configured');
    expect(audit.body.entries[0]).toMatchObject({ actor_id: expect.any(String), details: { issuer: idp.issuer, secret_changed: true, jit: false } });
    expect(audit.text).not.toContain(idp.clientSecret);
    const buttons = await gw.request('GET', '/v1/auth/sso');
    expect(buttons.body.providers).toEqual([{ org_id: orgId, display_name: 'Corp SSO' }]);
    // People other than admins neither see nor change it.
    await admin('POST', '/v1/org/invitations', { email: 'kai@example.test', role: 'member' }).then(async (inv) => {
      const kai = await gw.request('POST', '/v1/invitations/accept', { body: { token: inv.body.token, name: 'Kai', password: 'kai has a long password' } });
      const asKai = gw.as(kai.body.token);
      expect((await asKai('GET', '/v1/org/sso')).status).toBe(403);
      expect((await asKai('PUT', '/v1/org/sso', good)).status).toBe(403);
    });
  });

  it('without just-in-time join, a stranger of an allowed domain is refused with a page; an invited person joins with the invited role', async () => {
    const stranger = await signIn('sol@corp.test');
    expect(stranger.status).toBe(403);
    expect(stranger.html).toContain('has no invitation to this org');
    expect(stranger.html).toContain('data-reason="not_invited"');
    expect(stranger.session).toBeNull();
    expect((await people()).map((p) => p.email)).not.toContain('sol@corp.test');

    const inv = await admin('POST', '/v1/org/invitations', { email: 'ann@corp.test', role: 'approver' });
    const ann = await signIn('ann@corp.test', { invitationToken: inv.body.token });
    expect(ann.status, ann.html).toBe(303);
    expect(ann.location).toBe(`${gw.config.publicUrl}/approvals`);
    expect(ann.session).toMatch(/^gws_/);
    const me = await gw.as(ann.session!)('GET', '/v1/identities/me');
    expect(me.body.identity).toMatchObject({ email: 'ann@corp.test', role: 'approver', name: 'Ann' });
    const invitation = (await admin('GET', '/v1/org/invitations')).body.invitations.find((i: { id: string }) => i.id === inv.body.invitation.id);
    expect(invitation.status).toBe('accepted');
    // She has no password: password sign-in never matches her.
    expect((await gw.request('POST', '/v1/auth/login', { body: { email: 'ann@corp.test', password: 'sso-only' } })).status).toBe(401);
    // Signing in again finds her by the provider's subject.
    const again = await signIn('ann@corp.test');
    expect(again.status).toBe(303);
    expect((await people()).filter((p) => p.email === 'ann@corp.test')).toHaveLength(1);

    // Replayed state: the same callback a second time is refused with a page.
    const replay = await back(ann.callback, ann.browser);
    expect(replay.status).toBe(400);
    expect(replay.html).toContain('already used or has expired');
    expect(replay.html).toContain('data-reason="replayed_state"');
    expect(replay.session).toBeNull();
  });

  it('refuses a wrong audience, an expired ID token, an unknown domain and a callback carried to another browser, each with a clear page', async () => {
    const before = (await people()).length;
    // Login CSRF: a callback URL someone else's sign-in produced does not sign this browser in.
    const start = await gw.request('POST', '/v1/auth/sso/start', { body: { org_id: orgId } });
    const carried = await authorizeAtProvider(start.body.authorization_url, 'ann@corp.test', callbackPrefix);
    const elsewhere = await back(carried, 'gw_sso=someone-elses-browser');
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.html).toContain('started in another browser');
    expect(elsewhere.html).toContain('data-reason="other_browser"');
    expect(elsewhere.session).toBeNull();
    expect((await back(carried, null)).html).toContain('data-reason="replayed_state"');

    const aud = await signIn('ann@corp.test', { edit: (c) => ({ ...c, aud: 'some-other-app' }) });
    expect(aud.status).toBe(403);
    expect(aud.html).toContain('could not be verified');
    expect(aud.html).toContain('data-reason="invalid_id_token"');
    expect(aud.session).toBeNull();

    const now = Math.floor(Date.now() / 1000);
    const expired = await signIn('ann@corp.test', { edit: (c) => ({ ...c, iat: now - 3600, exp: now - 1800 }) });
    expect(expired.status).toBe(403);
    expect(expired.html).toContain('data-reason="invalid_id_token"');
    expect(expired.session).toBeNull();
    // Both were signed by the provider's own key: only the claim was wrong.
    expect(idp.idTokens.length).toBeGreaterThanOrEqual(2);

    const other = await signIn('eve@elsewhere.test');
    expect(other.status).toBe(403);
    expect(other.html).toContain('Accounts of elsewhere.test cannot sign in to this organisation');
    expect(other.html).toContain('data-reason="unknown_domain"');
    expect((await people()).length).toBe(before);
    expect(gw.logs.join('\n')).not.toContain(idp.clientSecret);
  });

  it('with just-in-time join on, a first sign-in of an allowed domain joins as member; password sign-in can then be turned off', async () => {
    const on = await admin('PUT', '/v1/org/sso', { issuer: idp.issuer, client_id: idp.clientId, allowed_domains: ['corp.test'], jit: true, display_name: 'Corp SSO' });
    expect(on.status, on.text).toBe(200);
    // Same provider and client, no new secret: what was verified stays verified.
    expect(on.body.verified_at).not.toBeNull();
    const bo = await signIn('bo@corp.test');
    expect(bo.status, bo.html).toBe(303);
    expect((await people()).find((p) => p.email === 'bo@corp.test')).toMatchObject({ role: 'member' });
    const joined = (await admin('GET', '/v1/audit?event=member.joined')).body.entries.find((e: any) => e.user_name === 'Bo');
    expect(joined.details).toEqual({ via: 'sso', just_in_time: true, role: 'member' });

    const off = await admin('PUT', '/v1/org/sso', { issuer: idp.issuer, client_id: idp.clientId, allowed_domains: ['corp.test'], jit: true, display_name: 'Corp SSO', password_signin: false });
    expect(off.status, off.text).toBe(200);
    expect(off.body.password_signin).toBe(false);
    const refused = await gw.request('POST', '/v1/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('single sign-on only');
    // Nor does anyone join with a password now: invitations go through SSO.
    const inv = await admin('POST', '/v1/org/invitations', { email: 'cy@corp.test', role: 'member' });
    expect((await gw.request('POST', '/v1/invitations/lookup', { body: { token: inv.body.token } })).body.password_join).toBe(false);
    const byPassword = await gw.request('POST', '/v1/invitations/accept', { body: { token: inv.body.token, name: 'Cy', password: 'cy has a long password' } });
    expect(byPassword.status).toBe(403);
    expect(byPassword.body.error.message).toContain('single sign-on only');
    expect((await admin('GET', '/v1/org/invitations')).body.invitations.find((i: { id: string }) => i.id === inv.body.invitation.id).status).toBe('open');
    // A wrong password still reads as a wrong password (nothing told to strangers).
    expect((await gw.request('POST', '/v1/auth/login', { body: { email: ADMIN_EMAIL, password: 'wrong password here' } })).status).toBe(401);
    expect((await admin('PUT', '/v1/org/sso', { issuer: idp.issuer, client_id: idp.clientId, allowed_domains: ['corp.test'], jit: true, display_name: 'Corp SSO', password_signin: true })).status).toBe(200);
    expect(await gw.login(ADMIN_EMAIL, ADMIN_PASSWORD)).toMatch(/^gws_/);
  });
  describe('a domain belongs to one org (issue 15)', () => {
    let other: { orgId: string; as: As };
    const config = (domains: string[]) => ({ issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, allowed_domains: domains, jit: true, display_name: 'Rival SSO' });

    beforeAll(async () => {
      const rival = await seedUser(gw.databaseUrl, { email: 'boss@rival.test', role: 'admin' });
      other = { orgId: rival.orgId, as: gw.as(await gw.login(rival.email, rival.password)) };
    });

    it('another org cannot claim a domain this org’s single sign-on has, and is not told whose it is; nothing of the change is kept', async () => {
      const ours = await admin('GET', '/v1/org/sso');
      expect(ours.body.allowed_domains).toContain('corp.test');
      const refused = await other.as('PUT', '/v1/org/sso', config(['rival.test', 'CORP.test']));
      expect(refused.status, refused.text).toBe(409);
      expect(refused.body.error).toMatchObject({ code: 'conflict', details: { field: 'allowed_domains', domains: ['corp.test'] } });
      expect(refused.body.error.message).toContain('corp.test is already claimed by another organisation');
      const orgName = (await admin('GET', '/v1/identities/me')).body.org.name as string;
      for (const leak of [orgId, orgName, ADMIN_EMAIL]) expect(refused.text).not.toContain(leak);
      expect((await other.as('GET', '/v1/org/sso')).status).toBe(404);
      expect((await other.as('GET', '/v1/secrets')).body.secrets).toEqual([]);
      // Its own domain is its own.
      const put = await other.as('PUT', '/v1/org/sso', config(['rival.test']));
      expect(put.status, put.text).toBe(200);
      // And now this org cannot take that one either.
      const back = await admin('PUT', '/v1/org/sso', { issuer: idp.issuer, client_id: idp.clientId, allowed_domains: ['corp.test', 'rival.test'], jit: true, display_name: 'Corp SSO' });
      expect(back.status).toBe(409);
      expect(back.body.error.details.domains).toEqual(['rival.test']);
    });

    it('just-in-time join takes in only addresses of a domain the org has claimed, even where an older configuration lists another org’s', async () => {
      // A configuration from before domains were exclusive lists this org's domain too.
      await gw.pool.query(sql.unsafe`UPDATE sso_configs SET allowed_domains = array_append(allowed_domains, 'corp.test') WHERE org_id = ${other.orgId}`);
      const eve = await signIn('eve@corp.test', { org: other.orgId });
      expect(eve.status).toBe(403);
      expect(eve.html).toContain('data-reason="not_invited"');
      expect(eve.session).toBeNull();
      const found = await gw.pool.maybeOne(sql.unsafe`SELECT org_id FROM identities WHERE lower(email) = 'eve@corp.test'`);
      expect(found).toBeNull();
      // Its own domain still joins just in time.
      const rex = await signIn('rex@rival.test', { org: other.orgId });
      expect(rex.status, rex.html).toBe(303);
      expect((await gw.as(rex.session!)('GET', '/v1/identities/me')).body.org.id).toBe(other.orgId);
    });

    it('inviting an address that has an account in another org answers as any invitation does', async () => {
      const elsewhere = await other.as('POST', '/v1/org/invitations', { email: 'bo@corp.test', role: 'member' });
      const nowhere = await other.as('POST', '/v1/org/invitations', { email: 'nobody-yet@corp.test', role: 'member' });
      expect(elsewhere.status, elsewhere.text).toBe(201);
      expect(nowhere.status).toBe(201);
      const shape = (b: Record<string, unknown>) => Object.keys(b).sort();
      expect(shape(elsewhere.body)).toEqual(shape(nowhere.body));
      expect(elsewhere.body.invitation).toMatchObject({ email: 'bo@corp.test', status: 'open' });
      // The invitee learns it when accepting (it is their own account); nothing joins.
      const accept = await gw.request('POST', '/v1/invitations/accept', { body: { token: elsewhere.body.token, name: 'Bo', password: 'bo has a long password here' } });
      expect(accept.status).toBe(409);
      expect((await admin('GET', '/v1/org/members')).body.members.filter((m: { email: string }) => m.email === 'bo@corp.test')).toHaveLength(1);
    });
  });
});
