// Form request bodies in a service definition: the loader accepts OpenAPI's own shape
// (`requestBody.content[form media type]` with `encoding`), validates the body object with the
// same schema as a JSON body, skips multipart file parts with a reason, and names what it refuses.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadServiceDirectories, loadServiceDocument } from '../../../server/registry/loader.ts';
import { memoryLogger, validDoc, type Doc } from './fixtures.ts';

const postAt = '/paths/~1chat.postMessage/post/requestBody';
const schema = {
  type: 'object',
  required: ['channel'],
  properties: {
    channel: { type: 'string' },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    expand: { type: 'array', items: { type: 'string' } },
    tags: { type: 'array', items: { type: 'string' } },
  },
};

function withBody(content: Record<string, unknown>): Doc {
  const d = validDoc();
  d.paths['/chat.postMessage'].post.summary = 'Post to {channel}';
  d.paths['/chat.postMessage'].post.disclose = [{ label: 'Channel', filter: '.body.channel' }];
  d.paths['/chat.postMessage'].post.requestBody = { required: true, content };
  return d;
}

async function problems(d: Doc) {
  const r = await loadServiceDocument(d, 'x');
  return r.ok ? [] : r.problems.map((p) => ({ code: p.code, path: p.path }));
}

describe('form request bodies', () => {
  it('compiles a form-urlencoded body with its encoding, the schema validating the body object', async () => {
    const r = await loadServiceDocument(
      withBody({
        'application/x-www-form-urlencoded': {
          schema,
          encoding: { metadata: { style: 'deepObject', explode: true }, expand: { style: 'deepObject' }, tags: { style: 'form', explode: false } },
        },
      }),
      'x',
    );
    expect(r.ok, JSON.stringify(r)).toBe(true);
    const action = r.ok ? r.service.actions.get('chat.postMessage') : undefined;
    expect(action?.bodySchema).toEqual(schema);
    expect(action?.bodyForm).toEqual({
      mediaType: 'application/x-www-form-urlencoded',
      encoding: {
        metadata: { style: 'deepObject', explode: true },
        expand: { style: 'deepObject', explode: true },
        tags: { style: 'form', explode: false },
      },
    });
    expect(action?.scopeParam).toBe('channel');
  });

  it('prefers JSON when an operation offers it, and reads media types with parameters', async () => {
    const both = await loadServiceDocument(withBody({ 'application/x-www-form-urlencoded': { schema }, 'application/json': { schema } }), 'x');
    expect(both.ok && both.service.actions.get('chat.postMessage')?.bodyForm).toBeUndefined();
    const charset = await loadServiceDocument(withBody({ 'application/x-www-form-urlencoded; charset=utf-8': { schema } }), 'x');
    expect(charset.ok && charset.service.actions.get('chat.postMessage')?.bodyForm?.mediaType).toBe('application/x-www-form-urlencoded');
  });

  it('skips multipart file parts with a reason and keeps the text fields', async () => {
    const r = await loadServiceDocument(
      withBody({
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['channel'],
            properties: {
              channel: { type: 'string' },
              file: { type: 'string', format: 'binary' },
              image: { type: 'string', contentMediaType: 'image/png' },
              attachment: { type: 'string' },
              note: { type: 'string', contentMediaType: 'text/plain' },
            },
          },
          encoding: { attachment: { contentType: 'application/octet-stream' } },
        },
      }),
      'x',
    );
    expect(r.ok, JSON.stringify(r)).toBe(true);
    if (!r.ok) return;
    const action = r.service.actions.get('chat.postMessage');
    expect(Object.keys(action?.bodySchema?.properties as object)).toEqual(['channel', 'note']);
    expect(action?.bodyForm).toEqual({ mediaType: 'multipart/form-data', encoding: {} });
    expect(r.warnings.map((w) => [w.code, w.path, w.message.split(':')[0]])).toEqual([
      ['skipped_file_part', postAt, "'attachment'"],
      ['skipped_file_part', postAt, "'file'"],
      ['skipped_file_part', postAt, "'image'"],
    ]);
    expect(r.warnings[0]?.message).toMatch(/file part skipped .*text fields only/);

    // A services folder loads the file and logs why a part is left out.
    const dir = await mkdtemp(path.join(tmpdir(), 'registry-multipart-'));
    try {
      await writeFile(path.join(dir, 'uploads.yaml'), stringify(withBody({ 'multipart/form-data': { schema: { type: 'object', properties: { channel: { type: 'string' }, file: { type: 'string', format: 'binary' } } } } })));
      const logger = memoryLogger();
      const loaded = await loadServiceDirectories([dir], logger);
      expect(loaded.services.map((s) => s.key)).toEqual(['slack']);
      expect(logger.lines.filter((l) => l.level === 'info').map((l) => l.msg)).toContainEqual(expect.stringMatching(/uploads\.yaml: .*'file': file part skipped \(format: binary\)/));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('names what it cannot send: other content types, bad encodings, required file parts', async () => {
    expect(await problems(withBody({ 'application/xml': { schema } }))).toContainEqual({ code: 'invalid_request_body', path: `${postAt}/content` });
    const form = (encoding: unknown, s: object = schema) => withBody({ 'application/x-www-form-urlencoded': { schema: s, encoding } });
    expect(await problems(form({ nope: { style: 'form' } }))).toContainEqual({ code: 'invalid_request_body', path: `${postAt}/content/application~1x-www-form-urlencoded/encoding/nope` });
    expect((await problems(form({ tags: { style: 'pipeDelimited' } }))).map((p) => p.path)).toContain(`${postAt}/content/application~1x-www-form-urlencoded/encoding/tags/style`);
    expect((await problems(form({ tags: { headers: { 'X-A': { schema: { type: 'string' } } } } }))).map((p) => p.path)).toContain(
      `${postAt}/content/application~1x-www-form-urlencoded/encoding/tags/headers`,
    );
    expect(await problems(form({ tags: { contentType: 'image/png' } }))).toContainEqual({ code: 'invalid_request_body', path: `${postAt}/content/application~1x-www-form-urlencoded/encoding/tags/contentType` });
    expect(await problems(form(undefined, { type: 'string' }))).toContainEqual({ code: 'invalid_request_body', path: `${postAt}/content/application~1x-www-form-urlencoded/schema/type` });
    const file = withBody({
      'multipart/form-data': { schema: { type: 'object', required: ['channel', 'file'], properties: { channel: { type: 'string' }, file: { type: 'string', format: 'binary' } } } },
    });
    expect(await problems(file)).toContainEqual({ code: 'invalid_request_body', path: `${postAt}/content/multipart~1form-data/schema/properties/file` });
  });
});
