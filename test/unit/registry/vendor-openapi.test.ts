// The checker behind vendor-documents.test.ts: it must report a wrong path, method, host or
// query parameter, and an exception that no longer excuses anything.
import { describe, expect, it } from 'vitest';
import type { CompiledService } from '../../../core/registry/types.ts';
import { loadServiceDocument } from '../../../server/registry/loader.ts';
import { checkAgainstVendor, normalisePath, type VendorDocument } from '../../support/vendor-openapi.ts';

const vendor: VendorDocument = {
  servers: [{ url: 'https://{region}.example.com/api', variables: { region: { default: 'eu' } } }],
  paths: {
    '/items/{item_id}': {
      parameters: [{ $ref: '#/components/parameters/item' }],
      get: { parameters: [{ name: 'fields', in: 'query' }, { name: 'locale', in: 'query', required: true }] },
    },
  },
  components: { parameters: { item: { name: 'item_id', in: 'path', required: true } } },
};

async function service(opts: { server?: string; path?: string; method?: string; query?: string[] } = {}): Promise<CompiledService> {
  const path = opts.path ?? '/items/{id}';
  const params = [
    ...[...path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } })),
    ...(opts.query ?? ['locale']).map((name) => ({ name, in: 'query', required: name === 'locale', schema: { type: 'string' } })),
  ];
  const loaded = await loadServiceDocument(
    {
      openapi: '3.1.0',
      info: { title: 'Example', key: 'example', version: '1' },
      servers: [{ url: opts.server ?? 'https://eu.example.com/api' }],
      paths: { [path]: { [opts.method ?? 'get']: { operationId: 'get_item', summary: 'Get an item', parameters: params, responses: { '200': { description: 'ok' } } } } },
    },
    'test',
  );
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  return loaded.service;
}

describe('checkAgainstVendor', () => {
  it('accepts an action whose method, full path, host and query match (path parameter names may differ)', async () => {
    expect(checkAgainstVendor(await service(), vendor)).toEqual([]);
  });

  it('reports a wrong path, a wrong method and a wrong host', async () => {
    expect(checkAgainstVendor(await service({ path: '/item/{id}' }), vendor)).toEqual([
      { action: 'get_item', problem: 'GET /api/item/{} is not an operation of the vendor document' },
    ]);
    expect(checkAgainstVendor(await service({ method: 'delete' }), vendor)).toEqual([
      { action: 'get_item', problem: 'DELETE /api/items/{} is not an operation of the vendor document' },
    ]);
    expect(checkAgainstVendor(await service({ server: 'https://eu.example.org/api' }), vendor)).toEqual([
      { action: '*', problem: 'host eu.example.org is not a server of the vendor document (eu.example.com)' },
    ]);
  });

  it('reports a missing required query parameter and an undeclared one', async () => {
    expect(checkAgainstVendor(await service({ query: ['fields', 'colour'] }), vendor)).toEqual([
      { action: 'get_item', problem: "the vendor requires query parameter 'locale'" },
      { action: 'get_item', problem: "query parameter 'colour' is not declared by the vendor" },
    ]);
  });

  it('honours a listed exception and reports one that is no longer needed', async () => {
    const exceptions = { get_item: { reason: 'test', undeclaredQuery: ['colour'] } };
    expect(checkAgainstVendor(await service({ query: ['locale', 'colour'] }), vendor, { exceptions })).toEqual([]);
    expect(checkAgainstVendor(await service(), vendor, { exceptions })).toEqual([
      { action: 'get_item', problem: 'exception get_item:undeclaredQuery:colour is not needed' },
    ]);
  });

  it('normalises path templates to positions', () => {
    expect(normalisePath('/a/{owner}/{+name}/')).toBe('/a/{}/{}');
    expect(normalisePath('//v1//x')).toBe('/v1/x');
  });
});
