import { describe, expect, it } from 'vitest';
import { normalizeAliases } from '../../../core/registry/aliases.ts';
import { validDoc } from './fixtures.ts';

describe('normalizeAliases', () => {
  it('rewrites bare names to x-gateway-* at every defined position', () => {
    const input = validDoc();
    input.runtime = 'http';
    const { doc, problems } = normalizeAliases(input) as { doc: any; problems: unknown[] };
    expect(problems).toEqual([]);
    expect(doc['x-gateway-runtime']).toBe('http');
    expect(doc.runtime).toBeUndefined();
    expect(doc.info).toMatchObject({ 'x-gateway-key': 'slack', 'x-gateway-category': 'Chat', title: 'Slack' });
    expect(doc.info.key).toBeUndefined();
    const post = doc.paths['/chat.postMessage'].post;
    expect(Object.keys(post).filter((k: string) => k.startsWith('x-gateway-')).sort()).toEqual([
      'x-gateway-disclose',
      'x-gateway-redact',
      'x-gateway-risk',
      'x-gateway-scope_param',
    ]);
    // disclose entries keep their own field names
    expect(post['x-gateway-disclose'][0]).toEqual({ label: 'Message', filter: '.body.text', max_chars: 200 });
    expect(doc.paths['/conversations/{channel}'].parameters[0]['x-gateway-resolve']).toEqual({
      get: '/conversations/{channel}',
      pick: 'channel.name',
    });
    expect(doc.paths['/files/{file}'].get['x-gateway-response_type']).toBe('binary');
    expect(doc.components.securitySchemes.token).toMatchObject({
      'x-gateway-prefix': 'Bearer ',
      'x-gateway-default_secret_name': 'SLACK_TOKEN',
      name: 'Authorization',
    });
    expect(doc.components.securitySchemes.oauth['x-gateway-provider']).toBe('slack');
  });

  it('accepts the kebab-case spelling as an alias', () => {
    const input = validDoc();
    input.components.securitySchemes.token['x-gateway-default-secret-name'] = input.components.securitySchemes.token.default_secret_name;
    delete input.components.securitySchemes.token.default_secret_name;
    const { doc, problems } = normalizeAliases(input) as { doc: any; problems: unknown[] };
    expect(problems).toEqual([]);
    expect(doc.components.securitySchemes.token['x-gateway-default_secret_name']).toBe('SLACK_TOKEN');
  });

  it('leaves schema properties that share an extension name alone', () => {
    const input = validDoc();
    const schema = input.paths['/chat.postMessage'].post.requestBody.content['application/json'].schema;
    schema.properties.key = { type: 'string' };
    schema.properties.risk = { type: 'string' };
    input.components.schemas = { Thing: { type: 'object', properties: { disabled: { type: 'boolean' } }, key: 'x' } };
    const { doc } = normalizeAliases(input) as { doc: any };
    const out = doc.paths['/chat.postMessage'].post.requestBody.content['application/json'].schema;
    expect(Object.keys(out.properties)).toEqual(['channel', 'text', 'thread_ts', 'key', 'risk']);
    expect(doc.components.schemas).toEqual(input.components.schemas);
  });

  it('reports ambiguous_alias with the JSON path and keeps the canonical value', () => {
    const input = validDoc();
    input.info['x-gateway-key'] = 'slack2';
    input.paths['/chat.postMessage'].post['x-gateway-scope-param'] = 'text';
    const { doc, problems } = normalizeAliases(input) as { doc: any; problems: any[] };
    expect(problems).toEqual([
      expect.objectContaining({ code: 'ambiguous_alias', path: '/info/x-gateway-key' }),
      expect.objectContaining({ code: 'ambiguous_alias', path: '/paths/~1chat.postMessage/post/x-gateway-scope_param' }),
    ]);
    expect(doc.info['x-gateway-key']).toBe('slack2');
    expect(doc.info.key).toBeUndefined();
    expect(doc.paths['/chat.postMessage'].post['x-gateway-scope_param']).toBe('text');
  });

  it('does not mutate its input and is idempotent', () => {
    const input = validDoc();
    const before = structuredClone(input);
    const once = normalizeAliases(input).doc;
    expect(input).toEqual(before);
    expect(normalizeAliases(once).doc).toEqual(once);
  });

  it('passes non-objects through', () => {
    expect(normalizeAliases(null)).toEqual({ doc: null, problems: [] });
    expect(normalizeAliases([1])).toEqual({ doc: [1], problems: [] });
  });
});
