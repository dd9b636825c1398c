// Writing to a long-lived stream (server-sent events) whose client may stop reading. Node keeps
// whatever the socket does not take in memory, without bound: one idle tab, or a client that
// opens streams and never reads them, would make every event grow the process. Past a bound of
// unsent bytes the stream ends instead; its client reconnects and resumes from its last event id
// (the dashboard's stream replays what it missed, or says to refetch).
import type { ServerResponse } from 'node:http';

/** Unsent bytes one stream may hold: hundreds of events, far more than a reading client lags. */
export const MAX_UNSENT_BYTES = 1024 * 1024;

/** Writes `chunk`, unless the stream would then hold more than `max` unsent bytes: then `end()`. */
export function writeOrEnd(res: ServerResponse, chunk: string, end: () => void, max = MAX_UNSENT_BYTES): boolean {
  if (res.writableEnded) return false;
  if (res.writableLength + Buffer.byteLength(chunk) > max) {
    end();
    return false;
  }
  res.write(chunk);
  return true;
}
