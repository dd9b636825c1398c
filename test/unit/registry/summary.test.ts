import { describe, expect, it } from 'vitest';
import { plainSummary, renderSummary, summaryParams } from '../../../core/registry/summary.ts';

describe('renderSummary', () => {
  const t = 'Post to {channel}[ in thread {thread_ts}]';

  it('interpolates params', () => {
    expect(renderSummary(t, { channel: '#general', thread_ts: '123.4' })).toBe('Post to #general in thread 123.4');
  });

  it.each([undefined, null, ''])('drops an optional segment when its param is %j', (v) => {
    expect(renderSummary(t, { channel: '#general', thread_ts: v })).toBe('Post to #general');
  });

  it('drops a segment when any one of its params is absent', () => {
    expect(renderSummary('Move[ from {a} to {b}]', { a: 'x' })).toBe('Move');
    expect(renderSummary('Move[ from {a} to {b}]', { a: 'x', b: 'y' })).toBe('Move from x to y');
  });

  it('keeps literal segments without params', () => {
    expect(renderSummary('List [all] items', {})).toBe('List all items');
  });

  it('stringifies non-string values', () => {
    expect(renderSummary('{n} {b} {o} {a}', { n: 0, b: false, o: { k: 1 }, a: [1, 'x'] })).toBe('0 false {"k":1} [1,"x"]');
    expect(renderSummary('{d}', { d: new Date('2024-01-02T03:04:05Z') })).toBe('2024-01-02T03:04:05.000Z');
  });

  it('does not clamp long strings', () => {
    const long = 'x'.repeat(5000);
    expect(renderSummary('{v}', { v: long })).toBe(long);
  });

  it('keeps a missing required placeholder visible', () => {
    expect(renderSummary('Archive {channel}', {})).toBe('Archive {channel}');
  });

  it('handles nested and unbalanced brackets without crashing', () => {
    expect(renderSummary('A[ b {x}[ c {y}]]', { x: 1 })).toBe('A b 1');
    expect(renderSummary('A[ b {x}[ c {y}]]', { x: 1, y: 2 })).toBe('A b 1 c 2');
    expect(renderSummary('A[ b {x}[ c {y}]]', { y: 2 })).toBe('A');
    expect(renderSummary('open [ {x} never closed', { x: 1 })).toBe('open [ 1 never closed');
    expect(renderSummary('close ] {x}', { x: 1 })).toBe('close ] 1');
    expect(renderSummary('brace { {x}', { x: 1 })).toBe('brace { 1');
    expect(renderSummary('{unclosed', {})).toBe('{unclosed');
  });

  it('ignores inherited properties', () => {
    expect(renderSummary('x[ {constructor}]', {})).toBe('x');
  });

  it('lists referenced params', () => {
    expect(summaryParams(t)).toEqual(['channel', 'thread_ts']);
  });
});

describe('plainSummary (listings and search, before any params are known)', () => {
  it('drops optional segments and names required placeholders plainly', () => {
    expect(plainSummary('List repositories of the authenticated user[ (visibility {visibility})]')).toBe('List repositories of the authenticated user');
    expect(plainSummary('Post to {channel}[ in thread {thread_ts}]')).toBe('Post to <channel>');
    expect(plainSummary('Get {owner}/{repo}[ at {ref}]')).toBe('Get <owner>/<repo>');
    expect(plainSummary('Static text[ always kept]')).toBe('Static text always kept');
  });
});
