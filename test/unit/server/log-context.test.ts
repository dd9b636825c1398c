// Log lines written while handling a call name it (server/telemetry/log-context.ts): in a
// request's scope once the call is named, and in every activity whose input names a call.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../server/logger.ts';
import { inCallScope, nameCall } from '../../../server/telemetry/log-context.ts';
import { callIdOf, inCallScopes } from '../../../activities/call-scope.ts';
import { tracesUrl } from '../../../server/telemetry/tracing.ts';

function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

describe('call scope on log lines', () => {
  it('a request scope names its call from the moment the call id is known, and only inside it', async () => {
    const { logger, lines } = capturedLogger();
    await inCallScope(async () => {
      logger.info('before the id');
      nameCall('call-1');
      await new Promise((r) => setTimeout(r, 1));
      logger.child({ request_id: 'r' }).info('after, through a child logger and an await');
    });
    logger.info('outside');
    nameCall('call-2'); // no scope here: names nothing
    logger.info('still outside');
    expect(lines.map((l) => [l.msg, l.call_id])).toEqual([
      ['before the id', undefined],
      ['after, through a child logger and an await', 'call-1'],
      ['outside', undefined],
      ['still outside', undefined],
    ]);
    // Tracing is off in this process: no trace fields.
    expect(lines.some((l) => 'trace_id' in l)).toBe(false);
  });

  it('every activity runs in the scope of the call its input names; a field the line sets itself wins', async () => {
    const { logger, lines } = capturedLogger();
    const activities = inCallScopes({
      async step(_input: unknown) {
        logger.info('step');
        return 'done';
      },
      async other(_input: unknown) {
        logger.info({ call_id: 'explicit' }, 'other');
      },
    });
    expect(await activities.step({ spec: { callId: 'call-a' } })).toBe('done');
    await activities.step({ step: { spec: { callId: 'call-b' } } });
    await activities.step({ approvalId: 'no call named' });
    await activities.other({ callId: 'call-c' });
    expect(lines.map((l) => l.call_id)).toEqual(['call-a', 'call-b', undefined, 'explicit']);
  });

  it('reads the call id from the inputs activities take, nothing else', () => {
    expect(callIdOf({ spec: { callId: 'a' } })).toBe('a');
    expect(callIdOf({ callId: 'b' })).toBe('b');
    expect(callIdOf({ decision: {}, step: { spec: { callId: 'c' } } })).toBe('c');
    expect(callIdOf({ callId: 7 })).toBeUndefined();
    expect(callIdOf(null)).toBeUndefined();
    expect(callIdOf('call')).toBeUndefined();
  });
});

describe('tracesUrl', () => {
  it('appends the traces path to the OTLP base endpoint, with or without a trailing slash or a path', () => {
    expect(tracesUrl('http://collector:4318')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('http://collector:4318/')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('https://otel.example.com/otlp')).toBe('https://otel.example.com/otlp/v1/traces');
  });
});
