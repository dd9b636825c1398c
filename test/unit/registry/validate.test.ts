import { describe, expect, it } from 'vitest';
import { normalizeAliases } from '../../../core/registry/aliases.ts';
import type { ProblemCode } from '../../../core/registry/types.ts';
import { collectDiscloseFilters, validateServiceDocument } from '../../../core/registry/validate.ts';
import { validDoc, type Doc } from './fixtures.ts';

function problemsOf(doc: unknown) {
  const { doc: normalized, problems } = normalizeAliases(doc);
  return [...problems, ...validateServiceDocument(normalized)];
}

const post = (d: Doc) => d.paths['/chat.postMessage'].post;
const info = (d: Doc) => d.paths['/conversations/{channel}'].get;
const archive = (d: Doc) => d.paths['/conversations/{channel}'].delete;
const oauth = (d: Doc) => d.components.securitySchemes.oauth;
const token = (d: Doc) => d.components.securitySchemes.token;

// One broken document per rule: [rule, mutation, expected code, expected path (optional)].
const cases: Array<[string, (d: Doc) => void, ProblemCode, string?]> = [
  ['openapi 3.0.3', (d) => (d.openapi = '3.0.3'), 'invalid_openapi_version', '/openapi'],
  ['openapi as a number', (d) => (d.openapi = 3.1), 'invalid_openapi_version'],
  ['openapi missing', (d) => delete d.openapi, 'missing_field', '/openapi'],
  ['info missing', (d) => delete d.info, 'missing_field', '/info'],
  ['info.title missing', (d) => delete d.info.title, 'missing_field', '/info/title'],
  ['info.key missing', (d) => delete d.info.key, 'missing_field', '/info/x-gateway-key'],
  ['info.key malformed', (d) => (d.info.key = 'Slack Chat'), 'invalid_key', '/info/x-gateway-key'],
  ['info.category not a string', (d) => (d.info.category = 3), 'invalid_field', '/info/x-gateway-category'],
  ['idempotency_key_header not a header name', (d) => (d.idempotency_key_header = 'Idempotency Key!'), 'invalid_field', '/x-gateway-idempotency_key_header'],
  ['servers empty', (d) => (d.servers = []), 'missing_field', '/servers'],
  ['servers[].url missing', (d) => (d.servers = [{ description: 'x' }]), 'missing_field', '/servers/0/url'],
  ['servers[].url relative', (d) => (d.servers = [{ url: '/api' }]), 'invalid_server_url', '/servers/0/url'],
  ['servers[].url not http', (d) => (d.servers = [{ url: 'ftp://slack.com' }]), 'invalid_server_url'],
  ['servers[].url with variables', (d) => (d.servers = [{ url: 'https://{region}.slack.com' }]), 'invalid_server_url'],
  ['servers[].url with credentials', (d) => (d.servers = [{ url: 'https://u:p@slack.com' }]), 'invalid_server_url'],
  ['operationId missing', (d) => delete post(d).operationId, 'missing_field', '/paths/~1chat.postMessage/post/operationId'],
  ['operationId with a colon', (d) => (post(d).operationId = 'chat:post'), 'invalid_operation_id'],
  ['operationId duplicated', (d) => (archive(d).operationId = 'chat.postMessage'), 'duplicate_operation_id'],
  ['summary missing', (d) => delete post(d).summary, 'missing_field', '/paths/~1chat.postMessage/post/summary'],
  ['summary empty', (d) => (post(d).summary = ' '), 'invalid_summary'],
  ['summary placeholder unknown', (d) => (post(d).summary = 'Post to {room}'), 'invalid_summary'],
  ['risk unknown', (d) => (post(d).risk = 'dangerous'), 'invalid_risk', '/paths/~1chat.postMessage/post/x-gateway-risk'],
  ['scope_param unknown', (d) => (post(d).scope_param = 'room'), 'unknown_scope_param'],
  ['scope_param nested body field', (d) => (post(d).scope_param = 'channel.id'), 'unknown_scope_param'],
  ['apiKey in cookie', (d) => (token(d).in = 'cookie'), 'invalid_security_scheme', '/components/securitySchemes/token/in'],
  ['apiKey without name', (d) => delete token(d).name, 'invalid_security_scheme'],
  ['apiKey without default_secret_name', (d) => delete token(d).default_secret_name, 'invalid_security_scheme'],
  ['apiKey prefix not a string', (d) => (token(d).prefix = 1), 'invalid_security_scheme'],
  ['oauth2 without provider', (d) => delete oauth(d).provider, 'invalid_security_scheme'],
  ['oauth2 without authorizationCode', (d) => (oauth(d).flows = { clientCredentials: { tokenUrl: 'https://x/t', scopes: {} } }), 'invalid_security_scheme'],
  ['oauth2 without tokenUrl', (d) => delete oauth(d).flows.authorizationCode.tokenUrl, 'invalid_security_scheme'],
  ['oauth2 relative authorizationUrl', (d) => (oauth(d).flows.authorizationCode.authorizationUrl = '/auth'), 'invalid_security_scheme'],
  ['unsupported scheme type', (d) => (d.components.securitySchemes.oidc = { type: 'openIdConnect', openIdConnectUrl: 'https://x' }), 'invalid_security_scheme'],
  ['http basic scheme', (d) => (d.components.securitySchemes.basic = { type: 'http', scheme: 'basic', default_secret_name: 'B' }), 'invalid_security_scheme'],
  ['security names unknown scheme', (d) => (post(d).security = [{ nope: [] }]), 'unknown_security_scheme'],
  ['security scope not declared', (d) => (post(d).security = [{ oauth: ['admin'] }]), 'invalid_security'],
  ['security not a list', (d) => (d.security = { oauth: [] }), 'invalid_security', '/security'],
  ['parameter in header', (d) => info(d).parameters.push({ name: 'X-Trace', in: 'header', schema: { type: 'string' } }), 'invalid_parameter'],
  ['parameter in cookie', (d) => info(d).parameters.push({ name: 'sid', in: 'cookie', schema: { type: 'string' } }), 'invalid_parameter'],
  ['parameter without name', (d) => info(d).parameters.push({ in: 'query', schema: { type: 'string' } }), 'missing_field'],
  ['parameter without schema', (d) => delete info(d).parameters[0].schema, 'missing_field', '/paths/~1conversations~1{channel}/get/parameters/0/schema'],
  ['parameter schema without type', (d) => (info(d).parameters[0].schema = { enum: ['a'] }), 'missing_field'],
  ['parameter schema bogus type', (d) => (info(d).parameters[0].schema = { type: 'text' }), 'invalid_parameter'],
  ['parameter enum empty', (d) => (info(d).parameters[0].schema = { type: 'string', enum: [] }), 'invalid_parameter'],
  ['optional path parameter', (d) => (d.paths['/conversations/{channel}'].parameters[0].required = false), 'invalid_parameter'],
  ['parameter declared twice', (d) => info(d).parameters.push({ name: 'include_locale', in: 'query', schema: { type: 'string' } }), 'duplicate_parameter'],
  ['parameter shadows a body property', (d) => (post(d).parameters = [{ name: 'text', in: 'query', schema: { type: 'string' } }]), 'duplicate_parameter'],
  ['path placeholder without parameter', (d) => (d.paths['/files/{file}/{rev}'] = d.paths['/files/{file}']) && delete d.paths['/files/{file}'], 'path_param_mismatch'],
  ['path parameter not in path', (d) => (post(d).parameters = [{ name: 'ts', in: 'path', required: true, schema: { type: 'string' } }]), 'path_param_mismatch'],
  ['requestBody without json', (d) => (post(d).requestBody = { content: { 'text/plain': { schema: { type: 'string' } } } }), 'invalid_request_body'],
  ['requestBody dangling $ref', (d) => (post(d).requestBody = { $ref: '#/components/requestBodies/Nope' }), 'unresolved_ref'],
  ['parameter dangling $ref', (d) => info(d).parameters.push({ $ref: '#/components/parameters/Nope' }), 'unresolved_ref'],
  ['parameter external $ref', (d) => info(d).parameters.push({ $ref: 'other.yaml#/P' }), 'unresolved_ref'],
  ['resolve extra key', (d) => (d.paths['/conversations/{channel}'].parameters[0].resolve.cache = true), 'invalid_resolve'],
  ['resolve without pick', (d) => delete d.paths['/conversations/{channel}'].parameters[0].resolve.pick, 'invalid_resolve'],
  ['resolve get not a path', (d) => (d.paths['/conversations/{channel}'].parameters[0].resolve.get = 'https://x/y'), 'invalid_resolve'],
  ['resolve get unknown placeholder', (d) => (d.paths['/conversations/{channel}'].parameters[0].resolve.get = '/c/{team}'), 'invalid_resolve'],
  ['resolve not an object', (d) => (d.paths['/conversations/{channel}'].parameters[0].resolve = '/c/{channel}'), 'invalid_resolve'],
  ['disclose not a list', (d) => (post(d).disclose = { label: 'x', filter: '.' }), 'invalid_disclose'],
  ['disclose without label', (d) => delete post(d).disclose[0].label, 'invalid_disclose', '/paths/~1chat.postMessage/post/x-gateway-disclose/0/label'],
  ['disclose without filter', (d) => (post(d).disclose[0].filter = ''), 'invalid_disclose'],
  ['disclose filter too long', (d) => (post(d).disclose[0].filter = '.a' + ' | .a'.repeat(500)), 'invalid_disclose'],
  ['disclose max_chars zero', (d) => (post(d).disclose[0].max_chars = 0), 'invalid_disclose'],
  ['disclose max_chars fractional', (d) => (post(d).disclose[0].max_chars = 1.5), 'invalid_disclose'],
  ['disclose unknown field', (d) => (post(d).disclose[0].maxChars = 5), 'invalid_disclose'],
  ['redact not a list', (d) => (post(d).redact = 'body.token'), 'invalid_redact'],
  ['redact malformed path', (d) => (post(d).redact = ['body..token']), 'invalid_redact', '/paths/~1chat.postMessage/post/x-gateway-redact/0'],
  ['response_type xml', (d) => (post(d).response_type = 'xml'), 'invalid_response_type'],
  ['disabled as string', (d) => (post(d).disabled = 'yes'), 'invalid_disabled'],
  ['runtime unknown', (d) => (d.runtime = 'grpc'), 'invalid_runtime', '/x-gateway-runtime'],
  ['runtime mcp without mcp block', (d) => (d.runtime = 'mcp'), 'invalid_mcp'],
  ['runtime mcp with relative url', (d) => ((d.runtime = 'mcp'), (d.mcp = { url: '/mcp' })), 'invalid_mcp'],
  ['mcp block without runtime mcp', (d) => (d.mcp = { url: 'https://mcp.example.com/mcp' }), 'invalid_mcp'],
  ['tool without runtime mcp', (d) => (post(d).tool = 'post_message'), 'invalid_mcp', '/paths/~1chat.postMessage/post/x-gateway-tool'],
  ['tool name with a space', (d) => ((d.runtime = 'mcp'), (d.mcp = { url: 'https://mcp.example.com/mcp' }), (post(d).tool = 'post message')), 'invalid_mcp'],
  ['misspelt extension', (d) => (post(d)['x-gateway-scope-parm'] = 'channel'), 'unknown_extension'],
  ['extension at the wrong position', (d) => (d.info['x-gateway-risk'] = 'read'), 'unknown_extension'],
  ['bare and canonical alias together', (d) => (post(d)['x-gateway-risk'] = 'read'), 'ambiguous_alias', '/paths/~1chat.postMessage/post/x-gateway-risk'],
  ['paths not an object', (d) => (d.paths = []), 'invalid_field'],
  ['operation not an object', (d) => (d.paths['/x'] = { get: 'nope' }), 'invalid_field'],
];

describe('validateServiceDocument', () => {
  it('accepts the valid fixture', () => {
    expect(problemsOf(validDoc())).toEqual([]);
  });

  it.each(cases)('rejects %s', (_rule, mutate, code, path) => {
    const doc = validDoc();
    mutate(doc);
    const problems = problemsOf(doc);
    const codes = problems.map((p) => p.code);
    expect(codes).toContain(code);
    if (path !== undefined) expect(problems.filter((p) => p.code === code).map((p) => p.path)).toContain(path);
    for (const p of problems) expect(p.message.length).toBeGreaterThan(0);
  });

  it('accepts runtime mcp with an mcp url, platform runtime, http bearer and no paths', () => {
    const doc = validDoc();
    doc.runtime = 'mcp';
    doc.mcp = { url: 'https://mcp.example.com/mcp' };
    doc.components.securitySchemes.pat = { type: 'http', scheme: 'bearer', default_secret_name: 'PAT' };
    expect(problemsOf(doc)).toEqual([]);
    const bare = validDoc();
    delete bare.paths;
    bare.runtime = 'platform';
    expect(problemsOf(bare)).toEqual([]);
  });

  it('accepts scope_param naming a query parameter and kebab-case extensions', () => {
    const doc = validDoc();
    info(doc).scope_param = 'include_locale';
    delete post(doc).scope_param;
    post(doc)['x-gateway-scope-param'] = 'channel';
    expect(problemsOf(doc)).toEqual([]);
  });

  it('never throws on non-objects', () => {
    for (const v of [null, 1, 'x', [], [{}], true]) {
      expect(validateServiceDocument(v).map((p) => p.code)).toEqual(['invalid_document']);
    }
  });

  it('lists disclose filters for the jq check', () => {
    const { doc } = normalizeAliases(validDoc());
    expect(collectDiscloseFilters(doc)).toEqual([
      { path: '/paths/~1chat.postMessage/post/x-gateway-disclose/0/filter', filter: '.body.text' },
    ]);
  });
});

describe('an apiKey in a path segment (x-gateway-path_param)', () => {
  /** A Telegram-like service: the key fills {token} in every action's path. */
  function pathKeyDoc(): Doc {
    return {
      openapi: '3.1.0',
      info: { title: 'Bots', version: '1', key: 'bots' },
      servers: [{ url: 'https://api.bots.example' }],
      security: [{ bot: [] }],
      components: { securitySchemes: { bot: { type: 'apiKey', in: 'query', name: 'token', path_param: 'token', default_secret_name: 'BOT_TOKEN' } } },
      paths: {
        '/bot{token}/send': { post: { operationId: 'send', summary: 'Send' } },
        '/bot{token}/chats/{chat}': {
          get: { operationId: 'get_chat', summary: 'Get {chat}', parameters: [{ name: 'chat', in: 'path', required: true, schema: { type: 'string' } }] },
        },
      },
    };
  }
  const send = (d: Doc) => d.paths['/bot{token}/send'].post;

  it('accepts the placeholder the key fills without a parameter for it', () => {
    expect(problemsOf(pathKeyDoc())).toEqual([]);
  });

  const broken: Array<[string, (d: Doc) => void, ProblemCode]> = [
    ['a path without the placeholder', (d) => (d.paths['/send'] = { post: { operationId: 'send2', summary: 'Send' } }), 'path_param_mismatch'],
    ['a parameter named like the placeholder', (d) => (send(d).parameters = [{ name: 'token', in: 'path', required: true, schema: { type: 'string' } }]), 'invalid_parameter'],
    [
      'an operation another scheme may authenticate',
      (d) => {
        d.components.securitySchemes.header = { type: 'apiKey', in: 'header', name: 'X-Key', default_secret_name: 'K' };
        send(d).security = [{ bot: [] }, { header: [] }];
      },
      'invalid_security',
    ],
    ['a placeholder no scheme fills (security: [])', (d) => (send(d).security = []), 'path_param_mismatch'],
    ['path_param not a placeholder name', (d) => (d.components.securitySchemes.bot.path_param = 'to-ken}'), 'invalid_security_scheme'],
    ['path_param on an http bearer scheme', (d) => (d.components.securitySchemes.bot = { type: 'http', scheme: 'bearer', path_param: 'token', default_secret_name: 'B' }), 'invalid_security_scheme'],
    [
      'path_param outside runtime http',
      (d) => {
        d.runtime = 'mcp';
        d.mcp = { url: 'https://mcp.bots.example/mcp' };
      },
      'invalid_security_scheme',
    ],
  ];
  it.each(broken)('rejects %s', (_rule, mutate, code) => {
    const doc = pathKeyDoc();
    mutate(doc);
    expect(problemsOf(doc).map((p) => p.code)).toContain(code);
  });

  it('lets an operation of the same service that does not use the key name a path parameter like it', () => {
    const doc = pathKeyDoc();
    doc.components.securitySchemes.header = { type: 'apiKey', in: 'header', name: 'X-Key', default_secret_name: 'K' };
    doc.paths['/tokens/{token}'] = {
      get: { operationId: 'get_token', summary: 'Get {token}', security: [{ header: [] }], parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' } }] },
    };
    expect(problemsOf(doc)).toEqual([]);
  });
});

describe('fixed headers (header parameters with a const value)', () => {
  const version = (schema: Record<string, unknown> = { type: 'string', const: '2024-01' }, name = 'Api-Version') => ({ name, in: 'header', required: true, schema });

  it('accepts a header parameter with a string const, at the path or operation level, and compiles it apart from the parameters', () => {
    const doc = validDoc();
    doc.paths['/conversations/{channel}'].parameters.push(version());
    post(doc).parameters = [version({ type: 'string', const: '2.0.0' }, 'X-Protocol')];
    expect(problemsOf(doc)).toEqual([]);
  });

  const broken: Array<[string, Record<string, unknown>]> = [
    ['a header without const (a caller would set it)', version({ type: 'string', default: '1' })],
    ['a non-string const', version({ type: 'integer', const: 2 })],
    ['a value with a line break', version({ type: 'string', const: '1\r\nX-Injected: 1' })],
    ['Authorization', version(undefined, 'Authorization')],
    ['a credential-looking name', version(undefined, 'X-Auth-Token')],
    ["the service's own apiKey header", version(undefined, 'authorization')],
    ['Host', version(undefined, 'Host')],
    ['a hop-by-hop header', version(undefined, 'Connection')],
    ['Content-Type', version(undefined, 'Content-Type')],
    ['a proxy header', version(undefined, 'Proxy-Foo')],
    ['a name that is not a token', version(undefined, 'Api Version')],
  ];
  it.each(broken)('rejects %s', (_rule, param) => {
    const doc = validDoc();
    post(doc).parameters = [param];
    expect(problemsOf(doc).map((p) => p.code)).toContain('invalid_parameter');
  });

  it('rejects the idempotency key header, a header twice, and headers outside runtime http', () => {
    const keyed = validDoc();
    keyed.idempotency_key_header = 'Idem';
    post(keyed).parameters = [version(undefined, 'Idem')];
    expect(problemsOf(keyed).map((p) => p.code)).toContain('invalid_parameter');
    const twice = validDoc();
    post(twice).parameters = [version(), version(undefined, 'api-version')];
    expect(problemsOf(twice).map((p) => p.code)).toContain('duplicate_parameter');
    const mcp = validDoc();
    mcp.runtime = 'mcp';
    mcp.mcp = { url: 'https://mcp.example.com/mcp' };
    post(mcp).parameters = [version()];
    expect(problemsOf(mcp).map((p) => p.code)).toContain('invalid_parameter');
  });
});
