// Thin REST over the identity service: parse strictly, call one method, shape the answer.
import { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import type { IdentityService } from './service.ts';

const id = z.uuid({ error: 'must be a UUID' });
const params = z.object({ id });
const keyParams = z.object({ id, keyId: id });
const ruleParams = z.object({ id, ruleId: id });

const createAgentBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  parent_id: id.optional(),
  inherit_permissions: z.boolean().optional(),
  auto_call_on_approve: z.boolean().optional(),
  key_name: z.string().trim().min(1).max(100).optional(),
});
const listQuery = z.strictObject({
  kind: z.enum(['user', 'agent', 'subagent']).optional(),
  status: z.enum(['active', 'archived', 'revoked']).optional(),
});
const createKeyBody = z.strictObject({ name: z.string().trim().min(1).max(100).optional() });
const createRuleBody = z.strictObject({
  effect: z.enum(['allow', 'deny']),
  pattern: z.string().min(3).max(2048),
  ttl: z.string().optional(),
  expires_at: z.iso.datetime({ offset: true }).optional(),
});
const updateBody = z
  .strictObject({ inherit_permissions: z.boolean().optional(), auto_call_on_approve: z.boolean().optional() })
  .refine((b) => b.inherit_permissions !== undefined || b.auto_call_on_approve !== undefined, { message: 'send inherit_permissions or auto_call_on_approve' });
const listRulesQuery = z.strictObject({ include_revoked: z.enum(['true', 'false']).optional() });

export function identityRoutes(identities: IdentityService): Router {
  const r = Router();
  r.get('/identities/me', async (req, res) => {
    res.json(await identities.me(principalOf(req)));
  });
  r.get('/identities', async (req, res) => {
    res.json({ identities: await identities.list(principalOf(req), listQuery.parse(req.query)) });
  });
  r.post('/identities/agents', async (req, res) => {
    res.status(201).json(await identities.createAgent(principalOf(req), createAgentBody.parse(req.body)));
  });
  r.get('/identities/:id', async (req, res) => {
    res.json(await identities.get(principalOf(req), params.parse(req.params).id));
  });
  r.patch('/identities/:id', async (req, res) => {
    res.json(await identities.updateSettings(principalOf(req), params.parse(req.params).id, updateBody.parse(req.body)));
  });
  r.post('/identities/:id/revoke', async (req, res) => {
    res.json(await identities.setStatus(principalOf(req), params.parse(req.params).id, 'revoked'));
  });
  r.post('/identities/:id/archive', async (req, res) => {
    res.json(await identities.setStatus(principalOf(req), params.parse(req.params).id, 'archived'));
  });
  r.get('/identities/:id/keys', async (req, res) => {
    res.json({ keys: await identities.listKeys(principalOf(req), params.parse(req.params).id) });
  });
  r.post('/identities/:id/keys', async (req, res) => {
    const body = createKeyBody.parse(req.body ?? {});
    res.status(201).json(await identities.createKey(principalOf(req), params.parse(req.params).id, body.name));
  });
  r.post('/identities/:id/keys/:keyId/revoke', async (req, res) => {
    const p = keyParams.parse(req.params);
    await identities.revokeKey(principalOf(req), p.id, p.keyId);
    res.status(204).end();
  });
  r.get('/identities/:id/rules', async (req, res) => {
    const q = listRulesQuery.parse(req.query);
    res.json({ rules: await identities.listRules(principalOf(req), params.parse(req.params).id, q.include_revoked === 'true') });
  });
  r.post('/identities/:id/rules', async (req, res) => {
    res.status(201).json(await identities.createRule(principalOf(req), params.parse(req.params).id, createRuleBody.parse(req.body)));
  });
  r.post('/identities/:id/rules/:ruleId/revoke', async (req, res) => {
    const p = ruleParams.parse(req.params);
    await identities.revokeRule(principalOf(req), p.id, p.ruleId);
    res.status(204).end();
  });
  return r;
}
