// How `gateway serve` writes its log: readable lines for a person at a terminal, JSON lines for
// everything else (a container's log collector, a file, a pipe). LOG_FORMAT decides when set.
export type LogFormat = 'json' | 'pretty';

/** The format for a stdout that is (or is not) a terminal, given LOG_FORMAT (undefined: unset). */
export function chooseLogFormat(stdoutIsTTY: boolean, configured: LogFormat | undefined): LogFormat {
  return configured ?? (stdoutIsTTY ? 'pretty' : 'json');
}
