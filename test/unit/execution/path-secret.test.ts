// A credential that lives in a URL path segment (an apiKey scheme with `x-gateway-path_param`,
// Telegram's `/bot<token>/…`): compiled as `in: path`, masked in every built URL, and filled,
// encoded as one segment, only when the executor passes it at send time.
import { describe, expect, it } from 'vitest';
import { buildActionRequest, encodePathSegment } from '../../../core/execution/request.ts';
import { redactedProjection } from '../../../server/execution/disclose.ts';
import { loadServiceDocument } from '../../../server/registry/loader.ts';

const doc = {
  openapi: '3.1.0',
  info: { title: 'Bots', version: '1', key: 'bots' },
  servers: [{ url: 'https://api.bots.example' }],
  security: [{ bot: [] }],
  components: { securitySchemes: { bot: { type: 'apiKey', in: 'query', name: 'token', path_param: 'token', default_secret_name: 'BOT_TOKEN' } } },
  paths: {
    '/bot{token}/chats/{chat}': {
      post: {
        operationId: 'send',
        summary: 'Send to {chat}',
        'x-gateway-redact': ['params.chat'],
        parameters: [{ name: 'chat', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'sent' } },
      },
    },
  },
};

describe('a credential in a path segment', async () => {
  const loaded = await loadServiceDocument(doc, 'test');
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  const service = loaded.service;
  const action = service.actions.get('send')!;

  it('compiles the scheme as an apiKey in the path, naming the placeholder', () => {
    expect(service.authMethods).toEqual([{ type: 'apiKey', name: 'bot', in: 'path', paramName: 'token', defaultSecretName: 'BOT_TOKEN' }]);
    expect(action.parameters.map((p) => p.name)).toEqual(['chat']);
  });

  it('masks the placeholder in the URL built for storage and display', () => {
    const built = buildActionRequest(service, action, { chat: 'c 1' });
    expect(built).toMatchObject({ ok: true, request: { url: 'https://api.bots.example/bot***/chats/c%201', params: { chat: 'c 1' } } });
  });

  it('keeps the mask when a redacted parameter rebuilds the stored URL', () => {
    const built = buildActionRequest(service, action, { chat: 'secret-chat' });
    if (!built.ok) throw new Error('not built');
    expect(redactedProjection(service, action, built.request).url).toBe('https://api.bots.example/bot***/chats/%5BREDACTED%5D');
  });

  it('refuses a caller who passes the placeholder as a parameter', () => {
    const built = buildActionRequest(service, action, { chat: 'c', token: 'mine' });
    expect(built.ok).toBe(false);
  });

  it('fills it at send time as one segment: pchars verbatim, delimiters encoded', () => {
    const built = buildActionRequest(service, action, { chat: 'c' }, { token: '123456:AA-b_c~d' });
    expect(built).toMatchObject({ ok: true, request: { url: 'https://api.bots.example/bot123456:AA-b_c~d/chats/c' } });
    const hostile = buildActionRequest(service, action, { chat: 'c' }, { token: 'x/../../y?z#w%2F' });
    expect(hostile).toMatchObject({ ok: true, request: { url: 'https://api.bots.example/botx%2F..%2F..%2Fy%3Fz%23w%252F/chats/c' } });
    expect(new URL((hostile as { request: { url: string } }).request.url).host).toBe('api.bots.example');
  });

  it('encodes a segment as RFC 3986 pchars', () => {
    expect(encodePathSegment("a:b@c!$&'()*+,;=d")).toBe("a:b@c!$&'()*+,;=d");
    expect(encodePathSegment('a/b?c#d e%3A')).toBe('a%2Fb%3Fc%23d%20e%253A');
  });
});
