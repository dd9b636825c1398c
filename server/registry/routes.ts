// REST over the registry: templates (global/org/user), instances (`service` names), search.
import type { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import { apiRouter } from '../http/api-router.ts';
import { MAX_IMPORT_BYTES } from './import/parse-input.ts';
import { ImportPreview, ImportSaved, SearchResults, ServiceDetail, ServiceList, Template, TemplateList, TemplateSource } from './responses.ts';
import { SERVICE_KEY_PATTERN } from '../../core/registry/validate.ts';
import type { RegistryService } from './service.ts';

const templateBody = z.strictObject({
  scope: z.enum(['org', 'user']).default('org'),
  document: z.union([z.record(z.string(), z.unknown()), z.string().min(1).max(1_000_000)]),
});
const importBody = z.strictObject({
  document: z
    .union([z.record(z.string(), z.unknown()), z.string().min(1).max(MAX_IMPORT_BYTES)])
    .describe('The vendor’s OpenAPI 3.1, 3.0.x or Swagger 2.0 document: an object, or JSON or YAML text. Only local $refs.'),
  key: z.string().regex(SERVICE_KEY_PATTERN, 'lowercase letters, digits, _ and -, starting with a letter (max 64)').optional()
    .describe('The service key; by default derived from the title or host, unique. An existing template of this key and scope is re-imported.'),
  scope: z.enum(['org', 'user']).default('org'),
  dry_run: z.boolean().default(false),
});
const updateTemplateBody = z.strictObject({ document: templateBody.shape.document });
const instanceBody = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, 'lowercase letters, digits, _ and -, starting with a letter'),
  template: z.string().min(1).max(100),
  scope: z.enum(['org', 'user']).default('user'),
  secret_name: z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/).optional(),
  connection_id: z.uuid().optional(),
});
const idParams = z.object({ id: z.uuid({ error: 'must be a UUID' }) });
const nameParams = z.object({ name: z.string().min(1).max(100) });
const searchQuery = z.strictObject({
  q: z.string().max(200).default(''),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

export function registryRoutes(registry: RegistryService): Router {
  const r = apiRouter({ tags: ['Registry'] });
  r.route({
    method: 'get',
    path: '/templates',
    operationId: 'listTemplates',
    summary: 'Service templates: global, the org’s and the caller’s',
    responses: { 200: TemplateList },
  }, async (req, res) => {
    res.json({ templates: await registry.listTemplates(principalOf(req)) });
  });
  r.route({
    method: 'post',
    path: '/templates',
    operationId: 'createTemplate',
    summary: 'Register a custom service (an OpenAPI 3.1 document, JSON or YAML text)',
    body: templateBody,
    responses: { 201: Template },
    errors: ['forbidden', 'conflict', 'invalid_service_definition'],
  }, async (req, res, { body }) => {
    res.status(201).json(await registry.createTemplate(principalOf(req), body));
  });
  r.route({
    method: 'post',
    path: '/templates/import',
    operationId: 'importTemplate',
    summary: 'Import a vendor’s published OpenAPI document as a draft service (or preview it with dry_run)',
    description: 'Body limit 20 MB (the rest of the API: 1 MB). Never fetches a URL or reads a file: a non-local $ref is refused.',
    body: importBody,
    responses: { 200: ImportPreview, 201: ImportSaved },
    errors: ['forbidden', 'conflict', 'invalid_service_definition', 'payload_too_large'],
  }, async (req, res, { body }) => {
    const result = await registry.importTemplate(principalOf(req), body);
    res.status(result.saved ? 201 : 200).json(result);
  });
  r.route({
    method: 'post',
    path: '/templates/{id}/publish',
    operationId: 'publishTemplate',
    summary: 'Publish a reviewed draft template: agents can then search and call its actions',
    params: idParams,
    responses: { 200: Template },
    errors: ['forbidden', 'not_found', 'invalid_service_definition'],
  }, async (req, res, { params }) => {
    res.json(await registry.publishTemplate(principalOf(req), params.id));
  });
  r.route({
    method: 'get',
    path: '/templates/{id}',
    operationId: 'getTemplate',
    summary: 'A custom template with its document as text (for editing)',
    params: idParams,
    responses: { 200: TemplateSource },
    errors: ['forbidden', 'not_found'],
  }, async (req, res, { params }) => {
    res.json(await registry.getTemplateSource(principalOf(req), params.id));
  });
  r.route({
    method: 'put',
    path: '/templates/{id}',
    operationId: 'updateTemplate',
    summary: 'Replace a custom template’s document',
    params: idParams,
    body: updateTemplateBody,
    responses: { 200: Template },
    errors: ['forbidden', 'not_found', 'conflict', 'invalid_service_definition'],
  }, async (req, res, { params, body }) => {
    res.json(await registry.updateTemplate(principalOf(req), params.id, body));
  });
  r.route({
    method: 'delete',
    path: '/templates/{id}',
    operationId: 'deleteTemplate',
    summary: 'Delete a custom template',
    params: idParams,
    responses: { 204: null },
    errors: ['forbidden', 'not_found', 'conflict'],
  }, async (req, res, { params }) => {
    await registry.deleteTemplate(principalOf(req), params.id);
    res.status(204).end();
  });
  r.route({
    method: 'get',
    path: '/services',
    operationId: 'listServices',
    summary: 'Service instances the caller can call, with their credential status',
    responses: { 200: ServiceList },
  }, async (req, res) => {
    res.json({ services: await registry.listInstances(principalOf(req)) });
  });
  r.route({
    method: 'post',
    path: '/services',
    operationId: 'createService',
    summary: 'Create a named instance of a template bound to a secret or connection',
    body: instanceBody,
    responses: { 201: ServiceDetail },
    errors: ['forbidden', 'conflict'],
  }, async (req, res, { body }) => {
    res.status(201).json(await registry.createInstance(principalOf(req), body));
  });
  r.route({
    method: 'get',
    path: '/services/{name}',
    operationId: 'getService',
    summary: 'One service instance with its actions',
    params: nameParams,
    responses: { 200: ServiceDetail },
    errors: ['not_found'],
  }, async (req, res, { params }) => {
    res.json(await registry.getInstance(principalOf(req), params.name));
  });
  r.route({
    method: 'delete',
    path: '/services/{name}',
    operationId: 'deleteService',
    summary: 'Delete a service instance',
    params: nameParams,
    responses: { 204: null },
    errors: ['forbidden', 'not_found'],
  }, async (req, res, { params }) => {
    await registry.deleteInstance(principalOf(req), params.name);
    res.status(204).end();
  });
  r.route({
    method: 'get',
    path: '/search',
    operationId: 'searchActions',
    summary: 'Search actions across the caller’s services',
    query: searchQuery,
    responses: { 200: SearchResults },
  }, async (req, res, { query }) => {
    res.json({ query: query.q, results: await registry.search(principalOf(req), query.q, query.limit) });
  });
  return r.router;
}
