// pino JSON logs. Redaction is a safety net: code must not log secrets in the first place.
import { pino, type Logger, type DestinationStream } from 'pino';

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

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    // stdout by default, written asynchronously: the event loop never waits on a log line's write,
    // and lines queued while one is written go out together (flushed on exit by pino).
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
