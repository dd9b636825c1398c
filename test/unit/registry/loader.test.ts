import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jqCompileError, jqCompileErrors, runJq } from '../../../server/registry/jq.ts';
import { loadServiceDirectories, loadServiceDocument } from '../../../server/registry/loader.ts';
import { memoryLogger, validDoc } from './fixtures.ts';

function githubDoc() {
  const d = validDoc();
  d.info.key = 'github';
  d.info.title = 'GitHub';
  d.servers = [{ url: 'https://api.github.com' }];
  return d;
}

describe('loadServiceDirectories', () => {
  let dir: string;
  let other: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'registry-'));
    other = await mkdtemp(path.join(tmpdir(), 'registry-other-'));
    const badJq = validDoc();
    badJq.info.key = 'badjq';
    badJq.paths['/chat.postMessage'].post.disclose = [{ label: 'Text', filter: '.body | foo(' }];
    await writeFile(path.join(dir, 'a-slack.yaml'), stringify(validDoc()));
    await writeFile(path.join(dir, 'b-github.yml'), stringify(githubDoc()));
    await writeFile(path.join(dir, 'c-broken.yaml'), 'openapi: 3.1.0\ninfo: [unclosed\n');
    await writeFile(path.join(dir, 'd-badjq.yaml'), stringify(badJq));
    await writeFile(path.join(dir, 'notes.txt'), 'not a service');
    await mkdir(path.join(dir, 'nested'));
    await writeFile(path.join(dir, 'nested', 'x.yaml'), stringify({ ...validDoc(), info: { ...validDoc().info, key: 'nested' } }));
    await writeFile(path.join(other, 'slack-again.yaml'), stringify(validDoc()));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await rm(other, { recursive: true, force: true });
  });

  it('loads the good files and logs "skipping <file>" for each bad one', async () => {
    const logger = memoryLogger();
    const { services, errors } = await loadServiceDirectories([dir, other, path.join(dir, 'missing')], logger);
    expect(services.map((s) => s.key)).toEqual(['slack', 'github']);
    expect(services[0]?.source).toBe(path.join(dir, 'a-slack.yaml'));

    const byFile = Object.fromEntries(errors.map((e) => [path.basename(e.file), e.problems.map((p) => p.code)]));
    expect(byFile).toEqual({
      'c-broken.yaml': expect.arrayContaining(['parse_error']),
      'd-badjq.yaml': ['invalid_jq_filter'],
      'slack-again.yaml': ['duplicate_service_key'],
      missing: ['unreadable_file'],
    });

    const skipped = logger.lines.filter((l) => l.level === 'error');
    expect(skipped).toHaveLength(4);
    for (const file of ['c-broken.yaml', 'd-badjq.yaml', 'slack-again.yaml']) {
      expect(skipped.some((l) => l.msg.startsWith('skipping ') && l.msg.includes(file))).toBe(true);
    }
    expect(skipped.find((l) => l.msg.includes('d-badjq.yaml'))?.obj).toMatchObject({ file: path.join(dir, 'd-badjq.yaml') });
  });

  it('works with a real pino logger', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(s) });
    const { services } = await loadServiceDirectories([dir], logger);
    expect(services).toHaveLength(2);
    const records = lines.map((l) => JSON.parse(l) as { msg: string; file?: string; level: number });
    expect(records.some((r) => r.level === 50 && r.msg.includes('skipping') && r.msg.includes('c-broken.yaml'))).toBe(true);
  });
});

describe('loadServiceDocument', () => {
  it('loads YAML text and objects', async () => {
    const fromText = await loadServiceDocument(stringify(validDoc()), 'org:1');
    const fromObject = await loadServiceDocument(validDoc(), 'org:1');
    expect(fromText.ok && fromText.service.key).toBe('slack');
    expect(fromObject).toEqual(fromText);
  });

  it('lists every problem of a bad document', async () => {
    const d = validDoc();
    d.info.key = 'Bad Key';
    d.paths['/chat.postMessage'].post.risk = 'huge';
    d.paths['/chat.postMessage'].post.redact = ['a..b'];
    d.paths['/chat.postMessage'].post.disclose = [{ label: 'x', filter: '.[' }];
    d.paths['/chat.postMessage'].post.bogus = true;
    const r = await loadServiceDocument(d, 'x');
    expect(r.ok).toBe(false);
    const codes = r.ok ? [] : r.problems.map((p) => p.code);
    expect(codes).toEqual(expect.arrayContaining(['invalid_openapi', 'invalid_key', 'invalid_risk', 'invalid_redact', 'invalid_jq_filter']));
  });

  it('reports YAML errors, duplicate keys and non-mapping roots', async () => {
    const dup = await loadServiceDocument('openapi: 3.1.0\nopenapi: 3.1.0\n', 'x');
    expect(dup.ok ? [] : dup.problems.map((p) => p.code)).toEqual(['parse_error']);
    const list = await loadServiceDocument('- a\n- b\n', 'x');
    expect(list.ok ? [] : list.problems.map((p) => p.code)).toEqual(['invalid_document']);
    // "billion laughs": each anchor repeats the previous one ten times
    const letters = 'abcdefghi';
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let k = 1; k < letters.length; k++) lines.push(`${letters[k]}: &${letters[k]} [${Array(10).fill(`*${letters[k - 1]}`).join(', ')}]`);
    const bomb = lines.join('\n');
    const exploded = await loadServiceDocument(bomb, 'x');
    expect(exploded.ok ? [] : exploded.problems.map((p) => p.code)).toEqual(['parse_error']);
    const empty = await loadServiceDocument('', 'x');
    expect(empty.ok).toBe(false);
  });

  it('never fetches external $refs', async () => {
    const d = validDoc();
    d.paths['/conversations/{channel}'].get.parameters.push({ $ref: 'file:///etc/passwd' });
    const r = await loadServiceDocument(d, 'x');
    expect(r.ok).toBe(false);
    expect(r.ok ? [] : r.problems.map((p) => p.code)).toContain('unresolved_ref');
  });

  it('accepts a document without paths', async () => {
    const d = validDoc();
    delete d.paths;
    const r = await loadServiceDocument(d, 'x');
    expect(r.ok && r.service.actions.size).toBe(0);
  });
});

describe('jqCompileError', () => {
  it('accepts valid filters without running them', async () => {
    for (const f of ['.body.text', '.params | {a: .x}', 'def f: .; f', 'repeat(1)', 'error("x")', '.a # comment']) {
      expect(await jqCompileError(f)).toBeUndefined();
    }
  });

  it('rejects filters that do not compile, including ones escaping the wrapper', async () => {
    for (const f of ['.[', 'foo(', '$nope', '.) | (.', '.] | [.']) {
      expect(await jqCompileError(f)).toEqual(expect.any(String));
    }
  });

  it('checks many filters at once and pinpoints the bad ones', async () => {
    expect(await jqCompileErrors([])).toEqual([]);
    expect(await jqCompileErrors(['.a', 'def f: .; f', '.b'])).toEqual([undefined, undefined, undefined]);
    const mixed = await jqCompileErrors(['.a', '.) , (.', '.b', 'foo(']);
    expect(mixed.map((e) => e !== undefined)).toEqual([false, true, false, true]);
  });

  it('keeps working after many failures and leaves process.exitCode alone', async () => {
    const before = process.exitCode;
    for (let i = 0; i < 30; i++) expect(await jqCompileError(`Rkl</${i}`)).toEqual(expect.any(String));
    await expect(runJq('{"a":1}', '.a | error("boom")')).rejects.toThrow(/boom/);
    expect(process.exitCode).toBe(before);
    expect(await jqCompileError('.body.text')).toBeUndefined();
    expect(await runJq('{"body":{"text":"hi"}}', '.body.text', ['-c'])).toBe('"hi"');
  });

  it('survives more calls than one jq-wasm instance can take', async () => {
    // A single instance aborts after ~250-315 calls, sooner with long filters.
    const long = '.' + Array.from({ length: 150 }, (_, i) => `a${i}`).join('.');
    for (let i = 0; i < 400; i++) expect(await jqCompileError(i % 2 ? long : `.body.f${i}`)).toBeUndefined();
  }, 60_000); // 400 WebAssembly compiles: seconds on a busy 2-core machine
});
