// Thin REST over the OAuth service (mounted on the authenticated /v1 router).
//   GET  /v1/oauth/clients                       org admins: clients bound by the org's users
//   POST /v1/oauth/clients/{client_id}/revoke    org admins: revoke a client for the org
//   GET  /v1/oauth/bindings                      the caller's (user, client) → agent bindings
//   POST /v1/oauth/bindings/{id}/revoke          end one
//   PATCH /v1/oauth/bindings/{id}                {self_approve_enabled} (people only)
import { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import type { OAuthService } from './service.ts';

const clientParams = z.object({ clientId: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be a client id') });
const bindingParams = z.object({ id: z.uuid({ error: 'must be a UUID' }) });
const listBindingsQuery = z.strictObject({ include_revoked: z.enum(['true', 'false']).optional() });
const patchBindingBody = z.strictObject({ self_approve_enabled: z.boolean() });

export function oauthRoutes(oauth: OAuthService): Router {
  const r = Router();
  r.get('/oauth/clients', async (req, res) => {
    res.json({ clients: await oauth.listClients(principalOf(req)) });
  });
  r.post('/oauth/clients/:clientId/revoke', async (req, res) => {
    res.json(await oauth.revokeClient(principalOf(req), clientParams.parse(req.params).clientId));
  });
  r.get('/oauth/bindings', async (req, res) => {
    const q = listBindingsQuery.parse(req.query);
    res.json({ bindings: await oauth.listBindings(principalOf(req), q.include_revoked === 'true') });
  });
  r.post('/oauth/bindings/:id/revoke', async (req, res) => {
    res.json(await oauth.revokeBinding(principalOf(req), bindingParams.parse(req.params).id));
  });
  r.patch('/oauth/bindings/:id', async (req, res) => {
    const body = patchBindingBody.parse(req.body);
    res.json(await oauth.setSelfApprove(principalOf(req), bindingParams.parse(req.params).id, body.self_approve_enabled));
  });
  return r;
}
