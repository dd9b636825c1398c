// GET /v1/openapi.json: the document itself is an operation of the document.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Router } from 'express';
import { z } from 'zod';
import { apiRouter } from '../api-router.ts';

export const API_VERSION = (
  JSON.parse(readFileSync(path.resolve(import.meta.dirname, '..', '..', '..', 'package.json'), 'utf8')) as { version: string }
).version;

export function documentRoutes(document: () => unknown): Router {
  const r = apiRouter({ tags: ['Meta'], auth: 'none' });
  r.route(
    {
      method: 'get',
      path: '/openapi.json',
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI 3.1 document',
      responses: { 200: z.looseObject({ openapi: z.literal('3.1.0') }) },
    },
    (_req, res) => {
      res.setHeader('Cache-Control', 'no-cache');
      res.json(document());
    },
  );
  return r.router;
}
