// Thin REST over the identity service: parse strictly, call one method, shape the answer.
import type { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import { apiRouter } from '../http/api-router.ts';
import { CreatedAgent, Identity, IdentityList, KeyList, Me, NewAgentKey, Rule, RuleBudgetSchema, RuleList } from './responses.ts';
import type { IdentityService } from './service.ts';

const id = z.uuid({ error: 'must be a UUID' });
const params = z.object({ id });
const keyParams = z.object({ id, keyId: id });
const ruleParams = z.object({ id, ruleId: id });

/** Unique among the active children of one parent (a person's agents, an agent's subagents), case aside. */
const agentName = z.string().trim().min(1).max(200);
const NAME_TAKEN = 'A name already held by an active sibling (another agent of the same person, another subagent of the same agent; case aside) is refused with 409 `conflict`, `details.field` = `name`.';
const createAgentBody = z.strictObject({
  name: agentName,
  parent_id: id.optional(),
  inherit_permissions: z.boolean().optional(),
  auto_call_on_approve: z.boolean().optional(),
  key_name: z.string().trim().min(1).max(100).optional(),
});
/** A page of the identities listing: 100 unless asked, at most 500 (issue 46: the work is the page's, not the org's). */
export const IDENTITY_PAGE = { default: 100, max: 500 } as const;
const listQuery = z.strictObject({
  kind: z.enum(['user', 'agent', 'subagent']).optional(),
  status: z.enum(['active', 'archived', 'revoked']).optional(),
  limit: z.coerce.number().int().min(1).max(IDENTITY_PAGE.max).default(IDENTITY_PAGE.default),
  cursor: z.string().max(200).optional().describe('A `next_cursor` of this listing with the same filters.'),
});
const createKeyBody = z.strictObject({ name: z.string().trim().min(1).max(100).optional() });
const createRuleBody = z.strictObject({
  effect: z.enum(['allow', 'deny']),
  pattern: z.string().min(3).max(2048),
  ttl: z.string().optional(),
  expires_at: z.iso.datetime({ offset: true }).optional(),
  condition: z.string().max(1000).optional().describe('A CEL expression over {method, url, host, path, query, params, body} of the redacted request; the rule applies only when it is true (a missing field makes it false). Checked when saved: 400 with `details.position`.'),
  budget: RuleBudgetSchema.optional(),
});
const updateBody = z
  .strictObject({ name: agentName.optional(), inherit_permissions: z.boolean().optional(), auto_call_on_approve: z.boolean().optional() })
  .refine((b) => b.name !== undefined || b.inherit_permissions !== undefined || b.auto_call_on_approve !== undefined, {
    message: 'send name, inherit_permissions or auto_call_on_approve',
  });
const listRulesQuery = z.strictObject({ include_revoked: z.enum(['true', 'false']).optional() });

export function identityRoutes(identities: IdentityService): Router {
  const r = apiRouter({ tags: ['Identities'] });
  const managed = ['forbidden', 'not_found', 'conflict'] as const;
  r.route({
    method: 'get',
    path: '/identities/me',
    operationId: 'getMe',
    summary: 'The caller, its chain up to the user, its org',
    responses: { 200: Me },
    errors: ['not_found'],
  }, async (req, res) => {
    res.json(await identities.me(principalOf(req)));
  });
  r.route({
    method: 'get',
    path: '/identities',
    operationId: 'listIdentities',
    summary: 'Identities the caller can see (admins: the whole org; others: their subtree), oldest first (cursor pagination)',
    description: 'A parent is always listed before its children, so each page extends the tree of the pages before it.',
    query: listQuery,
    responses: { 200: IdentityList },
  }, async (req, res, { query }) => {
    res.json(await identities.list(principalOf(req), query));
  });
  r.route({
    method: 'post',
    path: '/identities/agents',
    operationId: 'createAgent',
    summary: 'Create an agent (or a subagent under parent_id) with its first key',
    description: NAME_TAKEN,
    body: createAgentBody,
    responses: { 201: CreatedAgent },
    errors: [...managed],
  }, async (req, res, { body }) => {
    res.status(201).json(await identities.createAgent(principalOf(req), body));
  });
  r.route({
    method: 'get',
    path: '/identities/{id}',
    operationId: 'getIdentity',
    summary: 'One identity',
    params,
    responses: { 200: Identity },
    errors: ['not_found'],
  }, async (req, res, { params: { id } }) => {
    res.json(await identities.get(principalOf(req), id));
  });
  r.route({
    method: 'patch',
    path: '/identities/{id}',
    operationId: 'updateIdentity',
    summary: 'Rename an agent or subagent, or change its settings (people only): name, inherit_permissions (subagents), auto_call_on_approve',
    description: NAME_TAKEN,
    auth: 'human',
    params,
    body: updateBody,
    responses: { 200: Identity },
    errors: [...managed, 'invalid_request'],
  }, async (req, res, { params: { id }, body }) => {
    res.json(await identities.update(principalOf(req), id, body));
  });
  r.route({
    method: 'post',
    path: '/identities/{id}/revoke',
    operationId: 'revokeIdentity',
    summary: 'Revoke an identity and its subtree (keys stop working)',
    params,
    responses: { 200: Identity },
    errors: [...managed],
  }, async (req, res, { params: { id } }) => {
    res.json(await identities.setStatus(principalOf(req), id, 'revoked'));
  });
  r.route({
    method: 'post',
    path: '/identities/{id}/archive',
    operationId: 'archiveIdentity',
    summary: 'Archive an identity and its subtree',
    params,
    responses: { 200: Identity },
    errors: [...managed],
  }, async (req, res, { params: { id } }) => {
    res.json(await identities.setStatus(principalOf(req), id, 'archived'));
  });
  r.route({
    method: 'get',
    path: '/identities/{id}/keys',
    operationId: 'listAgentKeys',
    summary: 'Agent keys of an identity (prefixes only)',
    params,
    responses: { 200: KeyList },
    errors: [...managed],
  }, async (req, res, { params: { id } }) => {
    res.json({ keys: await identities.listKeys(principalOf(req), id) });
  });
  r.route({
    method: 'post',
    path: '/identities/{id}/keys',
    operationId: 'createAgentKey',
    summary: 'Issue an agent key (the token is shown once)',
    params,
    body: createKeyBody,
    bodyOptional: true,
    responses: { 201: NewAgentKey },
    errors: [...managed],
  }, async (req, res, { params: { id }, body }) => {
    res.status(201).json(await identities.createKey(principalOf(req), id, body.name));
  });
  r.route({
    method: 'post',
    path: '/identities/{id}/keys/{keyId}/revoke',
    operationId: 'revokeAgentKey',
    summary: 'Revoke one agent key',
    params: keyParams,
    responses: { 204: null },
    errors: [...managed],
  }, async (req, res, { params: p }) => {
    await identities.revokeKey(principalOf(req), p.id, p.keyId);
    res.status(204).end();
  });
  r.route({
    method: 'get',
    path: '/identities/{id}/rules',
    operationId: 'listRules',
    summary: 'Permission rules on an identity',
    params,
    query: listRulesQuery,
    responses: { 200: RuleList },
    errors: [...managed],
  }, async (req, res, { params: { id }, query: q }) => {
    res.json({ rules: await identities.listRules(principalOf(req), id, q.include_revoked === 'true') });
  });
  r.route({
    method: 'post',
    path: '/identities/{id}/rules',
    operationId: 'createRule',
    summary: 'Add an allow or deny rule (people only)',
    params,
    body: createRuleBody,
    responses: { 201: Rule },
    errors: [...managed],
  }, async (req, res, { params: { id }, body }) => {
    res.status(201).json(await identities.createRule(principalOf(req), id, body));
  });
  r.route({
    method: 'post',
    path: '/identities/{id}/rules/{ruleId}/revoke',
    operationId: 'revokeRule',
    summary: 'Revoke a rule (people only)',
    params: ruleParams,
    responses: { 204: null },
    errors: [...managed],
  }, async (req, res, { params: p }) => {
    await identities.revokeRule(principalOf(req), p.id, p.ruleId);
    res.status(204).end();
  });
  return r.router;
}
