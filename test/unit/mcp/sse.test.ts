// The CLI's Server-Sent Events parser: events split across chunks, CRLF split in two, comments.
import { describe, expect, it } from 'vitest';
import { parseSseBody, SseParser } from '../../../cli/mcp/sse.ts';

describe('SseParser', () => {
  it('yields the data of complete events only, across chunk boundaries', () => {
    const p = new SseParser();
    expect(p.push(': connected\nretry: 5000\n\nevent: message\nda')).toEqual([]);
    expect(p.push('ta: {"a":1}\n')).toEqual([]);
    expect(p.push('\n: keep-alive\n\n')).toEqual(['{"a":1}']);
  });

  it('joins multi-line data and handles CRLF split between chunks', () => {
    const p = new SseParser();
    expect(p.push('data: one\r')).toEqual([]);
    expect(p.push('\ndata:two\r\n\r')).toEqual([]);
    expect(p.push('\n')).toEqual(['one\ntwo']);
  });

  it('parses a whole body, including a last event without a blank line', () => {
    expect(parseSseBody('event: message\ndata: {"id":1}\n\ndata: {"id":2}')).toEqual(['{"id":1}', '{"id":2}']);
  });
});
