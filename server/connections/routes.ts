// Thin REST over the connection service: parse strictly, call one method, shape the answer.
// Two routers: the OAuth callback is public (the provider redirects the user's browser to it and
// the single-use state authenticates it); everything else sits behind `authenticate(...)`.
import type { Request, Response, Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import { AppError } from '../errors.ts';
import { apiRouter } from '../http/api-router.ts';
import { ConnectionList, ConnectionResult, ConnectionWithAuthUrl, OAuthAppList, OAuthAppResult } from './responses.ts';
import type { ConnectionService } from './service.ts';

const id = z.uuid({ error: 'must be a UUID' });
const params = z.object({ id });
const provider = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'must be 1-64 lowercase letters, digits, "_", "." or "-"');
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' }).max(2048);
/** RFC 6749 §3.3 scope-token: printable ASCII except space, `"` and `\`. */
const scope = z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,200}$/, 'must be an RFC 6749 scope token');
const connectionName = z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, 'must be 1-128 letters, digits, "_", "." or "-"');

const putAppBody = z.strictObject({
  client_id: z.string().min(1).max(512),
  client_secret: z.string().min(1).max(4096).optional(),
  authorization_url: httpUrl,
  token_url: httpUrl,
  revocation_url: httpUrl.nullable().optional(),
  userinfo_url: httpUrl.nullable().optional(),
  use_pkce: z.boolean().optional(),
  token_endpoint_auth_method: z.enum(['client_secret_basic', 'client_secret_post', 'none']).optional(),
});

const createBody = z.strictObject({
  provider,
  name: connectionName.optional(),
  scopes: z.array(scope).max(100).optional(),
  template: connectionName.optional(),
  redirect_after: z.string().min(1).max(2048).optional(),
});

const authorizeBody = z.strictObject({
  scopes: z.array(scope).min(1).max(100).optional(),
  redirect_after: z.string().min(1).max(2048).optional(),
});

// Not strict: providers add their own parameters (iss, session_state, scope, …).
const callbackQuery = z.object({
  state: z.string().max(512).optional(),
  code: z.string().max(4096).optional(),
  error: z.string().max(512).optional(),
  error_description: z.string().max(2048).optional(),
});

const providerParams = z.object({ provider });
const OAUTH_ERRORS = ['forbidden', 'not_found', 'conflict', 'credential_missing', 'needs_authentication', 'reauth_required', 'upstream_error', 'upstream_unreachable', 'upstream_timeout'] as const;

export function connectionRoutes(connections: ConnectionService): Router {
  const r = apiRouter({ tags: ['Connections'] });
  r.route({
    method: 'get',
    path: '/oauth-apps',
    operationId: 'listOAuthApps',
    summary: 'OAuth apps (client credentials) configured for the org',
    responses: { 200: OAuthAppList },
    errors: ['forbidden'],
  }, async (req, res) => {
    res.json({ oauth_apps: await connections.listOAuthApps(principalOf(req)) });
  });
  r.route({
    method: 'put',
    path: '/oauth-apps/{provider}',
    operationId: 'putOAuthApp',
    summary: 'Configure the OAuth app of a provider (org admins)',
    params: providerParams,
    body: putAppBody,
    responses: { 201: OAuthAppResult, 200: OAuthAppResult },
    errors: ['forbidden', 'conflict'],
  }, async (req, res, { params, body }) => {
    const out = await connections.putOAuthApp(principalOf(req), params.provider, body);
    res.status(out.created ? 201 : 200).json({ oauth_app: out.oauth_app });
  });
  r.route({
    method: 'get',
    path: '/connections',
    operationId: 'listConnections',
    summary: 'Connections the caller can see',
    responses: { 200: ConnectionList },
  }, async (req, res) => {
    res.json({ connections: await connections.list(principalOf(req)) });
  });
  r.route({
    method: 'post',
    path: '/connections',
    operationId: 'createConnection',
    summary: 'Start an OAuth connection: answers the auth_url to open',
    body: createBody,
    responses: { 201: ConnectionWithAuthUrl },
    errors: [...OAUTH_ERRORS],
  }, async (req, res, { body }) => {
    res.status(201).json(await connections.create(principalOf(req), body));
  });
  r.route({
    method: 'get',
    path: '/connections/{id}',
    operationId: 'getConnection',
    summary: 'One connection (no tokens)',
    params,
    responses: { 200: ConnectionResult },
    errors: ['not_found', 'forbidden'],
  }, async (req, res, { params }) => {
    res.json({ connection: await connections.get(principalOf(req), params.id) });
  });
  r.route({
    method: 'post',
    path: '/connections/{id}/authorize',
    operationId: 'authorizeConnection',
    summary: 'A fresh auth_url for an existing connection, or the upgrade auth_url that adds scopes',
    params,
    body: authorizeBody,
    bodyOptional: true,
    responses: { 200: ConnectionWithAuthUrl },
    errors: [...OAUTH_ERRORS],
  }, async (req, res, { params, body }) => {
    res.json(await connections.authorize(principalOf(req), params.id, body));
  });
  r.route({
    method: 'post',
    path: '/connections/{id}/refresh',
    operationId: 'refreshConnection',
    summary: 'Refresh the access token now',
    params,
    responses: { 200: ConnectionResult },
    errors: [...OAUTH_ERRORS],
  }, async (req, res, { params }) => {
    res.json({ connection: await connections.refresh(principalOf(req), params.id) });
  });
  r.route({
    method: 'delete',
    path: '/connections/{id}',
    operationId: 'deleteConnection',
    summary: 'Revoke (at the provider, best effort) and delete a connection',
    params,
    responses: { 204: null },
    errors: ['not_found', 'forbidden'],
  }, async (req, res, { params }) => {
    await connections.remove(principalOf(req), params.id);
    res.status(204).end();
  });
  return r.router;
}

/** Mounted before `authenticate(...)`: reached by the browser, authenticated by the state. */
export function connectionCallbackRoutes(connections: ConnectionService): Router {
  const r = apiRouter({ tags: ['Connections'], auth: 'none' });
  r.route(
    {
      method: 'get',
      path: '/connections/callback',
      operationId: 'connectionCallback',
      summary: 'Where the provider sends the browser back (authenticated by the single-use state)',
      description: 'Browsers (Accept: text/html) get a page, errors included; API clients get the JSON error envelope.',
      query: callbackQuery,
      responses: {
        200: { description: 'Connected: a page saying so', contentType: 'text/html' },
        303: { description: 'Connected: back to the redirect_after URL', headers: { Location: 'The redirect_after URL' } },
      },
      errors: [...OAUTH_ERRORS],
      htmlErrors: true,
      // Bad callback parameters get the same page a browser reads for any other failure here.
      validatesItself: true,
    },
    async (req, res) => {
    // The URL carries a live code: keep it out of caches and of any Referer.
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Referrer-Policy', 'no-referrer');
    try {
      const q = callbackQuery.safeParse(req.query);
      if (!q.success) throw new AppError('invalid_request', 'the callback parameters are not valid');
      const out = await connections.completeAuthorization(q.data);
      if (out.redirect) {
        res.redirect(303, out.redirect);
        return;
      }
      page(res, 200, 'Connected', `Connected to ${out.connection.provider} as “${out.connection.name}” — you can close this window.`);
    } catch (err) {
      // A browser gets a readable page; API clients and tests get the usual error envelope.
      if (err instanceof AppError && wantsHtml(req)) {
        page(res, err.status, 'Connection failed', `${err.message}`);
        return;
      }
      throw err;
    }
    },
  );
  return r.router;
}

const wantsHtml = (req: Request) => req.accepts(['json', 'html']) === 'html';

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(res: Response, status: number, title: string, message: string): void {
  res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
  res
    .status(status)
    .type('html')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
        `<title>${escapeHtml(title)}</title><style>body{font:16px system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em}</style></head>` +
        `<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>`,
    );
}
