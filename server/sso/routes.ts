// REST for single sign-on (issue 29). Before authentication: the sign-in page's buttons, starting a
// sign-in, and the provider's redirect back (a page for every refusal). After: the admin's
// configuration of the org's identity provider.
import type { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import { gatewayCookie, sessionCookie } from '../auth/routes.ts';
import { SESSION_TTL_SECONDS } from '../auth/service.ts';
import { apiRouter } from '../http/api-router.ts';
import { nullableTimestamp, timestamp, uuid } from '../http/openapi/common.ts';
import { errorPage, PAGE_HEADERS } from '../oauth/html.ts';
import { readCookie } from '../auth/middleware.ts';
import { SSO_BROWSER_COOKIE, SSO_LOGIN_TTL_SECONDS, SsoRefusal, type SsoService } from './service.ts';

export const SsoConfig = z
  .strictObject({
    issuer: z.string(),
    client_id: z.string(),
    client_secret_set: z.boolean().describe('The secret itself is in the vault and never shown.'),
    allowed_domains: z.array(z.string()),
    jit: z.boolean().describe('A first sign-in from an allowed domain joins the org as `member`; off: an invitation is needed.'),
    display_name: z.string().describe('Shown as "Sign in with <display_name>".'),
    password_signin: z.boolean(),
    verified_at: nullableTimestamp.describe('The first successful SSO sign-in; password sign-in can be turned off only after it.'),
    redirect_uri: z.string().describe('Register this redirect URI with the identity provider.'),
    updated_at: timestamp,
  })
  .meta({ id: 'SsoConfig' });

const ssoBody = z.strictObject({
  issuer: z.string().min(8).max(2048),
  client_id: z.string().min(1).max(512),
  client_secret: z.string().min(1).max(4096).optional(),
  allowed_domains: z.array(z.string().min(1).max(253)).min(1).max(50),
  jit: z.boolean(),
  display_name: z.string().trim().min(1).max(100),
  password_signin: z.boolean().optional(),
});

export function ssoPublicRoutes(sso: SsoService, publicUrl: string): Router {
  const r = apiRouter({ tags: ['Sign-in'], auth: 'none' });
  r.route({
    method: 'get',
    path: '/auth/sso',
    operationId: 'listSsoProviders',
    summary: 'The single sign-on buttons of the sign-in page ("Sign in with <name>")',
    responses: { 200: z.strictObject({ providers: z.array(z.strictObject({ org_id: uuid, display_name: z.string() })) }) },
  }, async (_req, res) => {
    res.json({ providers: await sso.buttons() });
  });
  r.route({
    method: 'post',
    path: '/auth/sso/start',
    operationId: 'startSso',
    summary: 'Start signing in at the org’s identity provider (PKCE, state, nonce); optionally from an invitation link',
    body: z.strictObject({ org_id: z.uuid(), invitation_token: z.string().min(10).max(200).optional() }),
    responses: { 200: z.strictObject({ authorization_url: z.string().describe('Send the browser here.') }) },
    errors: ['not_found', 'invitation_unusable', 'unavailable'],
  }, async (req, res, { body }) => {
    const { authorization_url, browser } = await sso.start(body);
    res.setHeader('Set-Cookie', gatewayCookie(req, publicUrl, { name: SSO_BROWSER_COOKIE, value: browser, path: '/v1/auth/sso', maxAge: SSO_LOGIN_TTL_SECONDS }));
    res.json({ authorization_url });
  });
  r.route({
    method: 'get',
    path: '/auth/sso/callback',
    operationId: 'ssoCallback',
    summary: 'Where the identity provider sends the browser back; signs the person in',
    description: 'Success: the session cookie and a redirect to the inbox. Any refusal (replayed state, another browser than the one that started, an ID token that fails validation, a domain not allowed, no invitation) is a page that says why.',
    responses: {
      303: { description: 'Signed in: to the inbox', headers: { Location: 'The dashboard inbox' } },
    },
    // Refusals are pages: 400 when the state is missing, used or expired; 403 when the provider's answer is refused.
    errors: ['invalid_request', 'forbidden'],
    htmlErrors: true,
    validatesItself: true,
  }, async (req, res) => {
    res.set(PAGE_HEADERS);
    res.setHeader('Referrer-Policy', 'no-referrer');
    const query = new URLSearchParams(req.url.split('?')[1] ?? '');
    try {
      const done = await sso.callback(query, readCookie(req, SSO_BROWSER_COOKIE));
      res.setHeader('Set-Cookie', sessionCookie(req, done.token, SESSION_TTL_SECONDS, publicUrl));
      res.redirect(303, `${publicUrl}${done.landing}`);
    } catch (err) {
      if (!(err instanceof SsoRefusal)) throw err;
      res.status(err.status).type('html').send(errorPage('Single sign-on refused', err.message).replace('<main>', `<main data-reason="${err.reason}">`).replace('Start again from the application that sent you here.', `<a href="${publicUrl}/signin">Back to sign-in</a>`));
    }
  });
  return r.router;
}

export function ssoAdminRoutes(sso: SsoService): Router {
  const r = apiRouter({ tags: ['Org'] });
  r.route({ method: 'get', path: '/org/sso', operationId: 'getSsoConfig', summary: 'The org’s single sign-on configuration (admins)', auth: 'human', responses: { 200: SsoConfig }, errors: ['forbidden', 'not_found'] }, async (req, res) => {
    res.json(await sso.getConfig(principalOf(req)));
  });
  r.route({
    method: 'put',
    path: '/org/sso',
    operationId: 'putSsoConfig',
    summary: 'Configure single sign-on with OpenID Connect: issuer, client, allowed domains, just-in-time join, password sign-in (admins)',
    auth: 'human',
    body: ssoBody,
    responses: { 200: SsoConfig },
    errors: ['forbidden', 'conflict', 'validation_failed'],
  }, async (req, res, { body }) => {
    res.json(await sso.putConfig(principalOf(req), body));
  });
  return r.router;
}
