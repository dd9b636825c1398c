import { describe, expect, it } from 'vitest';
import { compileService } from '../../../core/registry/compile.ts';
import { lookupAction } from '../../../core/registry/lookup-action.ts';

const service = compileService(
  {
    openapi: '3.1.0',
    info: { title: 'Folders', key: 'folders', version: '1' },
    servers: [{ url: 'https://folders.example.com' }],
    paths: {
      '/folders/{folder_id}': {
        get: { operationId: 'get_folder', summary: 'Read folder', parameters: [{ name: 'folder_id', in: 'path', required: true, schema: { type: 'string' } }], responses: { '200': { description: 'ok' } } },
        delete: { operationId: 'delete_folder', summary: 'Delete folder', parameters: [{ name: 'folder_id', in: 'path', required: true, schema: { type: 'string' } }], responses: { '204': { description: 'gone' } } },
      },
      '/folders/{folder_id}/items': {
        get: { operationId: 'list_items', summary: 'List items', parameters: [{ name: 'folder_id', in: 'path', required: true, schema: { type: 'string' } }], responses: { '200': { description: 'ok' } } },
      },
    },
  },
  'test',
);

describe('the action a resolve lookup amounts to', () => {
  it('matches a GET action of the same path shape and binds its params from the lookup placeholders', () => {
    const hit = lookupAction(service, '/folders/{a}', { a: 'f1' });
    expect(hit?.action.key).toBe('get_folder');
    expect(hit?.params).toEqual({ folder_id: 'f1' });
  });

  it('finds nothing for another shape, a literal mismatch or a missing value', () => {
    expect(lookupAction(service, '/folders/{a}/members', { a: 'f1' })).toBeNull();
    expect(lookupAction(service, '/drawers/{a}', { a: 'f1' })).toBeNull();
    expect(lookupAction(service, '/folders/{a}', {})).toBeNull();
  });
});
