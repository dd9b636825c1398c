import { describe, expect, it } from 'vitest';
import { normalizeAliases } from '../../../core/registry/aliases.ts';
import { compileService, httpPseudoService, riskForMethod } from '../../../core/registry/compile.ts';
import { validDoc, type Doc } from './fixtures.ts';

function compile(doc: Doc) {
  return compileService(normalizeAliases(doc).doc, 'test.yaml');
}

describe('compileService', () => {
  it('keeps a declared idempotency key header (the gateway then may resend with it)', () => {
    const doc = validDoc();
    doc['x-gateway-idempotency_key_header'] = 'Idempotency-Key';
    expect(compile(doc).idempotencyKeyHeader).toBe('Idempotency-Key');
    expect(compile(validDoc()).idempotencyKeyHeader).toBeUndefined();
  });

  it('compiles service-level fields', () => {
    const s = compile(validDoc());
    expect(s).toMatchObject({
      key: 'slack',
      title: 'Slack',
      description: 'Team chat',
      category: 'Chat',
      hosts: ['slack.com'],
      baseUrls: ['https://slack.com/api'],
      runtime: 'http',
      source: 'test.yaml',
    });
    expect(s.mcp).toBeUndefined();
    expect(s.authMethods).toEqual([
      {
        type: 'oauth2',
        name: 'oauth',
        provider: 'slack',
        authorizationUrl: 'https://slack.com/oauth/v2/authorize',
        tokenUrl: 'https://slack.com/api/oauth.v2.access',
        scopes: ['chat:write', 'channels:read'],
      },
      { type: 'apiKey', name: 'token', in: 'header', paramName: 'Authorization', prefix: 'Bearer ', defaultSecretName: 'SLACK_TOKEN' },
    ]);
    expect([...s.actions.keys()]).toEqual(['chat.postMessage', 'conversations.info', 'conversations.archive', 'files.download']);
  });

  it('derives risk from the HTTP method unless declared', () => {
    const s = compile(validDoc());
    expect(s.actions.get('conversations.info')?.risk).toBe('read');
    expect(s.actions.get('conversations.archive')?.risk).toBe('delete');
    const doc = validDoc();
    delete doc.paths['/chat.postMessage'].post.risk;
    expect(compile(doc).actions.get('chat.postMessage')?.risk).toBe('write');
    expect(['GET', 'HEAD', 'OPTIONS', 'DELETE', 'POST', 'PUT', 'PATCH', 'TRACE'].map(riskForMethod)).toEqual([
      'read', 'read', 'read', 'delete', 'write', 'write', 'write', 'write',
    ]);
    const declared = validDoc();
    declared.paths['/conversations/{channel}'].get.risk = 'write';
    expect(compile(declared).actions.get('conversations.info')?.risk).toBe('write');
  });

  it('leaves scopeParam undefined (arg *) unless declared', () => {
    const s = compile(validDoc());
    expect(s.actions.get('chat.postMessage')?.scopeParam).toBe('channel');
    expect(s.actions.get('conversations.info')?.scopeParam).toBeUndefined();
    expect('scopeParam' in (s.actions.get('conversations.info') ?? {})).toBe(false);
  });

  it('takes required scopes from the action, else the service-level security', () => {
    const s = compile(validDoc());
    expect(s.actions.get('chat.postMessage')?.requiredScopes).toEqual(['chat:write']);
    expect(s.actions.get('conversations.info')?.requiredScopes).toEqual(['channels:read']);
    expect(s.actions.get('files.download')?.requiredScopes).toEqual([]); // explicit `security: []`
    expect(s.actions.get('files.download')?.securitySchemes).toEqual([]);
    const noRoot = validDoc();
    delete noRoot.security;
    const a = compile(noRoot).actions.get('conversations.info');
    expect(a?.requiredScopes).toEqual([]);
    expect(a?.securitySchemes).toBeUndefined();
  });

  it('compiles parameters, body, disclose, redact and defaults', () => {
    const s = compile(validDoc());
    const post = s.actions.get('chat.postMessage');
    expect(post).toMatchObject({
      method: 'POST',
      pathTemplate: '/chat.postMessage',
      summary: 'Post to {channel}[ in thread {thread_ts}]',
      parameters: [],
      bodyRequired: true,
      disclose: [{ label: 'Message', filter: '.body.text', maxChars: 200 }],
      redact: ['body.token'],
      responseType: 'json',
      disabled: false,
    });
    expect(Object.keys(post?.bodySchema?.['properties'] as object)).toEqual(['channel', 'text', 'thread_ts']);
    const info = s.actions.get('conversations.info');
    expect(info?.parameters).toEqual([
      {
        name: 'channel',
        in: 'path',
        required: true,
        schema: { type: 'string', raw: { type: 'string' } },
        resolve: { get: '/conversations/{channel}', pick: 'channel.name' },
      },
      { name: 'include_locale', in: 'query', required: false, schema: { type: 'boolean', default: false, raw: { type: 'boolean', default: false } } },
    ]);
    expect(info).toMatchObject({ disclose: [], redact: [], bodyRequired: false, responseType: 'json', disabled: false });
    expect(info?.bodySchema).toBeUndefined();
    const file = s.actions.get('files.download');
    expect(file).toMatchObject({ responseType: 'binary', description: 'Fetch the raw bytes of an uploaded file' });
    expect(file?.parameters[0]).toMatchObject({ name: 'file', in: 'path', required: true, description: 'File id' });
  });

  it('lets an operation parameter override a path-level one', () => {
    const doc = validDoc();
    doc.paths['/conversations/{channel}'].get.parameters.push({ name: 'channel', in: 'path', required: true, schema: { type: 'integer' } });
    const params = compile(doc).actions.get('conversations.info')?.parameters ?? [];
    expect(params.map((p) => [p.name, p.schema.type])).toEqual([['include_locale', 'boolean'], ['channel', 'integer']]);
  });

  it('compiles header parameters into fixed headers, not call parameters', () => {
    const doc = validDoc();
    doc.paths['/conversations/{channel}'].parameters.push({ name: 'Api-Version', in: 'header', required: true, schema: { type: 'string', const: '2024-01' } });
    const info = compile(doc).actions.get('conversations.info')!;
    expect(info.fixedHeaders).toEqual({ 'Api-Version': '2024-01' });
    expect(info.parameters.map((p) => p.name)).toEqual(['channel', 'include_locale']);
    expect(compile(validDoc()).actions.get('conversations.info')!.fixedHeaders).toBeUndefined();
  });

  it('compiles disabled, mcp runtime and http bearer', () => {
    const doc = validDoc();
    doc.paths['/chat.postMessage'].post.disabled = true;
    doc.paths['/chat.postMessage'].post.tool = 'slack/post-message';
    doc.runtime = 'mcp';
    doc.mcp = { url: 'https://mcp.example.com/mcp' };
    doc.components.securitySchemes.pat = { type: 'http', scheme: 'bearer', default_secret_name: 'PAT' };
    const s = compile(doc);
    expect(s.actions.get('chat.postMessage')?.disabled).toBe(true);
    expect(s.actions.get('chat.postMessage')?.tool).toBe('slack/post-message');
    expect([...s.actions.values()].filter((a) => a.tool !== undefined)).toHaveLength(1);
    expect(s.runtime).toBe('mcp');
    expect(s.mcp).toEqual({ url: 'https://mcp.example.com/mcp' });
    expect(s.authMethods.at(-1)).toEqual({ type: 'http', name: 'pat', scheme: 'bearer', defaultSecretName: 'PAT' });
  });
});

describe('httpPseudoService', () => {
  it('is the raw HTTP platform service', () => {
    const s = httpPseudoService();
    expect(s).toMatchObject({ key: 'http', title: 'Raw HTTP', category: 'Platform', hosts: [], authMethods: [], runtime: 'http' });
    expect(s.actions.size).toBe(0);
  });
});
