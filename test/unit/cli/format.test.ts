import { describe, expect, it } from 'vitest';
import { actionParams, parseHeader, parseParam, rawBody } from '../../../cli/lib/call-input.ts';
import { chainPaths } from '../../../cli/lib/identities.ts';
import { clip, clock, csvField, duration, expiresIn, parseDuration, table } from '../../../cli/lib/format.ts';
import { settled, type Approval } from '../../../cli/lib/follow.ts';

const noRead = async () => {
  throw new Error('nothing to read');
};

describe('CLI formatting', () => {
  it('aligns table columns, ignoring colour codes', () => {
    expect(table(['A', 'BB'], [['\x1b[31mxyz\x1b[39m', '1'], ['q', '22']])).toBe('A    BB\n\x1b[31mxyz\x1b[39m  1\nq    22');
  });
  it('formats durations, countdowns and expiry', () => {
    expect(duration(0)).toBe('0s');
    expect(duration(75_000)).toBe('1m 15s');
    expect(duration(3_700_000)).toBe('1h 1m');
    expect(duration(2 * 86_400_000)).toBe('2d 0h');
    expect(clock(14 * 60_000 + 5_000)).toBe('14:05');
    expect(clock(3_723_000)).toBe('1:02:03');
    expect(expiresIn(new Date(1_000).toISOString(), 2_000)).toBe('expired');
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('90')).toBe(90_000);
    expect(parseDuration('soon')).toBeNull();
    expect(clip('abcdef', 4)).toBe('abc…');
    expect(csvField('a,"b"')).toBe('"a,""b"""');
    expect(csvField(['k1', 'k2'])).toBe('"[""k1"",""k2""]"');
  });
  it('names identities by their chain', () => {
    const base = { org_id: 'o', user_id: 'u', status: 'active' as const, created_at: '2026-01-01T00:00:00Z' };
    const paths = chainPaths([
      { ...base, id: 'u', kind: 'user', name: 'ada', parent_id: null },
      { ...base, id: 'a', kind: 'agent', name: 'assistant', parent_id: 'u' },
      { ...base, id: 's', kind: 'subagent', name: 'helper', parent_id: 'a' },
    ]);
    expect(paths.get('s')).toBe('ada › assistant › helper');
  });
});

describe('call input', () => {
  it('reads -p key=value as strings and key:=json as JSON, over --params', async () => {
    expect(parseParam('id=42')).toEqual(['id', '42']);
    expect(parseParam('n:=42')).toEqual(['n', 42]);
    expect(parseParam('q=a=b')).toEqual(['q', 'a=b']);
    expect(() => parseParam('nothing')).toThrow(/key=value/);
    expect(() => parseParam('x:={')).toThrow(/JSON value/);
    expect(await actionParams({ params: '{"a":1,"b":2}', param: ['b=x'] }, noRead)).toEqual({ a: 1, b: 'x' });
    await expect(actionParams({ params: '[1]', param: [] }, noRead)).rejects.toThrow(/JSON object/);
  });
  it('builds raw HTTP bodies like curl (-d makes POST) with one injected secret', async () => {
    expect(parseHeader('X-Trace: t1')).toEqual(['X-Trace', 't1']);
    expect(() => parseHeader('bad header')).toThrow();
    expect(await rawBody({ url: 'https://api.example.com/x', header: ['A: 1'], data: '{"k":1}', secret: ['TOKEN'] }, noRead)).toEqual({
      service: 'http',
      method: 'POST',
      path: 'https://api.example.com/x',
      headers: { A: '1' },
      body: { k: 1 },
      secret: { name: 'TOKEN', in: 'header', param: 'Authorization', prefix: 'Bearer ' },
    });
    expect(await rawBody({ url: 'https://api.example.com/x', header: [], secret: ['K'], secretIn: 'query', secretParam: 'api_key' }, noRead)).toMatchObject({
      method: 'GET',
      secret: { name: 'K', in: 'query', param: 'api_key' },
    });
    await expect(rawBody({ url: 'ftp://x', header: [], secret: [] }, noRead)).rejects.toThrow(/http/);
    await expect(rawBody({ url: 'https://x.test', header: [], secret: ['A', 'B'] }, noRead)).rejects.toThrow(/one secret/);
    await expect(rawBody({ url: 'https://x.test', header: [], secret: ['A'], secretIn: 'query' }, noRead)).rejects.toThrow(/--secret-param/);
  });
});

describe('following an approval', () => {
  const a = (over: Partial<Approval>): Approval => ({ status: 'pending', auto_call_on_approve: true, ...over }) as Approval;
  it('waits while a person must act or the replay runs, and ends otherwise', () => {
    expect(settled(a({}))).toBeNull();
    expect(settled(a({ status: 'bubbled' }))).toBeNull();
    expect(settled(a({ status: 'allowed', execution: { id: 'e', status: 'executing', runtime: 'http' } }))).toBeNull();
    expect(settled(a({ status: 'allowed', execution: { id: 'e', status: 'executed', runtime: 'http' } }))?.kind).toBe('ready');
    expect(settled(a({ status: 'allowed', auto_call_on_approve: false, execution: { id: 'e', status: 'pending', runtime: 'http' } }))?.kind).toBe('ready');
    expect(settled(a({ status: 'denied' }))?.kind).toBe('denied');
    expect(settled(a({ status: 'expired' }))?.kind).toBe('ended');
  });
});
