// pino logs: JSON lines, or readable ones for a terminal (log-format.ts). Redaction is a safety
// net: code must not log secrets in the first place.
import { pino, type Logger, type DestinationStream } from 'pino';
import pinoPretty from 'pino-pretty';
import type { LogFormat } from './log-format.ts';
import { logFields } from './telemetry/log-context.ts';

export type { Logger };

const REDACT_PATHS = [
  'password',
  '*.password',
  'secret',
  '*.secret',
  'token',
  '*.token',
  'access_token',
  '*.access_token',
  'refresh_token',
  '*.refresh_token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
  'plaintext',
  '*.plaintext',
  'value',
  'masterKey',
];

/**
 * `format` 'pretty': lines a person reads (time, level, message, then the fields), coloured, on
 * stdout; redaction applies before either format sees a line.
 */
export function createLogger(level: string, destination?: DestinationStream, format: LogFormat = 'json'): Logger {
  destination ??= format === 'pretty' ? prettyStdout() : undefined;
  return pino(
    {
      level,
      base: { service: 'gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      formatters: { level: (label) => ({ level: label }) },
      // The call a line was written for, and its trace when tracing is on.
      mixin: logFields,
    },
    // stdout by default, written asynchronously: the event loop never waits on a log line's write,
    // and lines queued while one is written go out together (flushed on exit by pino).
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/** Readable lines on stdout, written synchronously (a terminal, where a person waits for them). */
function prettyStdout(): DestinationStream {
  return pinoPretty({
    colorize: true,
    translateTime: 'SYS:HH:MM:ss',
    // Fields every line carries and a person does not need to read each time.
    ignore: 'pid,hostname,service',
    singleLine: false,
    sync: true,
  });
}
