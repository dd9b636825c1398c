// Thin REST over the vault service: parse strictly, call one method, shape the answer. No
// response ever carries a secret value; bodies are never logged (request logs carry the path only).
import type { NextFunction, Request, Response, Router } from 'express';
import { z } from 'zod';
import { principalOf, requireHuman } from '../auth/middleware.ts';
import { apiRouter } from '../http/api-router.ts';
import { Secret, SecretList, SecretVersionList } from './responses.ts';
import type { VaultService } from './service.ts';

export const SECRET_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
export const MAX_SECRET_BYTES = 64 * 1024;

const id = z.uuid({ error: 'must be a UUID' });
const params = z.object({ id });
const versionParams = z.object({
  id,
  version: z.coerce.number({ error: 'must be a version number' }).int().min(1).max(2_147_483_647),
});

const putBody = z.strictObject({
  name: z.string().regex(SECRET_NAME, 'must be 1-128 characters of A-Z, a-z, 0-9, "_", "." or "-"'),
  value: z
    .string()
    .min(1, 'must not be empty')
    .refine((v) => Buffer.byteLength(v, 'utf8') <= MAX_SECRET_BYTES, `must be at most ${MAX_SECRET_BYTES} bytes (UTF-8)`),
  description: z.string().trim().max(1000).optional(),
  allowed_hosts: z.array(z.string().max(253)).max(50).nullable().optional(),
  scope: z.enum(['org', 'user']).optional(),
});

/** Agents get 403 on every vault path, before any parsing (requireHuman throws otherwise). */
function humansOnly(req: Request, _res: Response, next: NextFunction): void {
  requireHuman(req);
  next();
}

export function vaultRoutes(vault: VaultService): Router {
  const r = apiRouter({ tags: ['Vault'], auth: 'human' });
  r.use('/secrets', humansOnly);
  r.route({
    method: 'post',
    path: '/secrets',
    operationId: 'putSecret',
    summary: 'Create a secret, or rotate it to a new version when the name exists',
    body: putBody,
    bodyOptional: true,
    responses: { 201: Secret, 200: Secret },
    errors: ['conflict'],
  }, async (req, res, { body }) => {
    const { created, secret } = await vault.put(principalOf(req), body);
    res.status(created ? 201 : 200).json(secret);
  });
  r.route({
    method: 'get',
    path: '/secrets',
    operationId: 'listSecrets',
    summary: 'Secrets of the org (metadata only)',
    responses: { 200: SecretList },
  }, async (req, res) => {
    res.json({ secrets: await vault.list(principalOf(req)) });
  });
  r.route({
    method: 'get',
    path: '/secrets/{id}',
    operationId: 'getSecret',
    summary: 'One secret (metadata only)',
    params,
    responses: { 200: Secret },
    errors: ['not_found'],
  }, async (req, res, { params }) => {
    res.json(await vault.get(principalOf(req), params.id));
  });
  r.route({
    method: 'get',
    path: '/secrets/{id}/versions',
    operationId: 'listSecretVersions',
    summary: 'Version history of a secret',
    params,
    responses: { 200: SecretVersionList },
    errors: ['not_found'],
  }, async (req, res, { params }) => {
    res.json({ versions: await vault.listVersions(principalOf(req), params.id) });
  });
  r.route({
    method: 'post',
    path: '/secrets/{id}/versions/{version}/restore',
    operationId: 'restoreSecretVersion',
    summary: 'Make an old version current again (as a new version)',
    params: versionParams,
    responses: { 200: Secret },
    errors: ['not_found', 'conflict'],
  }, async (req, res, { params }) => {
    res.json(await vault.restore(principalOf(req), params.id, params.version));
  });
  r.route({
    method: 'delete',
    path: '/secrets/{id}',
    operationId: 'deleteSecret',
    summary: 'Delete a secret and its versions',
    params,
    responses: { 204: null },
    errors: ['not_found'],
  }, async (req, res, { params }) => {
    await vault.remove(principalOf(req), params.id);
    res.status(204).end();
  });
  return r.router;
}
