// The log format is a pure choice of (is stdout a terminal, LOG_FORMAT): tested here for every
// combination; a real `gateway serve`'s lines are checked in test/integration/logs.test.ts.
import { describe, expect, it } from 'vitest';
import { chooseLogFormat } from '../../../server/log-format.ts';
import { isHealthPoll } from '../../../server/http/request-context.ts';

describe('log format', () => {
  it.each([
    [true, undefined, 'pretty'],
    [false, undefined, 'json'],
    [true, 'json', 'json'],
    [false, 'json', 'json'],
    [false, 'pretty', 'pretty'],
    [true, 'pretty', 'pretty'],
  ] as const)('a terminal: %s, LOG_FORMAT=%s → %s', (tty, configured, expected) => {
    expect(chooseLogFormat(tty, configured)).toBe(expected);
  });

  it('treats only /healthz and /readyz as health polls', () => {
    expect(isHealthPoll('/healthz')).toBe(true);
    expect(isHealthPoll('/readyz')).toBe(true);
    expect(isHealthPoll('/readyz/extra')).toBe(false);
    expect(isHealthPoll('/v1/calls')).toBe(false);
  });
});
