// REST over the registry: templates (global/org/user), instances (`service` names), search.
import { Router } from 'express';
import { z } from 'zod';
import { principalOf } from '../auth/middleware.ts';
import type { RegistryService } from './service.ts';

const templateBody = z.strictObject({
  scope: z.enum(['org', 'user']).default('org'),
  document: z.union([z.record(z.string(), z.unknown()), z.string().min(1).max(1_000_000)]),
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
  const r = Router();
  r.get('/templates', async (req, res) => {
    res.json({ templates: await registry.listTemplates(principalOf(req)) });
  });
  r.post('/templates', async (req, res) => {
    res.status(201).json(await registry.createTemplate(principalOf(req), templateBody.parse(req.body)));
  });
  r.put('/templates/:id', async (req, res) => {
    res.json(await registry.updateTemplate(principalOf(req), idParams.parse(req.params).id, updateTemplateBody.parse(req.body)));
  });
  r.delete('/templates/:id', async (req, res) => {
    await registry.deleteTemplate(principalOf(req), idParams.parse(req.params).id);
    res.status(204).end();
  });
  r.get('/services', async (req, res) => {
    res.json({ services: await registry.listInstances(principalOf(req)) });
  });
  r.post('/services', async (req, res) => {
    res.status(201).json(await registry.createInstance(principalOf(req), instanceBody.parse(req.body)));
  });
  r.get('/services/:name', async (req, res) => {
    res.json(await registry.getInstance(principalOf(req), nameParams.parse(req.params).name));
  });
  r.delete('/services/:name', async (req, res) => {
    await registry.deleteInstance(principalOf(req), nameParams.parse(req.params).name);
    res.status(204).end();
  });
  r.get('/search', async (req, res) => {
    const q = searchQuery.parse(req.query);
    res.json({ query: q.q, results: await registry.search(principalOf(req), q.q, q.limit) });
  });
  return r;
}
