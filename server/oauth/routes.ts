// Thin REST over the OAuth service (mounted on the authenticated /v1 router).
//   GET  /v1/oauth/clients                       org admins: clients bound by the org's users
//   POST /v1/oauth/clients/{client_id}/revoke    org admins: revoke a client for the org
//   GET  /v1/oauth/bindings                      the caller's (user, client) → agent bindings
//   POST /v1/oauth/bindings/{id}/revoke          end one
//   PATCH /v1/oauth/bindings/{id}                {self_approve_enabled} (people only)
import type { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import { apiRouter } from '../http/api-router.ts';
import { OAuthBinding, OAuthBindingList, OAuthClientList, RevokedOAuthClient } from './responses.ts';
import type { OAuthService } from './service.ts';

const clientParams = z.object({ clientId: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be a client id') });
const bindingParams = z.object({ id: z.uuid({ error: 'must be a UUID' }) });
const listBindingsQuery = z.strictObject({ include_revoked: z.enum(['true', 'false']).optional() });
const patchBindingBody = z.strictObject({ self_approve_enabled: z.boolean() });

export function oauthRoutes(oauth: OAuthService): Router {
  const r = apiRouter({ tags: ['OAuth administration'] });
  r.route({
    method: 'get',
    path: '/oauth/clients',
    operationId: 'listOAuthClients',
    summary: 'MCP clients bound by the org’s users (org admins)',
    responses: { 200: OAuthClientList },
    errors: ['forbidden'],
  }, async (req, res) => {
    res.json({ clients: await oauth.listClients(principalOf(req)) });
  });
  r.route({
    method: 'post',
    path: '/oauth/clients/{clientId}/revoke',
    operationId: 'revokeOAuthClient',
    summary: 'Revoke a client for the org: bindings end, tokens stop working',
    params: clientParams,
    responses: { 200: RevokedOAuthClient },
    errors: ['forbidden', 'not_found'],
  }, async (req, res, { params }) => {
    res.json(await oauth.revokeClient(principalOf(req), params.clientId));
  });
  r.route({
    method: 'get',
    path: '/oauth/bindings',
    operationId: 'listOAuthBindings',
    summary: 'The caller’s (user, client) → agent bindings',
    query: listBindingsQuery,
    responses: { 200: OAuthBindingList },
  }, async (req, res, { query }) => {
    res.json({ bindings: await oauth.listBindings(principalOf(req), query.include_revoked === 'true') });
  });
  r.route({
    method: 'post',
    path: '/oauth/bindings/{id}/revoke',
    operationId: 'revokeOAuthBinding',
    summary: 'End a binding (its tokens stop working; the next authorization asks again)',
    params: bindingParams,
    responses: { 200: OAuthBinding },
    errors: ['not_found'],
  }, async (req, res, { params }) => {
    res.json(await oauth.revokeBinding(principalOf(req), params.id));
  });
  r.route({
    method: 'patch',
    path: '/oauth/bindings/{id}',
    operationId: 'updateOAuthBinding',
    summary: 'Turn self-approval on or off for a binding (people only)',
    params: bindingParams,
    body: patchBindingBody,
    responses: { 200: OAuthBinding },
    errors: ['forbidden', 'not_found'],
  }, async (req, res, { params, body }) => {
    res.json(await oauth.setSelfApprove(principalOf(req), params.id, body.self_approve_enabled));
  });
  return r.router;
}
